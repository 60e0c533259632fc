// The normalizers of a Hugging Face tokenizer.json that BPE tokenizers use:
// Prepend (Llama 2's "▁" before the text), Replace (" " -> "▁"), the Unicode
// normal forms (NFC, NFD, NFKC, NFKD) and Sequence. Each rewrites a piece of
// text that is not an added token, before pre-tokenization.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hearth/data/tokenizer/split_pattern.h"

namespace hearth::data {

class TextNormalizer {
 public:
  virtual ~TextNormalizer() = default;
  // Rewrites `text` (valid UTF-8) in place. Returns false, leaving `text`
  // unspecified, when the result would be longer than `max_bytes`: a hostile
  // file (Replace after Replace, each doubling the text) must not exhaust memory.
  virtual bool apply(std::string& text, size_t max_bytes) const = 0;
};

// `prefix` before any text that is not empty.
class PrependNormalizer : public TextNormalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  bool apply(std::string& text, size_t max_bytes) const override;

 private:
  std::string prefix_;
};

// Every match of `pattern` replaced by `content`.
class ReplaceNormalizer : public TextNormalizer {
 public:
  ReplaceNormalizer(SplitPattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  bool apply(std::string& text, size_t max_bytes) const override;

 private:
  SplitPattern pattern_;
  std::string content_;
};

enum class UnicodeForm { nfc, nfd, nfkc, nfkd };

class UnicodeNormalizer : public TextNormalizer {
 public:
  explicit UnicodeNormalizer(UnicodeForm form) : form_(form) {}
  bool apply(std::string& text, size_t max_bytes) const override;

 private:
  UnicodeForm form_;
};

class NormalizerSequence : public TextNormalizer {
 public:
  explicit NormalizerSequence(std::vector<std::unique_ptr<TextNormalizer>> steps) : steps_(std::move(steps)) {}
  bool apply(std::string& text, size_t max_bytes) const override;

 private:
  std::vector<std::unique_ptr<TextNormalizer>> steps_;
};

// `text` with every span of `pattern` that matches replaced by `content`;
// false when that would be longer than `max_bytes`.
bool replace_matches(const SplitPattern& pattern, const std::string& text, const std::string& content,
                     size_t max_bytes, std::string& out);

}  // namespace hearth::data
