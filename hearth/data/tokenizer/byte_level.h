// GPT-2's byte-level alphabet: every byte 0-255 stands for one printable
// Unicode character, so a BPE vocabulary of strings covers any byte sequence
// with 256 base tokens and no unknown token. Bytes that print as themselves
// ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) keep their own code point; the
// other 68 (controls, space, DEL, NBSP, soft hyphen) take U+0100, U+0101, ...
// in byte order. So space is 'Ġ' (U+0120) and newline 'Ċ' (U+010A).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hearth::data::byte_level {

// The character that stands for `byte`.
char32_t byte_to_char(uint8_t byte);
// The byte `c` stands for, or nullopt when `c` is not in the alphabet.
std::optional<uint8_t> char_to_byte(char32_t c);

// Appends, for every byte of `bytes`, the UTF-8 of its character.
void append_encoded(std::string_view bytes, std::string& out);
std::string encode(std::string_view bytes);

// The bytes `token` stands for when each of its characters is in the
// alphabet; nullopt when one is not (or `token` is not valid UTF-8).
std::optional<std::string> decode_token(std::string_view token);

}  // namespace hearth::data::byte_level
