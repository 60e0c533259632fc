// What training holds besides activations, counted before it is allocated.
#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/ops/factory.h"
#include "hearth/train/training_memory.h"

namespace hearth::train {
namespace {

TEST(TrainingMemory, CountsParametersGradientsAndOptimizerState) {
  const std::vector<Tensor> params = {zeros({10, 10}, DType::float32), zeros({10}, DType::float32)};
  const TrainingMemory adam = training_memory(params, "adamw_torch");
  EXPECT_EQ(adam.parameters, 440u);
  EXPECT_EQ(adam.gradients, 440u);
  EXPECT_EQ(adam.optimizer_state, 880u);
  EXPECT_EQ(adam.total(), 1760u);
  EXPECT_EQ(training_memory(params, "sgd").optimizer_state, 440u);
}

TEST(TrainingMemory, TheCpusMemoryIsKnown) { EXPECT_GT(device_memory_bytes(Device()), size_t{1} << 20); }

// Parameters of 8 GiB fit a 16 GiB machine; training them (32 GiB with
// Adam) does not, and says so, part by part, before anything is allocated.
TEST(TrainingMemory, ARunThatCannotHoldItsStateIsRefusedNamingEachPart) {
  constexpr size_t kGiB = size_t{1} << 30;
  TrainingMemory need;
  need.parameters = need.gradients = 8 * kGiB;
  need.optimizer_state = 16 * kGiB;
  try {
    check_training_memory_fits(need, 16 * kGiB, "cpu");
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[trainer] training this model holds 32.0 GiB before any activation (parameters 8.0 GiB, "
                     "gradients 8.0 GiB, optimizer state 16.0 GiB), more than the 16.0 GiB of cpu"),
              std::string::npos)
        << m;
  }
  EXPECT_NO_THROW(check_training_memory_fits(need, 64 * kGiB, "cpu"));
  EXPECT_NO_THROW(check_training_memory_fits(need, 0, "cpu"));  // unknown: not checked
}

}  // namespace
}  // namespace hearth::train
