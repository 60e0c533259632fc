#include "hearth/data/tokenizer/vocab.h"

#include <algorithm>
#include <fstream>

#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"

namespace hearth::data {

Vocab::Vocab(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  ids_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) {
    ids_[tokens_[i]] = static_cast<int64_t>(i);
    longest_token_bytes_ = std::max(longest_token_bytes_, tokens_[i].size());
  }
}

Vocab Vocab::from_vocab_txt(const std::string& path) {
  io::check_regular_file(path, "[tokenizer]");
  std::ifstream in(path, std::ios::binary);
  HEARTH_CHECK(in.good(), IoError, "[tokenizer] cannot read the vocabulary file '", path, "'");
  std::vector<std::string> tokens;
  std::string line;
  // Only the newline ends a token, as in Hugging Face's reader: a token may
  // hold any other character, trailing spaces included.
  while (std::getline(in, line, '\n')) tokens.push_back(line);
  HEARTH_CHECK(!tokens.empty(), IoError, "[tokenizer] ", path, ": the vocabulary file is empty");
  return Vocab(std::move(tokens));
}

std::optional<int64_t> Vocab::find(const std::string& token) const {
  auto it = ids_.find(token);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

int64_t Vocab::id(const std::string& token) const {
  auto it = ids_.find(token);
  HEARTH_CHECK(it != ids_.end(), ValueError, "[tokenizer] the token '", token, "' is not in the vocabulary (",
               tokens_.size(), " tokens)");
  return it->second;
}

const std::string& Vocab::token(int64_t id) const {
  HEARTH_CHECK(id >= 0 && id < size(), ValueError, "[tokenizer] token id ", id, " is out of range for a vocabulary of ",
               size(), " tokens");
  return tokens_[static_cast<size_t>(id)];
}

}  // namespace hearth::data
