// Reading a Hugging Face tokenizer.json into a BpeTokenizer: every field is
// checked (tokenizer_json_field.h), every component type is one hearth
// implements or the file is refused naming it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "hearth/core/errors.h"
#include "hearth/data/tokenizer/bpe_tokenizer.h"
#include "hearth/data/tokenizer/tokenizer_json_field.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Ids are 32-bit in Hugging Face's tokenizers; more tokens than this are refused.
constexpr uint64_t kMaxTokens = std::numeric_limits<int32_t>::max();

json read_json_file(const std::string& path) {
  io::check_regular_file(path, "[tokenizer]");
  std::ifstream in(path, std::ios::binary);
  HEARTH_CHECK(in.good(), IoError, "[tokenizer] cannot read '", path, "'");
  // A key repeated in one object (a token listed twice in model.vocab) would
  // silently keep its last value; counting the keys each object was given
  // against the keys it ends with finds it.
  std::vector<size_t> keys_given;
  bool repeated_key = false;
  const json::parser_callback_t count_keys = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys_given.push_back(0);
    } else if (event == json::parse_event_t::key && !keys_given.empty()) {
      ++keys_given.back();
    } else if (event == json::parse_event_t::object_end && !keys_given.empty()) {
      repeated_key = repeated_key || parsed.size() != keys_given.back();
      keys_given.pop_back();
    }
    return true;
  };
  json j = json::parse(io::read_json_text(in, "[tokenizer] " + path), count_keys, /*allow_exceptions=*/false);
  HEARTH_CHECK(!j.is_discarded() && j.is_object(), IoError, "[tokenizer] ", path, ": expected a JSON object");
  HEARTH_CHECK(!repeated_key, ValueError, "[tokenizer] ", path,
               ": an object lists the same key twice (a token repeated in model.vocab?); expected each once");
  return j;
}

// The "type" of a component, which must be a string.
std::string type_of(const JsonField& f, const std::string& what) {
  f.object(what);
  return f.at("type", "a string naming the " + what + "'s type").string();
}

[[noreturn]] void unsupported(const JsonField& f, const std::string& type, const std::string& supported) {
  HEARTH_THROW(ValueError, f.where(), ": the type '", io::excerpt(type, 60),
               "' is not supported here (a byte-level BPE tokenizer reads ", supported, ")");
}

// A {"String": "..."} or {"Regex": "..."} pattern.
SplitPattern read_pattern(const JsonField& f) {
  const char* expected = "{\"String\": text} or {\"Regex\": pattern}";
  const json& o = f.object(expected);
  if (o.size() != 1) f.fail(expected);
  if (std::optional<JsonField> s = f.find("String")) return SplitPattern::literal(s->string(), s->where());
  if (std::optional<JsonField> r = f.find("Regex")) return SplitPattern::regex(r->string(), r->where());
  f.fail(expected);
}

std::unique_ptr<TextNormalizer> read_normalizer(const JsonField& f) {
  const std::string type = type_of(f, "normalizer");
  if (type == "Sequence") {
    const JsonField list = f.at("normalizers", "an array of normalizers");
    list.array();
    std::vector<std::unique_ptr<TextNormalizer>> steps;
    for (size_t i = 0; i < list.value().size(); ++i) steps.push_back(read_normalizer(list.element(i)));
    return std::make_unique<NormalizerSequence>(std::move(steps));
  }
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(f.string_at("prepend"));
  if (type == "Replace")
    return std::make_unique<ReplaceNormalizer>(read_pattern(f.at("pattern", "a pattern")), f.string_at("content"));
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfc);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfd);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfkc);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(UnicodeForm::nfkd);
  unsupported(f, type, "normalizers Sequence, Prepend, Replace, NFC, NFD, NFKC and NFKD");
}

SplitBehavior read_behavior(const JsonField& f) {
  const char* expected = "one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous";
  const std::string b = f.string(expected);
  if (b == "Removed") return SplitBehavior::removed;
  if (b == "Isolated") return SplitBehavior::isolated;
  if (b == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (b == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (b == "Contiguous") return SplitBehavior::contiguous;
  f.fail(expected);
}

PrependScheme read_prepend_scheme(const JsonField& f) {
  PrependScheme scheme = PrependScheme::always;
  if (std::optional<JsonField> s = f.find("prepend_scheme")) {
    const char* expected = "one of \"always\", \"first\", \"never\"";
    const std::string v = s->string(expected);
    if (v == "always") {
      scheme = PrependScheme::always;
    } else if (v == "first") {
      scheme = PrependScheme::first;
    } else if (v == "never") {
      scheme = PrependScheme::never;
    } else {
      s->fail(expected);
    }
  }
  // Older files say add_prefix_space instead; false must agree with the scheme.
  if (std::optional<JsonField> a = f.find("add_prefix_space"); a && !a->boolean()) {
    if (f.find("prepend_scheme") && scheme != PrependScheme::never)
      a->fail("true, or a prepend_scheme of \"never\" (add_prefix_space false contradicts it)");
    scheme = PrependScheme::never;
  }
  return scheme;
}

std::unique_ptr<PreTokenizer> read_pre_tokenizer(const JsonField& f) {
  const std::string type = type_of(f, "pre_tokenizer");
  if (type == "Sequence") {
    const JsonField list = f.at("pretokenizers", "an array of pre-tokenizers");
    list.array();
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (size_t i = 0; i < list.value().size(); ++i) steps.push_back(read_pre_tokenizer(list.element(i)));
    return std::make_unique<PreTokenizerSequence>(std::move(steps));
  }
  if (type == "ByteLevel") {
    if (std::optional<JsonField> t = f.find("trim_offsets")) (void)t->boolean();
    return std::make_unique<ByteLevelPreTokenizer>(f.bool_or("add_prefix_space", true), f.bool_or("use_regex", true));
  }
  if (type == "Split") {
    return std::make_unique<SplitPreTokenizer>(read_pattern(f.at("pattern", "a pattern")),
                                               read_behavior(f.at("behavior", "a split behavior")),
                                               f.bool_or("invert", false));
  }
  if (type == "Metaspace")
    return std::make_unique<MetaspacePreTokenizer>(f.char_at("replacement"), read_prepend_scheme(f),
                                                   f.bool_or("split", true));
  unsupported(f, type, "pre-tokenizers Sequence, ByteLevel, Split and Metaspace");
}

std::unique_ptr<TokenDecoder> read_decoder(const JsonField& f) {
  const std::string type = type_of(f, "decoder");
  if (type == "Sequence") {
    const JsonField list = f.at("decoders", "an array of decoders");
    list.array();
    std::vector<std::unique_ptr<TokenDecoder>> steps;
    for (size_t i = 0; i < list.value().size(); ++i) steps.push_back(read_decoder(list.element(i)));
    return std::make_unique<DecoderSequence>(std::move(steps));
  }
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Replace")
    return std::make_unique<ReplaceDecoder>(read_pattern(f.at("pattern", "a pattern")), f.string_at("content"));
  if (type == "Strip") {
    // Bounded so that a count cannot wrap; tokens are far shorter anyway.
    const uint64_t limit = 1u << 20;
    return std::make_unique<StripDecoder>(f.char_at("content"), f.at("start", "a count").count(limit),
                                          f.at("stop", "a count").count(limit));
  }
  if (type == "Metaspace") return std::make_unique<MetaspaceDecoder>(f.char_at("replacement"), read_prepend_scheme(f));
  unsupported(f, type, "decoders Sequence, ByteLevel, ByteFallback, Fuse, Replace, Strip and Metaspace");
}

// A special token's ids in a post-processor, each an existing id.
int64_t read_id(const JsonField& f, int64_t vocab_size) {
  return static_cast<int64_t>(f.count(static_cast<uint64_t>(vocab_size - 1)));
}

std::unique_ptr<PostProcessor> read_post_processor(const JsonField& f, int64_t vocab_size) {
  const std::string type = type_of(f, "post_processor");
  if (type == "Sequence") {
    const JsonField list = f.at("processors", "an array of post-processors");
    list.array();
    std::vector<std::unique_ptr<PostProcessor>> steps;
    for (size_t i = 0; i < list.value().size(); ++i) steps.push_back(read_post_processor(list.element(i), vocab_size));
    return std::make_unique<PostProcessorSequence>(std::move(steps));
  }
  if (type == "ByteLevel") return std::make_unique<NoOpPostProcessor>();
  if (type == "TemplateProcessing") {
    const JsonField specials = f.at("special_tokens", "an object of special tokens");
    specials.object();
    const JsonField single = f.at("single", "the template of a single sequence");
    single.array();
    std::vector<TemplatePostProcessor::Item> items;
    for (size_t i = 0; i < single.value().size(); ++i) {
      const JsonField piece = single.element(i);
      const char* expected = "{\"Sequence\": {\"id\": \"A\", ...}} or {\"SpecialToken\": {\"id\": name, ...}}";
      if (!piece.value().is_object() || piece.value().size() != 1) piece.fail(expected);
      if (std::optional<JsonField> seq = piece.find("Sequence")) {
        const JsonField id = seq->at("id", "\"A\"");
        if (id.string("\"A\"") != "A") id.fail("\"A\" (a single sequence's template cannot use B)");
        items.push_back({true, {}});
      } else if (std::optional<JsonField> special = piece.find("SpecialToken")) {
        const JsonField id = special->at("id", "the name of a special token");
        const std::string name = id.string("the name of a special token");
        std::optional<JsonField> entry = specials.find(name);
        if (!entry) id.fail("a token listed in " + specials.path());
        const JsonField ids = entry->at("ids", "an array of ids");
        ids.array();
        TemplatePostProcessor::Item item;
        for (size_t k = 0; k < ids.value().size(); ++k) item.special_ids.push_back(read_id(ids.element(k), vocab_size));
        items.push_back(std::move(item));
      } else {
        piece.fail(expected);
      }
    }
    return std::make_unique<TemplatePostProcessor>(std::move(items));
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    // [cls] A [sep], each given as [token, id].
    auto token_id = [&](const char* key) {
      const JsonField pair = f.at(key, "a pair [token, id]");
      if (!pair.value().is_array() || pair.value().size() != 2 || !pair.value()[0].is_string())
        pair.fail("a pair [token, id]");
      return read_id(pair.element(1), vocab_size);
    };
    std::vector<TemplatePostProcessor::Item> items;
    items.push_back({false, {token_id("cls")}});
    items.push_back({true, {}});
    items.push_back({false, {token_id("sep")}});
    return std::make_unique<TemplatePostProcessor>(std::move(items));
  }
  unsupported(f, type, "post-processors Sequence, ByteLevel, TemplateProcessing, RobertaProcessing and BertProcessing");
}

// The vocabulary: token -> id, ids exactly 0..n-1.
std::vector<std::string> read_vocab(const JsonField& model) {
  const JsonField vocab = model.at("vocab", "an object of token -> id");
  const json& map = vocab.object("an object of token -> id");
  if (map.empty()) vocab.fail("a non-empty object of token -> id");
  if (map.size() > kMaxTokens) vocab.fail("at most " + std::to_string(kMaxTokens) + " tokens");
  std::vector<std::string> tokens(map.size());
  std::vector<bool> seen(map.size(), false);
  for (const auto& [token, id] : map.items()) {
    const JsonField field(id, vocab.file(), vocab.path() + "[\"" + io::excerpt(token, 60) + "\"]");
    const auto i = static_cast<size_t>(field.count(map.size() - 1));
    HEARTH_CHECK(!seen[i], ValueError, vocab.where(), ": id ", i, " is given to two tokens ('",
                 io::excerpt(tokens[i], 60), "' and '", io::excerpt(token, 60), "')");
    seen[i] = true;
    tokens[i] = token;
  }
  return tokens;
}

std::vector<std::pair<std::string, std::string>> read_merges(const JsonField& model) {
  const JsonField merges = model.at("merges", "an array of merges");
  const json& list = merges.array("an array of merges");
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(list.size());
  const char* expected = "a merge: \"a b\" or [\"a\", \"b\"]";
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonField m = merges.element(i);
    if (m.value().is_string()) {
      // "a b": exactly one space (tokens of a byte-level vocabulary have none).
      const std::string s = m.value().get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) m.fail(expected);
      out.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.value().is_array() && m.value().size() == 2 && m.value()[0].is_string() && m.value()[1].is_string()) {
      out.emplace_back(m.value()[0].get<std::string>(), m.value()[1].get<std::string>());
    } else {
      m.fail(expected);
    }
  }
  return out;
}

std::shared_ptr<const BpeModel> read_model(const JsonField& root) {
  const JsonField model = root.at("model", "a BPE model");
  model.object("a BPE model");
  if (std::optional<JsonField> type = model.find("type")) {
    const std::string t = type->string("\"BPE\"");
    if (t != "BPE")
      HEARTH_THROW(ValueError, type->where(), ": expected a BPE model, got '", io::excerpt(t, 60),
                   "' (a WordPiece tokenizer.json is read by BertTokenizer)");
  }
  if (std::optional<JsonField> dropout = model.find("dropout")) {
    if (!dropout->value().is_number()) dropout->fail("null or a number");
    // Dropout skips merges at random, so no two encodings would agree.
    if (dropout->value().get<double>() != 0.0) dropout->fail("null or 0 (BPE dropout is not supported)");
  }
  BpeOptions options;
  options.unk_token = model.optional_string("unk_token");
  options.continuing_subword_prefix = model.optional_string("continuing_subword_prefix");
  options.end_of_word_suffix = model.optional_string("end_of_word_suffix");
  options.fuse_unk = model.bool_or("fuse_unk", false);
  options.byte_fallback = model.bool_or("byte_fallback", false);
  options.ignore_merges = model.bool_or("ignore_merges", false);
  std::vector<std::string> vocab = read_vocab(model);
  std::vector<std::pair<std::string, std::string>> merges = read_merges(model);
  return std::make_shared<BpeModel>(std::move(vocab), merges, std::move(options), "[tokenizer] " + root.file());
}

// The added tokens, each given the id Hugging Face gives it: the model's id
// when the model has the token, else the next id after the model's and the
// added tokens' before it. A file whose ids disagree is refused.
std::vector<AddedToken> read_added_tokens(const JsonField& root, const BpeModel& model) {
  std::vector<AddedToken> out;
  std::optional<JsonField> list = root.find("added_tokens");
  if (!list) return out;
  list->array();
  std::set<std::string> contents;
  int64_t next_id = model.size();
  for (size_t i = 0; i < list->value().size(); ++i) {
    const JsonField f = list->element(i);
    f.object("an added token: {\"id\": ..., \"content\": ..., ...}");
    AddedToken t;
    t.content = f.string_at("content");
    const JsonField content = f.at("content", "a string");
    if (t.content.empty()) content.fail("a non-empty string");
    if (!contents.insert(t.content).second) content.fail("a token not listed before in added_tokens");
    const JsonField id = f.at("id", "an integer id");
    const uint64_t file_id = id.count(kMaxTokens - 1);
    const std::optional<int64_t> model_id = model.find(t.content);
    const int64_t expected_id = model_id ? *model_id : next_id;
    if (static_cast<int64_t>(file_id) != expected_id)
      id.fail(std::to_string(expected_id) + (model_id ? " (the model's id of this token)"
                                                      : " (the next id after the vocabulary and the added tokens "
                                                        "before it, as Hugging Face assigns them)"));
    if (!model_id) ++next_id;
    t.id = expected_id;
    t.special = f.bool_or("special", false);
    t.single_word = f.bool_or("single_word", false);
    t.lstrip = f.bool_or("lstrip", false);
    t.rstrip = f.bool_or("rstrip", false);
    t.normalized = f.bool_or("normalized", !t.special);
    out.push_back(std::move(t));
  }
  return out;
}

// Top-level settings Hugging Face applies on encoding that hearth leaves to its callers.
void refuse_encoding_settings(const JsonField& root) {
  if (std::optional<JsonField> version = root.find("version")) {
    if (version->string("\"1.0\"") != "1.0") version->fail("\"1.0\"");
  }
  for (const char* key : {"truncation", "padding"}) {
    if (std::optional<JsonField> f = root.find(key))
      f->fail("null (truncation and padding are set when encoding, not read from tokenizer.json)");
  }
}

// A token named by tokenizer_config.json: a string or {"content": ...}.
std::optional<int64_t> config_token_id(const JsonField& config, const char* key, const BpeTokenizer& tok) {
  std::optional<JsonField> f = config.find(key);
  if (!f) return std::nullopt;
  const std::string content =
      f->value().is_object() ? f->string_at("content") : f->string("a string or {\"content\": ...}");
  std::optional<int64_t> id = tok.token_to_id(content);
  if (!id) f->fail("a token of the tokenizer ('" + io::excerpt(content, 60) + "' is not in " + tok.source() + ")");
  return id;
}

}  // namespace

BpeTokenizer BpeTokenizer::from_tokenizer_json(const std::string& path) {
  const json j = read_json_file(path);
  const JsonField root(j, path, "");
  refuse_encoding_settings(root);
  BpeTokenizerParts parts;
  parts.source = path;
  parts.model = read_model(root);
  parts.added_tokens = read_added_tokens(root, *parts.model);
  if (std::optional<JsonField> n = root.find("normalizer")) parts.normalizer = read_normalizer(*n);
  if (std::optional<JsonField> p = root.find("pre_tokenizer")) parts.pre_tokenizer = read_pre_tokenizer(*p);
  if (std::optional<JsonField> d = root.find("decoder")) parts.decoder = read_decoder(*d);
  if (std::optional<JsonField> p = root.find("post_processor")) {
    int64_t vocab_size = parts.model->size();
    for (const AddedToken& t : parts.added_tokens) vocab_size = std::max(vocab_size, t.id + 1);
    parts.post_processor = read_post_processor(*p, vocab_size);
  }
  return BpeTokenizer(std::move(parts));
}

BpeTokenizer BpeTokenizer::from_pretrained(const std::string& dir) {
  const fs::path root(dir);
  HEARTH_CHECK(fs::is_directory(root), IoError, "[tokenizer] '", dir, "' is not a directory");
  HEARTH_CHECK(fs::exists(root / "tokenizer.json"), IoError, "[tokenizer] '", dir,
               "' has no tokenizer.json: expected the tokenizer file of a byte-level BPE model");
  BpeTokenizer tok = from_tokenizer_json((root / "tokenizer.json").string());
  if (fs::exists(root / "tokenizer_config.json")) {
    const std::string where = (root / "tokenizer_config.json").string();
    const json config = read_json_file(where);
    const JsonField c(config, where, "");
    tok.set_special_token_ids(config_token_id(c, "bos_token", tok), config_token_id(c, "eos_token", tok),
                              config_token_id(c, "pad_token", tok), config_token_id(c, "unk_token", tok));
  }
  return tok;
}

}  // namespace hearth::data
