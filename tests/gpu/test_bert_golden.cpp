// BERT on the GPU against transformers: the golden train step of
// tests/support/bert_golden.h run on cuda:0. With HEARTH_ALLOW_TF32=0 (the
// gpu.bert_golden_fp32 test) float32 products are exact float32 and the bound
// is the CPU's, 1e-4; with TF32 on (the default), products keep 10 mantissa
// bits and gradients through the layer norms drift by a few per cent (3.7% seen
// on an H100), so the bound is 1e-1.
#include <iostream>

#include <gtest/gtest.h>

#include "hearth/core/backend_options.h"
#include "hearth/ops/factory.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/support/bert_golden.h"

namespace hearth::gpu_testing {
namespace {

bool tf32_allowed() { return float32_reduced_precision_allowed(); }

TEST(BertGoldenCuda, TrainStepAndEvalMatchTransformers) {
  HEARTH_REQUIRE_CUDA();
  const bool tf32 = tf32_allowed();
  const double worst = testing::check_bert_golden(cuda0(), tf32 ? 1e-1 : 1e-4);
  std::cout << "[bert golden, cuda] worst relative error " << worst << (tf32 ? " (TF32 on)" : " (TF32 off)")
            << std::endl;
}

// The same weights give the same logits and loss on both devices.
TEST(BertGoldenCuda, AgreesWithTheCpu) {
  HEARTH_REQUIRE_CUDA();
  using nn::models::BertForSequenceClassification;
  auto on_cpu = BertForSequenceClassification::from_pretrained(testing::bert_tiny_dir(), {.log = nullptr});
  auto on_gpu = BertForSequenceClassification::from_pretrained(testing::bert_tiny_dir(), {.log = nullptr});
  on_gpu->to(cuda0());
  std::map<std::string, Tensor> io = io::load_safetensors(testing::bert_tiny_io_path());
  auto cpu_out = on_cpu->forward(io["input_ids"], io["token_type_ids"], io["attention_mask"], io["labels"]);
  auto gpu_out = on_gpu->forward(io["input_ids"].to(cuda0()), io["token_type_ids"].to(cuda0()),
                                 io["attention_mask"].to(cuda0()), io["labels"].to(cuda0()));
  EXPECT_EQ(gpu_out.logits.device(), cuda0());
  const double tol = tf32_allowed() ? 2e-2 : 1e-5;
  EXPECT_LT(testing::max_relative_error(gpu_out.logits, cpu_out.logits), tol);
  EXPECT_LT(testing::max_relative_error(gpu_out.loss, cpu_out.loss), tol);
}

}  // namespace
}  // namespace hearth::gpu_testing
