#include "hearth/data/tokenizer/bpe_tokenizer.h"

#include "hearth/core/errors.h"
#include "hearth/data/tokenizer/utf8_lossy.h"
#include "hearth/io/json_limits.h"

namespace hearth::data {
namespace {

// How long normalizing or decoding may make a text: the components of real
// files at most triple it (" " -> "▁") and add a prefix; a hostile file
// that grows it without end is stopped here.
size_t growth_limit(size_t bytes) { return 64 * bytes + 4096; }

}  // namespace

BpeTokenizer::BpeTokenizer(BpeTokenizerParts parts) : parts_(std::move(parts)) {
  HEARTH_CHECK(parts_.model != nullptr, ValueError, "[tokenizer] ", parts_.source, ": no BPE model");
  const BpeModel& model = *parts_.model;
  tokens_.reserve(static_cast<size_t>(model.size()) + parts_.added_tokens.size());
  for (int64_t id = 0; id < model.size(); ++id) tokens_.push_back(model.token(id));
  special_.assign(tokens_.size(), false);

  std::vector<std::string> raw_patterns, normalized_patterns;
  std::vector<AddedToken> raw_tokens, normalized_tokens;
  for (const AddedToken& t : parts_.added_tokens) {
    HEARTH_CHECK(t.id >= 0 && t.id <= static_cast<int64_t>(tokens_.size()), ValueError, "[tokenizer] ", parts_.source,
                 ": the added token '", io::excerpt(t.content, 60), "' has id ", t.id,
                 ", expected one of the vocabulary's or the next after them (", tokens_.size(), ")");
    // A normalized token is looked for as the normalizer rewrites it, and
    // decodes to that form too, so that the decoder undoes the rewriting.
    std::string form = t.content;
    if (t.normalized && parts_.normalizer)
      HEARTH_CHECK(parts_.normalizer->apply(form, growth_limit(form.size())), ValueError, "[tokenizer] ",
                   parts_.source, ": the normalizer makes the added token '", io::excerpt(t.content, 60),
                   "' more than 64 times longer");
    if (t.id == static_cast<int64_t>(tokens_.size())) {
      tokens_.push_back(form);
      special_.push_back(false);
    } else {
      tokens_[static_cast<size_t>(t.id)] = form;
    }
    if (t.special) special_[static_cast<size_t>(t.id)] = true;
    added_ids_[t.content] = t.id;
    (t.normalized ? normalized_patterns : raw_patterns).push_back(form);
    (t.normalized ? normalized_tokens : raw_tokens).push_back(t);
  }
  raw_matcher_ = AddedTokenMatcher(raw_patterns, raw_tokens);
  normalized_matcher_ = AddedTokenMatcher(normalized_patterns, normalized_tokens);
}

void BpeTokenizer::set_special_token_ids(std::optional<int64_t> bos, std::optional<int64_t> eos,
                                         std::optional<int64_t> pad, std::optional<int64_t> unk) {
  bos_id_ = bos;
  eos_id_ = eos;
  pad_id_ = pad;
  unk_id_ = unk;
}

void BpeTokenizer::encode_segment(std::string text, bool starts_input, std::vector<int64_t>& ids) const {
  if (parts_.normalizer) {
    const size_t before = text.size();
    HEARTH_CHECK(parts_.normalizer->apply(text, growth_limit(before)), ValueError, "[tokenizer] ", parts_.source,
                 ": the normalizer makes ", before, " bytes of text more than 64 times longer");
  }
  if (text.empty()) return;
  std::vector<TextPiece> pieces;
  auto tokenize_pieces = [&] {
    if (parts_.pre_tokenizer) parts_.pre_tokenizer->apply(pieces);
    for (const TextPiece& p : pieces) parts_.model->tokenize(p.text, ids);
    pieces.clear();
  };
  if (normalized_matcher_.empty()) {
    pieces.push_back({std::move(text), starts_input});
    tokenize_pieces();
    return;
  }
  for (const AddedTokenSpan& span : normalized_matcher_.split(text)) {
    if (span.id) {
      ids.push_back(*span.id);
      continue;
    }
    pieces.push_back({text.substr(span.begin, span.end - span.begin), starts_input && span.begin == 0});
    tokenize_pieces();
  }
}

std::vector<int64_t> BpeTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  const std::string repaired = utf8::is_valid(text) ? std::string(text) : utf8::repair(text);
  std::vector<int64_t> ids;
  ids.reserve(repaired.size() / 3 + 4);
  if (raw_matcher_.empty()) {
    if (!repaired.empty()) encode_segment(repaired, true, ids);
  } else {
    for (const AddedTokenSpan& span : raw_matcher_.split(repaired)) {
      if (span.id) {
        ids.push_back(*span.id);
      } else {
        encode_segment(repaired.substr(span.begin, span.end - span.begin), span.begin == 0, ids);
      }
    }
  }
  if (parts_.post_processor) parts_.post_processor->process(ids, add_special_tokens);
  return ids;
}

std::string BpeTokenizer::decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    if (skip_special_tokens && special_[static_cast<size_t>(id)]) continue;
    tokens.push_back(tokens_[static_cast<size_t>(id)]);
  }
  if (!parts_.decoder) {
    std::string joined;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) joined.push_back(' ');
      joined.append(tokens[i]);
    }
    return joined;
  }
  size_t bytes = 0;
  for (const std::string& t : tokens) bytes += t.size();
  HEARTH_CHECK(parts_.decoder->decode_chain(tokens, growth_limit(bytes)), ValueError, "[tokenizer] ", parts_.source,
               ": the decoder makes the text of ", ids.size(), " ids more than 64 times longer");
  std::string out;
  for (const std::string& t : tokens) out.append(t);
  return out;
}

std::optional<int64_t> BpeTokenizer::token_to_id(std::string_view token) const {
  if (auto it = added_ids_.find(std::string(token)); it != added_ids_.end()) return it->second;
  return parts_.model->find(token);
}

std::optional<std::string> BpeTokenizer::id_to_token(int64_t id) const {
  if (id < 0 || id >= vocab_size()) return std::nullopt;
  return tokens_[static_cast<size_t>(id)];
}

int64_t BpeTokenizer::id_of(std::string_view token) const {
  std::optional<int64_t> id = token_to_id(token);
  HEARTH_CHECK(id.has_value(), ValueError, "[tokenizer] ", parts_.source, ": the token '", io::excerpt(token, 60),
               "' is not in the vocabulary (", vocab_size(), " tokens)");
  return *id;
}

bool BpeTokenizer::is_special(int64_t id) const {
  return id >= 0 && id < vocab_size() && special_[static_cast<size_t>(id)];
}

}  // namespace hearth::data
