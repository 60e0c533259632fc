// The decoders of a Hugging Face tokenizer.json that BPE tokenizers use: they
// turn the tokens of a list of ids back into text, each step rewriting the
// list of token strings (decode_chain), which is then joined.
//   ByteLevel     every token's byte-level characters back to bytes, all joined,
//                 invalid UTF-8 repaired as from_utf8_lossy does (GPT-2, Llama 3)
//   ByteFallback  runs of "<0xNN>" tokens back to their bytes (Llama 2)
//   Replace       a pattern's matches in each token replaced ("▁" -> " ")
//   Fuse          all tokens joined into one
//   Strip         up to `start`/`stop` copies of a character cut from each
//                 token's ends
//   Metaspace     "▁" back to spaces, except at the very start
//   Sequence      each in turn
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hearth/data/tokenizer/pre_tokenizer.h"
#include "hearth/data/tokenizer/split_pattern.h"

namespace hearth::data {

class TokenDecoder {
 public:
  virtual ~TokenDecoder() = default;
  // Rewrites the tokens. Returns false, leaving them unspecified, when a
  // token would grow longer than `max_bytes` (only Replace can grow them).
  virtual bool decode_chain(std::vector<std::string>& tokens, size_t max_bytes) const = 0;
};

class ByteLevelDecoder : public TokenDecoder {
 public:
  bool decode_chain(std::vector<std::string>& tokens, size_t max_bytes) const override;
};

class ByteFallbackDecoder : public TokenDecoder {
 public:
  bool decode_chain(std::vector<std::string>& tokens, size_t max_bytes) const override;
};

class ReplaceDecoder : public TokenDecoder {
 public:
  ReplaceDecoder(SplitPattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  bool decode_chain(std::vector<std::string>& tokens, size_t max_bytes) const override;

 private:
  SplitPattern pattern_;
  std::string content_;
};

class FuseDecoder : public TokenDecoder {
 public:
  bool decode_chain(std::vector<std::string>& tokens, size_t max_bytes) const override;
};

class StripDecoder : public TokenDecoder {
 public:
  StripDecoder(char32_t content, size_t start, size_t stop) : content_(content), start_(start), stop_(stop) {}
  bool decode_chain(std::vector<std::string>& tokens, size_t max_bytes) const override;

 private:
  char32_t content_;
  size_t start_, stop_;
};

class MetaspaceDecoder : public TokenDecoder {
 public:
  MetaspaceDecoder(char32_t replacement, PrependScheme scheme) : replacement_(replacement), scheme_(scheme) {}
  bool decode_chain(std::vector<std::string>& tokens, size_t max_bytes) const override;

 private:
  char32_t replacement_;
  PrependScheme scheme_;
};

class DecoderSequence : public TokenDecoder {
 public:
  explicit DecoderSequence(std::vector<std::unique_ptr<TokenDecoder>> steps) : steps_(std::move(steps)) {}
  bool decode_chain(std::vector<std::string>& tokens, size_t max_bytes) const override;

 private:
  std::vector<std::unique_ptr<TokenDecoder>> steps_;
};

}  // namespace hearth::data
