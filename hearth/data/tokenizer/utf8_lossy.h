// UTF-8 checking and repair as Rust's String::from_utf8_lossy and Python's
// bytes.decode(errors="replace") do it: each maximal invalid subsequence (the
// longest prefix of a well-formed sequence that is cut short, or else one
// bad byte) becomes one U+FFFD. Hugging Face's decoders repair their output
// this way, so hearth's must too to give the same text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hearth::data::utf8 {

// The length of the well-formed UTF-8 sequence at text[i], or 0 when the bytes
// there do not start one.
size_t valid_sequence_length(std::string_view text, size_t i);
// The length of the maximal invalid subsequence at text[i] (at least 1), when
// valid_sequence_length(text, i) is 0.
size_t invalid_subsequence_length(std::string_view text, size_t i);

bool is_valid(std::string_view text);
// `text` with every maximal invalid subsequence replaced by U+FFFD.
std::string repair(std::string_view text);

// The code point of the well-formed sequence at text[i] of length `length`.
char32_t code_point_at(std::string_view text, size_t i, size_t length);
void append_code_point(char32_t c, std::string& out);

}  // namespace hearth::data::utf8
