// A byte-level BPE tokenizer read from a Hugging Face tokenizer.json (GPT-2,
// Llama 3, Qwen-style files, and Llama 2/TinyLlama's byte-fallback ones),
// giving the ids Hugging Face's `tokenizers` gives for any text:
//
//   BpeTokenizer tok = BpeTokenizer::from_pretrained("models/gpt2");
//   std::vector<int64_t> ids = tok.encode("Hello world<|endoftext|>");
//   std::string text = tok.decode(ids, /*skip_special_tokens=*/true);
//
// encode() runs Hugging Face's pipeline: added tokens are cut out of the text
// first (those not `normalized`, then the normalizer runs on the rest and
// the `normalized` ones are cut out), the pre-tokenizer splits what is left
// into words, the BPE model turns each word into ids, and the post-processor
// adds its special tokens (Llama 3's <|begin_of_text|>). Text that is not
// valid UTF-8 is first repaired (each bad sequence becomes U+FFFD), as Python
// does when it reads such bytes with errors="replace".
//
// Where `tokenizers` versions differ, this follows 0.23: an added token that
// is `normalized`, under a normalizer that rewrites it, decodes to its
// rewritten form (earlier versions decoded its content). No file of GPT-2,
// Llama 2 or Llama 3 has such a token.
//
// The components read from the file are those BPE tokenizers in use have:
// normalizers Prepend, Replace, NFC/NFD/NFKC/NFKD, Sequence; pre-tokenizers
// ByteLevel, Split, Metaspace, Sequence; post-processors TemplateProcessing,
// ByteLevel, Sequence; decoders ByteLevel, ByteFallback, Replace, Fuse,
// Strip, Metaspace, Sequence. Any other is refused, naming it and the file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hearth/data/tokenizer/added_vocabulary.h"
#include "hearth/data/tokenizer/bpe_model.h"
#include "hearth/data/tokenizer/post_processor.h"
#include "hearth/data/tokenizer/pre_tokenizer.h"
#include "hearth/data/tokenizer/text_normalizer.h"
#include "hearth/data/tokenizer/token_decoder.h"

namespace hearth::data {

// The parts of a tokenizer, as read from a tokenizer.json (bpe_tokenizer_json.cpp).
struct BpeTokenizerParts {
  std::shared_ptr<const BpeModel> model;
  std::vector<AddedToken> added_tokens;                 // ids: the model's, or following it
  std::shared_ptr<const TextNormalizer> normalizer;     // may be null
  std::shared_ptr<const PreTokenizer> pre_tokenizer;    // may be null
  std::shared_ptr<const PostProcessor> post_processor;  // may be null
  std::shared_ptr<const TokenDecoder> decoder;          // may be null: tokens joined by spaces
  std::string source;                                   // the file, for messages
};

class BpeTokenizer {
 public:
  explicit BpeTokenizer(BpeTokenizerParts parts);

  // Reads a tokenizer.json; ValueError/IoError "[tokenizer] <path>: ..." naming
  // the field and what was expected when the file is not one this reads.
  static BpeTokenizer from_tokenizer_json(const std::string& path);
  // A model folder's tokenizer.json; bos/eos/pad/unk tokens named by its
  // tokenizer_config.json (strings or {"content": ...}) when it has one.
  static BpeTokenizer from_pretrained(const std::string& dir);

  // The ids of `text`, with the post-processor's special tokens when `add_special_tokens`.
  std::vector<int64_t> encode(std::string_view text, bool add_special_tokens = true) const;
  // The text of `ids`: ids that are no token are left out, special added
  // tokens too when `skip_special_tokens`; the decoder joins the rest.
  std::string decode(const std::vector<int64_t>& ids, bool skip_special_tokens = false) const;

  std::optional<int64_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(int64_t id) const;
  // The id of a token that must exist; ValueError naming it and the file if not.
  int64_t id_of(std::string_view token) const;
  // Every id is below this: the model's tokens and the added ones.
  int64_t vocab_size() const { return static_cast<int64_t>(tokens_.size()); }
  bool is_special(int64_t id) const;
  const std::vector<AddedToken>& added_tokens() const { return parts_.added_tokens; }
  const BpeModel& model() const { return *parts_.model; }
  const std::string& source() const { return parts_.source; }

  // The roles tokenizer_config.json gives tokens (from_pretrained), by id.
  std::optional<int64_t> bos_token_id() const { return bos_id_; }
  std::optional<int64_t> eos_token_id() const { return eos_id_; }
  std::optional<int64_t> pad_token_id() const { return pad_id_; }
  std::optional<int64_t> unk_token_id() const { return unk_id_; }
  void set_special_token_ids(std::optional<int64_t> bos, std::optional<int64_t> eos, std::optional<int64_t> pad,
                             std::optional<int64_t> unk);

 private:
  // Appends the ids of a stretch of text with no added token not `normalized` in it.
  void encode_segment(std::string text, bool starts_input, std::vector<int64_t>& ids) const;

  BpeTokenizerParts parts_;
  std::vector<std::string> tokens_;  // by id: the model's, then the added tokens'
  std::vector<bool> special_;        // by id
  std::unordered_map<std::string, int64_t> added_ids_;
  AddedTokenMatcher raw_matcher_;         // the added tokens matched in the text as given
  AddedTokenMatcher normalized_matcher_;  // those matched after normalization
  std::optional<int64_t> bos_id_, eos_id_, pad_id_, unk_id_;
};

}  // namespace hearth::data
