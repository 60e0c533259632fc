#include "hearth/data/tokenizer/bert_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_integer.h"
#include "hearth/io/json_limits.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json read_json_file(const std::string& path) {
  io::check_regular_file(path, "[tokenizer]");
  std::ifstream in(path, std::ios::binary);
  HEARTH_CHECK(in.good(), IoError, "[tokenizer] cannot read '", path, "'");
  json j = json::parse(io::read_json_text(in, "[tokenizer] " + path), nullptr, /*allow_exceptions=*/false);
  HEARTH_CHECK(!j.is_discarded() && j.is_object(), IoError, "[tokenizer] ", path, ": expected a JSON object");
  return j;
}

// j[key] as a bool, or `fallback` when absent or null.
std::optional<bool> optional_bool(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  HEARTH_CHECK(it->is_boolean(), ValueError, "[tokenizer] ", where, ": field '", key,
               "': expected true, false or null, got ", it->dump());
  return it->get<bool>();
}

// j[key] as a string, or nullopt when absent or null. nlohmann's value() would
// throw its own exception for a key of another type, which names no file.
std::optional<std::string> optional_string(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  HEARTH_CHECK(it->is_string(), ValueError, "[tokenizer] ", where, ": field '", key, "': expected a string, got ",
               it->dump());
  return it->get<std::string>();
}

// j[key] as a count (a non-negative integer), or nullopt when absent or null.
std::optional<size_t> optional_count(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  HEARTH_CHECK(io::json_integer_fits<size_t>(*it), ValueError, "[tokenizer] ", where, ": field '", key,
               "': expected a non-negative integer, got ", it->dump());
  return it->get<size_t>();
}

// The BertNormalizer of a tokenizer.json's "normalizer", alone or in a Sequence.
const json* find_bert_normalizer(const json& normalizer, const std::string& where) {
  if (normalizer.is_null()) return nullptr;
  HEARTH_CHECK(normalizer.is_object(), ValueError, "[tokenizer] ", where,
               ": field 'normalizer': expected an object or null, got ", normalizer.dump());
  const std::string type = optional_string(normalizer, "type", where + " normalizer").value_or("");
  if (type == "BertNormalizer") return &normalizer;
  if (type == "Sequence") {
    const json normalizers = normalizer.value("normalizers", json::array());
    HEARTH_CHECK(normalizers.is_array(), ValueError, "[tokenizer] ", where,
                 ": field 'normalizer.normalizers': expected an array, got ", normalizers.dump());
    for (const json& n : normalizers)
      if (const json* found = find_bert_normalizer(n, where)) return found;
    return nullptr;
  }
  HEARTH_THROW(ValueError, "[tokenizer] ", where, ": field 'normalizer': expected a BertNormalizer, got type '", type,
               "'");
}

// Hugging Face's "longest_first" truncation of its Rust tokenizers library,
// to `budget` tokens in all. A single sequence loses its tail. Of a pair,
// when the shorter sequence fits in half the budget only the longer one is
// cut, to what the shorter leaves. Otherwise both are cut to halves, and the
// odd token goes to the longer one, except when even the shorter one exceeds
// the whole budget (or both are equally long): then it goes to the second.
void truncate_longest_first(std::vector<int64_t>& a, std::vector<int64_t>* b, int64_t budget) {
  const auto len_a = static_cast<int64_t>(a.size());
  if (b == nullptr) {
    if (len_a > budget) a.resize(static_cast<size_t>(budget));
    return;
  }
  const auto len_b = static_cast<int64_t>(b->size());
  if (len_a + len_b <= budget) return;
  std::vector<int64_t>& longer = len_a > len_b ? a : *b;
  std::vector<int64_t>& shorter = len_a > len_b ? *b : a;
  const auto short_len = static_cast<int64_t>(shorter.size());
  if (short_len <= budget / 2) {
    longer.resize(static_cast<size_t>(budget - short_len));
    return;
  }
  const auto low = static_cast<size_t>(budget / 2);
  const auto high = static_cast<size_t>(budget - budget / 2);
  if (short_len > budget || len_a == len_b) {
    a.resize(low);
    b->resize(high);
  } else {
    longer.resize(high);
    shorter.resize(low);
  }
}

}  // namespace

BertTokenizer::BertTokenizer(Vocab vocab, BertTokenizerOptions options, const std::string& source)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  special_tokens_ = {options_.unk_token, options_.sep_token, options_.pad_token, options_.cls_token,
                     options_.mask_token};
  special_tokens_.insert(special_tokens_.end(), options_.extra_special_tokens.begin(),
                         options_.extra_special_tokens.end());
  std::erase_if(special_tokens_, [](const std::string& s) { return s.empty(); });
  std::stable_sort(special_tokens_.begin(), special_tokens_.end(),
                   [](const std::string& x, const std::string& y) { return x.size() > y.size(); });

  BasicTokenizerOptions basic;
  basic.do_lower_case = options_.do_lower_case;
  basic.strip_accents = options_.strip_accents;
  basic.tokenize_chinese_chars = options_.tokenize_chinese_chars;
  basic.clean_text = options_.clean_text;
  basic.never_split.insert(special_tokens_.begin(), special_tokens_.end());
  basic_ = BasicTokenizer(std::move(basic));
  wordpiece_ =
      WordPieceOptions{options_.unk_token, options_.continuing_subword_prefix, options_.max_input_chars_per_word};

  const std::string prefix = source.empty() ? "" : source + ": ";
  auto need = [&](const std::string& token, const char* role) {
    std::optional<int64_t> id = vocab_.find(token);
    HEARTH_CHECK(id.has_value(), ValueError, "[tokenizer] ", prefix, "the ", role, " token '", token,
                 "' is not in the vocabulary (", vocab_.size(), " tokens)");
    return *id;
  };
  unk_id_ = need(options_.unk_token, "unknown");
  sep_id_ = need(options_.sep_token, "separator");
  pad_id_ = need(options_.pad_token, "padding");
  cls_id_ = need(options_.cls_token, "classifier");
}

BertTokenizer BertTokenizer::from_vocab_txt(const std::string& path, BertTokenizerOptions options) {
  return BertTokenizer(Vocab::from_vocab_txt(path), std::move(options), path);
}

BertTokenizer BertTokenizer::from_tokenizer_json(const std::string& path) {
  const json j = read_json_file(path);
  const json model = j.value("model", json());
  HEARTH_CHECK(model.is_object(), ValueError, "[tokenizer] ", path, ": field 'model': expected a WordPiece model, got ",
               model.dump());
  const std::string model_type = optional_string(model, "type", path + " model").value_or("");
  HEARTH_CHECK(model_type == "WordPiece", ValueError, "[tokenizer] ", path,
               ": field 'model': expected a WordPiece model, got type '", model_type, "'");
  const json vocab_map = model.value("vocab", json());
  HEARTH_CHECK(vocab_map.is_object() && !vocab_map.empty(), ValueError, "[tokenizer] ", path,
               ": field 'model.vocab': expected an object of token -> id");
  std::vector<std::string> tokens(vocab_map.size());
  std::vector<bool> seen(vocab_map.size(), false);
  for (const auto& [token, id] : vocab_map.items()) {
    HEARTH_CHECK(
        id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() < static_cast<int64_t>(tokens.size()),
        ValueError, "[tokenizer] ", path, ": field 'model.vocab': token '", token, "' has id ", id.dump(),
        ", expected an integer in [0, ", tokens.size(), ")");
    const auto i = id.get<size_t>();
    HEARTH_CHECK(!seen[i], ValueError, "[tokenizer] ", path, ": field 'model.vocab': id ", i,
                 " is given to two tokens ('", tokens[i], "' and '", token, "')");
    seen[i] = true;
    tokens[i] = token;
  }

  BertTokenizerOptions options;
  options.unk_token = optional_string(model, "unk_token", path + " model").value_or(options.unk_token);
  options.continuing_subword_prefix =
      optional_string(model, "continuing_subword_prefix", path + " model").value_or(options.continuing_subword_prefix);
  options.max_input_chars_per_word =
      optional_count(model, "max_input_chars_per_word", path + " model").value_or(options.max_input_chars_per_word);
  HEARTH_CHECK(options.max_input_chars_per_word <= kMaxInputCharsPerWord, ValueError, "[tokenizer] ", path,
               ": field 'model.max_input_chars_per_word': expected at most ", kMaxInputCharsPerWord, ", got ",
               options.max_input_chars_per_word);
  const json normalizer = j.value("normalizer", json());
  if (const json* n = find_bert_normalizer(normalizer, path)) {
    options.do_lower_case = optional_bool(*n, "lowercase", path + " normalizer").value_or(true);
    options.strip_accents = optional_bool(*n, "strip_accents", path + " normalizer");
    options.clean_text = optional_bool(*n, "clean_text", path + " normalizer").value_or(true);
    options.tokenize_chinese_chars = optional_bool(*n, "handle_chinese_chars", path + " normalizer").value_or(true);
  } else {
    options.do_lower_case = false;
  }
  // Added tokens (the specials and any others) are kept whole, like the specials.
  const json added_tokens = j.value("added_tokens", json::array());
  HEARTH_CHECK(added_tokens.is_array(), ValueError, "[tokenizer] ", path,
               ": field 'added_tokens': expected an array, got ", added_tokens.dump());
  for (const json& added : added_tokens) {
    HEARTH_CHECK(added.is_object(), ValueError, "[tokenizer] ", path,
                 ": field 'added_tokens': expected objects with a 'content', got ", added.dump());
    const std::string content = optional_string(added, "content", path + " added_tokens").value_or("");
    const BertTokenizerOptions defaults;
    if (!content.empty() && content != defaults.unk_token && content != defaults.sep_token &&
        content != defaults.pad_token && content != defaults.cls_token && content != defaults.mask_token)
      options.extra_special_tokens.push_back(content);
  }
  return BertTokenizer(Vocab(std::move(tokens)), std::move(options), path);
}

BertTokenizer BertTokenizer::from_pretrained(const std::string& dir, std::optional<bool> do_lower_case) {
  const fs::path root(dir);
  HEARTH_CHECK(fs::is_directory(root), IoError, "[tokenizer] '", dir, "' is not a directory");
  if (fs::exists(root / "tokenizer.json") && !do_lower_case.has_value())
    return from_tokenizer_json((root / "tokenizer.json").string());
  BertTokenizerOptions options;
  if (fs::exists(root / "tokenizer_config.json")) {
    const std::string where = (root / "tokenizer_config.json").string();
    const json config = read_json_file(where);
    options.do_lower_case = optional_bool(config, "do_lower_case", where).value_or(true);
    options.strip_accents = optional_bool(config, "strip_accents", where);
    options.tokenize_chinese_chars = optional_bool(config, "tokenize_chinese_chars", where).value_or(true);
  }
  if (do_lower_case.has_value()) options.do_lower_case = *do_lower_case;
  HEARTH_CHECK(fs::exists(root / "vocab.txt"), IoError, "[tokenizer] '", dir,
               "' has neither tokenizer.json nor vocab.txt: expected the tokenizer files of a BERT model");
  return from_vocab_txt((root / "vocab.txt").string(), std::move(options));
}

std::vector<std::pair<std::string, bool>> BertTokenizer::split_special(const std::string& text) const {
  std::vector<std::pair<std::string, bool>> pieces;
  size_t piece_start = 0;
  for (size_t i = 0; i < text.size();) {
    const std::string* match = nullptr;
    for (const std::string& s : special_tokens_) {
      if (text.compare(i, s.size(), s) == 0) {
        match = &s;
        break;
      }
    }
    if (match == nullptr) {
      ++i;
      continue;
    }
    if (i > piece_start) pieces.emplace_back(text.substr(piece_start, i - piece_start), false);
    pieces.emplace_back(*match, true);
    i += match->size();
    piece_start = i;
  }
  if (piece_start < text.size()) pieces.emplace_back(text.substr(piece_start), false);
  return pieces;
}

std::vector<std::string> BertTokenizer::tokenize(const std::string& text) const {
  std::vector<std::string> tokens;
  for (const auto& [piece, special] : split_special(text)) {
    if (special) {
      tokens.push_back(piece);
      continue;
    }
    for (const std::string& word : basic_.tokenize(piece)) {
      if (basic_.options().never_split.count(word) != 0) {
        tokens.push_back(word);
      } else {
        wordpiece_split(word, vocab_, wordpiece_, tokens);
      }
    }
  }
  return tokens;
}

std::vector<int64_t> BertTokenizer::convert_tokens_to_ids(const std::vector<std::string>& tokens) const {
  std::vector<int64_t> ids;
  ids.reserve(tokens.size());
  for (const std::string& t : tokens) ids.push_back(vocab_.find(t).value_or(unk_id_));
  return ids;
}

Encoding BertTokenizer::encode(const std::string& a, const std::optional<std::string>& b,
                               const EncodeOptions& options) const {
  std::vector<int64_t> ids_a = convert_tokens_to_ids(tokenize(a));
  std::vector<int64_t> ids_b;
  if (b) ids_b = convert_tokens_to_ids(tokenize(*b));
  const int64_t num_special = b ? 3 : 2;
  if (options.max_length) {
    HEARTH_CHECK(*options.max_length >= num_special, ValueError, "[tokenizer] max_length ", *options.max_length,
                 " cannot hold the ", num_special, " special tokens of a ", b ? "pair" : "single sequence");
  }
  if (options.truncation && options.max_length)
    truncate_longest_first(ids_a, b ? &ids_b : nullptr, *options.max_length - num_special);

  Encoding e;
  e.input_ids.push_back(cls_id_);
  e.input_ids.insert(e.input_ids.end(), ids_a.begin(), ids_a.end());
  e.input_ids.push_back(sep_id_);
  e.token_type_ids.assign(e.input_ids.size(), 0);
  if (b) {
    e.input_ids.insert(e.input_ids.end(), ids_b.begin(), ids_b.end());
    e.input_ids.push_back(sep_id_);
    e.token_type_ids.resize(e.input_ids.size(), 1);
  }
  e.attention_mask.assign(e.input_ids.size(), 1);
  if (options.padding == Padding::max_length) {
    HEARTH_CHECK(options.max_length.has_value(), ValueError, "[tokenizer] padding to max_length needs a max_length");
    pad_encoding(e, static_cast<size_t>(*options.max_length), pad_id_);
  }
  return e;
}

std::vector<Encoding> BertTokenizer::encode_batch(const std::vector<TextPair>& rows,
                                                  const EncodeOptions& options) const {
  std::vector<Encoding> out;
  out.reserve(rows.size());
  for (const TextPair& row : rows) out.push_back(encode(row.a, row.b, options));
  if (options.padding == Padding::longest) {
    size_t longest = 0;
    for (const Encoding& e : out) longest = std::max(longest, e.input_ids.size());
    for (Encoding& e : out) pad_encoding(e, longest, pad_id_);
  }
  return out;
}

void pad_encoding(Encoding& e, size_t length, int64_t pad_id) {
  if (e.input_ids.size() >= length) return;
  e.input_ids.resize(length, pad_id);
  e.token_type_ids.resize(length, 0);
  e.attention_mask.resize(length, 0);
}

}  // namespace hearth::data
