// The post-processors of a Hugging Face tokenizer.json that BPE tokenizers
// use, applied to a text's ids after tokenization:
//   TemplateProcessing  the "single" template: special tokens around the
//                       sequence (Llama 3's <|begin_of_text|> before it)
//   ByteLevel           adds nothing (it only trims character offsets)
//   Sequence            each in turn
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace hearth::data {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Rewrites `ids`; special tokens are added only when `add_special_tokens`.
  virtual void process(std::vector<int64_t>& ids, bool add_special_tokens) const = 0;
};

class TemplatePostProcessor : public PostProcessor {
 public:
  // One item of the template: the sequence itself, or a special token's ids.
  struct Item {
    bool is_sequence = false;
    std::vector<int64_t> special_ids;
  };
  explicit TemplatePostProcessor(std::vector<Item> single) : single_(std::move(single)) {}
  void process(std::vector<int64_t>& ids, bool add_special_tokens) const override;

 private:
  std::vector<Item> single_;
};

class NoOpPostProcessor : public PostProcessor {
 public:
  void process(std::vector<int64_t>&, bool) const override {}
};

class PostProcessorSequence : public PostProcessor {
 public:
  explicit PostProcessorSequence(std::vector<std::unique_ptr<PostProcessor>> steps) : steps_(std::move(steps)) {}
  void process(std::vector<int64_t>& ids, bool add_special_tokens) const override {
    for (const auto& step : steps_) step->process(ids, add_special_tokens);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

}  // namespace hearth::data
