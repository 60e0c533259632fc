// WordPiece: greedy longest-match-first splitting of one word into vocabulary
// pieces, continuation pieces carrying a "##" prefix. A word longer than
// max_input_chars_per_word code points, or one with a remainder no piece
// matches, becomes the unknown token as a whole. A piece is never longer than
// the vocabulary's longest token, so the search costs at most that many
// candidates per piece: linear in the word's length, for a given vocabulary.
#pragma once

#include <string>
#include <vector>

#include "hearth/data/tokenizer/vocab.h"

namespace hearth::data {

// The most max_input_chars_per_word may be (Hugging Face's default is 100):
// longer words become the unknown token rather than being searched.
inline constexpr size_t kMaxInputCharsPerWord = 10000;

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;
};

// Appends the pieces of `word` (UTF-8, no whitespace) to `out`.
void wordpiece_split(const std::string& word, const Vocab& vocab, const WordPieceOptions& options,
                     std::vector<std::string>& out);

}  // namespace hearth::data
