// The BPE model of a Hugging Face tokenizer.json: a piece of text (one
// pre-tokenized word) starts as one token per character and the ranked merges
// are applied, lowest rank first, until none applies. As Hugging Face does it:
// pairs wait in a min-heap ordered by (rank, position) and a symbol list is
// linked both ways, so a word of n characters takes O(n log n), and a
// 1 MB word without spaces takes a fraction of a second, not minutes.
// Words already seen are answered from a cache.
//
// A character that is not in the vocabulary becomes its "<0xNN>" byte tokens
// when byte_fallback is on (Llama 2), else the unknown token when there is
// one (runs of them fused into one when fuse_unk), else it is dropped.
// With ignore_merges (Llama 3), a word that is itself in the vocabulary is
// that one token, whatever the merges would have made of it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hearth::data {

struct BpeOptions {
  std::optional<std::string> unk_token;
  std::optional<std::string> continuing_subword_prefix;
  std::optional<std::string> end_of_word_suffix;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;
};

class BpeModel {
 public:
  // `vocab[i]` is the token of id i; `merges` in rank order, each a pair of
  // tokens whose concatenation (less the second's continuing_subword_prefix)
  // is in the vocabulary. `where` names the file in messages. Throws
  // ValueError for a repeated token, a merge naming a token not in the
  // vocabulary, or an unknown token missing from it.
  BpeModel(std::vector<std::string> vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           BpeOptions options, const std::string& where);

  // Appends the ids of `word` (not empty).
  void tokenize(std::string_view word, std::vector<int64_t>& out) const;

  int64_t size() const { return static_cast<int64_t>(vocab_.size()); }
  std::optional<int64_t> find(std::string_view token) const;
  const std::string& token(int64_t id) const { return vocab_[static_cast<size_t>(id)]; }
  const BpeOptions& options() const { return options_; }
  int64_t merge_count() const { return static_cast<int64_t>(merges_.size()); }

 private:
  struct Merge {
    int32_t rank;
    int32_t new_id;
  };
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Cache;

  static uint64_t pair_key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  // The merges applied to the characters of `word`.
  void merge_word(std::string_view word, std::vector<int32_t>& out) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
  std::unordered_map<uint64_t, Merge> merges_;
  BpeOptions options_;
  std::optional<int32_t> unk_id_;
  int32_t byte_ids_[256] = {};  // "<0xNN>" ids, -1 where absent
  bool all_byte_ids_ = false;
  std::shared_ptr<Cache> cache_;
};

}  // namespace hearth::data
