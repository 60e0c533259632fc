#include "hearth/data/tokenizer/bpe_model.h"

#include <array>
#include <cstdio>
#include <mutex>
#include <queue>
#include <utility>

#include "hearth/core/errors.h"
#include "hearth/data/tokenizer/utf8_lossy.h"
#include "hearth/io/json_limits.h"

namespace hearth::data {

// Words already tokenized, shared by copies of the model and by threads: a
// fixed number of shards, each with its own lock, so threads encoding at
// once rarely wait on each other. Only short words are kept (long ones are
// rare and would crowd out the rest), and a full shard is emptied.
struct BpeModel::Cache {
  static constexpr size_t kShards = 64;
  static constexpr size_t kMaxEntriesPerShard = 4096;
  static constexpr size_t kMaxWordBytes = 256;
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> words;
  };
  std::array<Shard, kShards> shards;

  Shard& shard(std::string_view word) { return shards[StringHash{}(word) % kShards]; }
};

namespace {

std::string byte_token(unsigned b) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "<0x%02X>", b);
  return buffer;
}

}  // namespace

BpeModel::BpeModel(std::vector<std::string> vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options, const std::string& where)
    : vocab_(std::move(vocab)), options_(std::move(options)), cache_(std::make_shared<Cache>()) {
  ids_.reserve(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) {
    const auto [it, inserted] = ids_.emplace(vocab_[i], static_cast<int32_t>(i));
    HEARTH_CHECK(inserted, ValueError, where, ": field 'model.vocab': the token '", io::excerpt(vocab_[i]),
                 "' has two ids, ", it->second, " and ", i);
  }
  const size_t prefix_len = options_.continuing_subword_prefix ? options_.continuing_subword_prefix->size() : 0;
  merges_.reserve(merges.size());
  std::string merged;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    // Named references, not a structured binding: clang 14 cannot capture one in the lambda.
    const std::string& a = merges[rank].first;
    const std::string& b = merges[rank].second;
    auto id_of = [&](const std::string& token, const char* role) {
      auto it = ids_.find(token);
      HEARTH_CHECK(it != ids_.end(), ValueError, where, ": field 'model.merges': merge ", rank, " ('",
                   io::excerpt(a, 60), "' + '", io::excerpt(b, 60), "'): its ", role, " '", io::excerpt(token, 60),
                   "' is not in the vocabulary");
      return it->second;
    };
    const int32_t a_id = id_of(a, "first token");
    const int32_t b_id = id_of(b, "second token");
    HEARTH_CHECK(b.size() >= prefix_len, ValueError, where, ": field 'model.merges': merge ", rank, " ('",
                 io::excerpt(a, 60), "' + '", io::excerpt(b, 60),
                 "'): the second token is shorter than the continuing_subword_prefix");
    merged.assign(a).append(b, prefix_len);
    const int32_t new_id = id_of(merged, "result");
    // A pair listed twice keeps its last rank, as Hugging Face's map does.
    merges_[pair_key(a_id, b_id)] = Merge{static_cast<int32_t>(rank), new_id};
  }
  if (options_.unk_token) {
    auto it = ids_.find(*options_.unk_token);
    HEARTH_CHECK(it != ids_.end(), ValueError, where, ": field 'model.unk_token': '", io::excerpt(*options_.unk_token),
                 "' is not in the vocabulary");
    unk_id_ = it->second;
  }
  all_byte_ids_ = true;
  for (unsigned b = 0; b < 256; ++b) {
    auto it = ids_.find(byte_token(b));
    byte_ids_[b] = it == ids_.end() ? -1 : it->second;
    all_byte_ids_ = all_byte_ids_ && byte_ids_[b] >= 0;
  }
}

std::optional<int64_t> BpeModel::find(std::string_view token) const {
  auto it = ids_.find(token);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  // The word's characters as symbols of a doubly linked list.
  struct Symbol {
    int32_t id;
    int32_t prev, next;
    bool alive;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add = [&](int32_t id) {
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, index - 1, index + 1, true});
  };

  std::optional<int32_t> pending_unk;  // an unknown token not yet added (so a run can be fused)
  std::string piece;
  for (size_t i = 0; i < word.size();) {
    size_t n = utf8::valid_sequence_length(word, i);
    if (n == 0) n = 1;  // cannot happen for repaired text; one byte keeps the loop going
    const bool first = i == 0, last = i + n >= word.size();
    piece.clear();
    if (!first && options_.continuing_subword_prefix) piece.append(*options_.continuing_subword_prefix);
    piece.append(word.substr(i, n));
    if (last && options_.end_of_word_suffix) piece.append(*options_.end_of_word_suffix);
    i += n;
    if (auto it = ids_.find(piece); it != ids_.end()) {
      if (pending_unk) add(*std::exchange(pending_unk, std::nullopt));
      add(it->second);
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (char c : piece) all = all && byte_ids_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        // As Hugging Face does, a pending unknown token stays pending across the bytes.
        for (char c : piece) add(byte_ids_[static_cast<unsigned char>(c)]);
        continue;
      }
    }
    if (unk_id_) {
      if (pending_unk && !options_.fuse_unk) add(*pending_unk);
      pending_unk = *unk_id_;
    }
  }
  if (pending_unk) add(*pending_unk);
  if (symbols.empty()) return;
  symbols.back().next = -1;

  // Candidate merges, lowest rank first, then leftmost. An entry goes stale
  // when a neighbour merges first; it is checked when it comes up.
  struct Candidate {
    int32_t rank, pos, new_id;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::vector<Candidate> storage;
  storage.reserve(symbols.size());
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue(std::greater<>{}, std::move(storage));
  auto consider = [&](int32_t left) {
    const int32_t right = symbols[static_cast<size_t>(left)].next;
    if (right < 0) return;
    auto it = merges_.find(pair_key(symbols[static_cast<size_t>(left)].id, symbols[static_cast<size_t>(right)].id));
    if (it != merges_.end()) queue.push({it->second.rank, left, it->second.new_id});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) consider(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[static_cast<size_t>(top.pos)];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[static_cast<size_t>(left.next)];
    // Stale unless the pair there still merges into the same token (Hugging
    // Face checks the result, not the rank, and so does this).
    auto it = merges_.find(pair_key(left.id, right.id));
    if (it == merges_.end() || it->second.new_id != top.new_id) continue;
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = top.pos;
    if (left.prev >= 0) consider(left.prev);
    consider(top.pos);
  }
  for (const Symbol& s : symbols)
    if (s.alive) out.push_back(s.id);
}

void BpeModel::tokenize(std::string_view word, std::vector<int64_t>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (auto it = ids_.find(word); it != ids_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  const bool cacheable = word.size() < Cache::kMaxWordBytes;
  if (cacheable) {
    Cache::Shard& shard = cache_->shard(word);
    std::lock_guard<std::mutex> lock(shard.mutex);
    if (auto it = shard.words.find(word); it != shard.words.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  merge_word(word, ids);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    Cache::Shard& shard = cache_->shard(word);
    std::lock_guard<std::mutex> lock(shard.mutex);
    if (shard.words.size() >= Cache::kMaxEntriesPerShard) shard.words.clear();
    shard.words.emplace(std::string(word), std::move(ids));
  }
}

}  // namespace hearth::data
