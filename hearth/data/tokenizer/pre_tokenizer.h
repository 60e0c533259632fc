// The pre-tokenizers of a Hugging Face tokenizer.json that BPE tokenizers
// use: they cut the text between added tokens into pieces the model then
// tokenizes one by one (and may rewrite them).
//   ByteLevel  GPT-2's: an optional space before each piece, GPT-2's split
//              pattern (use_regex), then every byte as its byte-level character
//   Split      a pattern's matches and the gaps between them, kept or
//              dropped or merged by `behavior` (Llama 3's: Isolated)
//   Metaspace  SentencePiece's: spaces become "▁", "▁" put in front
//              (prepend_scheme), then the text cut before each "▁"
//   Sequence   each in turn
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hearth/data/tokenizer/split_pattern.h"

namespace hearth::data {

// A piece of text; `starts_input` when it begins the text being encoded
// (Metaspace's "first" scheme prepends only there).
struct TextPiece {
  std::string text;
  bool starts_input = false;
};

// What happens to the pattern's matches (Hugging Face's SplitDelimiterBehavior).
enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

// `piece` cut at `spans` (which cover it) as `behavior` says, appended to `out`;
// empty pieces are dropped.
void split_piece(const TextPiece& piece, const std::vector<PatternSpan>& spans, SplitBehavior behavior,
                 std::vector<TextPiece>& out);

// GPT-2's split pattern, which ByteLevel uses when use_regex is set.
extern const char* const kGpt2SplitPattern;

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces the pieces by what they split into.
  virtual void apply(std::vector<TextPiece>& pieces) const = 0;
};

class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex);
  void apply(std::vector<TextPiece>& pieces) const override;

 private:
  bool add_prefix_space_;
  bool use_regex_;
  SplitPattern gpt2_;
};

class SplitPreTokenizer : public PreTokenizer {
 public:
  SplitPreTokenizer(SplitPattern pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void apply(std::vector<TextPiece>& pieces) const override;

 private:
  SplitPattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

enum class PrependScheme { always, first, never };

class MetaspacePreTokenizer : public PreTokenizer {
 public:
  MetaspacePreTokenizer(char32_t replacement, PrependScheme scheme, bool split);
  void apply(std::vector<TextPiece>& pieces) const override;

 private:
  std::string replacement_;  // UTF-8
  PrependScheme scheme_;
  bool split_;
};

class PreTokenizerSequence : public PreTokenizer {
 public:
  explicit PreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void apply(std::vector<TextPiece>& pieces) const override;

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

}  // namespace hearth::data
