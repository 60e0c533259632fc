// A WordPiece vocabulary: tokens and their ids, read from a vocab.txt (one
// token per line, the id is the line number from 0) or from the model.vocab
// object of a Hugging Face tokenizer.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace hearth::data {

class Vocab {
 public:
  Vocab() = default;
  // `tokens[i]` gets id i. A repeated token keeps its last id (as HF's loader does).
  explicit Vocab(std::vector<std::string> tokens);

  // IoError "[tokenizer] <path>: ..." when unreadable or empty.
  static Vocab from_vocab_txt(const std::string& path);

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  bool contains(const std::string& token) const { return ids_.count(token) != 0; }
  std::optional<int64_t> find(const std::string& token) const;
  // The length in bytes of the longest token: no longer piece of text can be
  // one, which bounds WordPiece's longest-match search.
  size_t longest_token_bytes() const { return longest_token_bytes_; }
  // ValueError naming the token when it is not in the vocabulary.
  int64_t id(const std::string& token) const;
  // ValueError when out of range.
  const std::string& token(int64_t id) const;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int64_t> ids_;
  size_t longest_token_bytes_ = 0;
};

}  // namespace hearth::data
