// BERT's WordPiece tokenizer, giving the same tokens and ids as Hugging Face's
// BertTokenizer:
//
//   BertTokenizer tok = BertTokenizer::from_pretrained("models/bert-base-uncased");
//   Encoding e = tok.encode("The cat sat.", "It was tired.", {.max_length = 128,
//                           .padding = Padding::max_length});
//   // e.input_ids = [CLS] the cat sat . [SEP] it was tired . [SEP] [PAD]...
//
// tokenize(): the special tokens ([CLS], [SEP], [PAD], [MASK], [UNK]) found
// in the text are kept whole; the text between them goes through the
// BasicTokenizer (cleaning, CJK, lower-casing and accents, punctuation) and
// then WordPiece. encode() adds [CLS] and [SEP], truncates "longest_first"
// (tokens come off the longer sequence of a pair until both fit), and pads.
// tests/fixtures/tokenizer/cases.jsonl holds Hugging Face's answers for texts
// of every kind; each of them is reproduced exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hearth/data/tokenizer/basic_tokenizer.h"
#include "hearth/data/tokenizer/vocab.h"
#include "hearth/data/tokenizer/wordpiece.h"

namespace hearth::data {

struct BertTokenizerOptions {
  bool do_lower_case = true;
  // Unset: strip accents exactly when lower-casing.
  std::optional<bool> strip_accents;
  bool tokenize_chinese_chars = true;
  bool clean_text = true;
  std::string unk_token = "[UNK]";
  std::string sep_token = "[SEP]";
  std::string pad_token = "[PAD]";
  std::string cls_token = "[CLS]";
  std::string mask_token = "[MASK]";
  // More tokens kept whole wherever they appear in the text.
  std::vector<std::string> extra_special_tokens;
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;
};

enum class Padding {
  none,        // every row as long as its tokens
  longest,     // a batch's rows padded to its longest row
  max_length,  // every row padded to max_length
};

struct EncodeOptions {
  // Unset: no limit (then truncation does nothing and max_length padding is an error).
  std::optional<int64_t> max_length = std::nullopt;
  // "longest_first" truncation to max_length; off leaves rows longer than max_length.
  bool truncation = true;
  Padding padding = Padding::none;
};

// One encoded sequence or pair; the three lists have the same length.
struct Encoding {
  std::vector<int64_t> input_ids;
  std::vector<int64_t> token_type_ids;  // 0 for [CLS] a [SEP], 1 for b [SEP]
  std::vector<int64_t> attention_mask;  // 1 for tokens, 0 for padding
};

// One row of a batch: a text, or a pair of texts.
struct TextPair {
  std::string a;
  std::optional<std::string> b;
};

class BertTokenizer {
 public:
  // `source`: the file the vocabulary came from, named when a special token is missing.
  BertTokenizer(Vocab vocab, BertTokenizerOptions options = {}, const std::string& source = "");

  // One token per line; the options say how to normalise.
  static BertTokenizer from_vocab_txt(const std::string& path, BertTokenizerOptions options = {});
  // A Hugging Face tokenizer.json with a WordPiece model: the vocabulary from
  // model.vocab, the unknown token and prefix from model, lower-casing and
  // accents from a BertNormalizer (alone or in a Sequence).
  static BertTokenizer from_tokenizer_json(const std::string& path);
  // A model folder: tokenizer.json if present, else vocab.txt with
  // do_lower_case and strip_accents from tokenizer_config.json when it has
  // them. `do_lower_case` overrides whatever the folder says.
  static BertTokenizer from_pretrained(const std::string& dir, std::optional<bool> do_lower_case = std::nullopt);

  // Word pieces of `text` (UTF-8), without [CLS]/[SEP].
  std::vector<std::string> tokenize(const std::string& text) const;
  std::vector<int64_t> convert_tokens_to_ids(const std::vector<std::string>& tokens) const;

  Encoding encode(const std::string& a, const std::optional<std::string>& b = std::nullopt,
                  const EncodeOptions& options = {}) const;
  // Each row encoded alone, then Padding::longest pads to the longest row.
  std::vector<Encoding> encode_batch(const std::vector<TextPair>& rows, const EncodeOptions& options = {}) const;

  const Vocab& vocab() const { return vocab_; }
  const BertTokenizerOptions& options() const { return options_; }
  int64_t pad_token_id() const { return pad_id_; }
  int64_t cls_token_id() const { return cls_id_; }
  int64_t sep_token_id() const { return sep_id_; }
  int64_t unk_token_id() const { return unk_id_; }

 private:
  // The text cut around special tokens: (piece, is_special) in order.
  std::vector<std::pair<std::string, bool>> split_special(const std::string& text) const;

  Vocab vocab_;
  BertTokenizerOptions options_;
  BasicTokenizer basic_;
  WordPieceOptions wordpiece_;
  std::vector<std::string> special_tokens_;  // longest first
  int64_t pad_id_ = 0, cls_id_ = 0, sep_id_ = 0, unk_id_ = 0;
};

// Pads `e` at the end to `length` with `pad_id` (token type 0, mask 0).
void pad_encoding(Encoding& e, size_t length, int64_t pad_id);

}  // namespace hearth::data
