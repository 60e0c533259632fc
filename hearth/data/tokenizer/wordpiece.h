// WordPiece: greedy longest-match-first splitting of one word into vocabulary
// pieces, continuation pieces carrying a "##" prefix. A word longer than
// max_input_chars_per_word code points, or one with a remainder no piece
// matches, becomes the unknown token as a whole.
#pragma once

#include <string>
#include <vector>

#include "hearth/data/tokenizer/vocab.h"

namespace hearth::data {

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;
};

// Appends the pieces of `word` (UTF-8, no whitespace) to `out`.
void wordpiece_split(const std::string& word, const Vocab& vocab, const WordPieceOptions& options,
                     std::vector<std::string>& out);

}  // namespace hearth::data
