#include "hearth/backends/cpu/onednn/size_rule.h"

#include <strings.h>

#include <cstdlib>

#include "hearth/backends/cpu/cpu_switches.h"
#include "hearth/backends/cpu/parallel.h"
#include "hearth/core/env.h"

namespace hearth::cpu::onednn {
namespace {

// Input channels per group below which oneDNN computes on plain layouts with
// its GEMM-based implementation (blocked layouts hold 16 channels a block).
constexpr int64_t kBlockedChannels = 16;
// Multiply-adds per thread below which, with sleeping threads, the reference wins.
constexpr double kMinMultiplyAddsPerThread = 8e6;

const Tensor& weight_of(Pass pass, const OpCall& call) {
  return pass == Pass::backward_weight ? call.out(0) : call.in(1);
}
const Tensor& output_image_of(Pass pass, const OpCall& call) {
  return pass == Pass::forward ? call.out(0) : call.in(0);
}

// libgomp reads the variable once, at start; this reads it at every call (a
// getenv beside a convolution), so that a test can set it.
bool threads_sleep_when_idle() { return strcasecmp(outside_env("OMP_WAIT_POLICY").c_str(), "passive") == 0; }

// The same product in every pass: N * OH * OW * O * C/groups * kH * kW.
double multiply_adds(Pass pass, const OpCall& call) {
  const Tensor& w = weight_of(pass, call);
  const Tensor& y = output_image_of(pass, call);
  return static_cast<double>(y.numel()) / static_cast<double>(w.shape()[0]) * static_cast<double>(w.numel());
}

}  // namespace

bool measured_faster(Pass pass, const OpCall& call) {
  if (switches::onednn_always().get()) return true;
  if (weight_of(pass, call).shape()[1] < kBlockedChannels) return false;
  if (threads_sleep_when_idle() && multiply_adds(pass, call) < kMinMultiplyAddsPerThread * num_threads()) return false;
  return true;
}

}  // namespace hearth::cpu::onednn
