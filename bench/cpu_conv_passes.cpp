// Times each pass of a CPU convolution (forward, backward-data,
// backward-weights) through oneDNN and through the reference kernels
// (im2col + OpenBLAS), call for call in turn, on the shapes of the small CNN
// that `make run` trains, ResNet-50's, and a sweep between them: the
// measurements behind the rule that keeps some calls off oneDNN
// (hearth/backends/cpu/onednn/size_rule.h). The last column says which path
// the rule gives each pass. A program, never a test: it prints, it asserts nothing.
//
//   bench_conv_passes [--set small_cnn|resnet50|sweep|all] [--threads T] [--min-time S] [--filter TEXT]
//                     [--bf16] [--channels-last]
#include <omp.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "hearth/autograd/grad_mode.h"
#include "hearth/backends/cpu/onednn/onednn.h"
#include "hearth/core/exception_report.h"
#include "hearth/core/switches.h"
#include "hearth/dispatch/cpu_reference.h"
#include "hearth/dispatch/schemas/conv2d.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace {

using hearth::Tensor;

struct Options {
  std::string set = "small_cnn";
  int threads = 2;
  double min_time = 0.5;
  std::string filter;
  hearth::DType dtype = hearth::DType::float32;
  hearth::MemoryFormat format = hearth::MemoryFormat::contiguous;
};

struct ConvCase {
  std::string name;
  int64_t n, c, o, hw, k, stride, pad;
};

std::vector<ConvCase> cases(const std::string& set) {
  std::vector<ConvCase> all;
  auto add = [&](const std::string& s, std::vector<ConvCase> more) {
    if (set == s || set == "all") all.insert(all.end(), more.begin(), more.end());
  };
  // `make run`: batch 64 in training, 256 in evaluation.
  add("small_cnn", {{"small_cnn.conv1_1to16_28 b64", 64, 1, 16, 28, 3, 1, 1},
                    {"small_cnn.conv2_16to32_14 b64", 64, 16, 32, 14, 3, 1, 1},
                    {"small_cnn.conv1_1to16_28 b256", 256, 1, 16, 28, 3, 1, 1},
                    {"small_cnn.conv2_16to32_14 b256", 256, 16, 32, 14, 3, 1, 1}});
  // hearth bench's CPU batch.
  add("resnet50", {{"resnet50.conv1_7x7s2_3to64_224 b8", 8, 3, 64, 224, 7, 2, 3},
                   {"resnet50.conv_3x3_64to64_56 b8", 8, 64, 64, 56, 3, 1, 1},
                   {"resnet50.conv_1x1_256to64_56 b8", 8, 256, 64, 56, 1, 1, 0},
                   {"resnet50.conv_3x3_128to128_28 b8", 8, 128, 128, 28, 3, 1, 1},
                   {"resnet50.conv_3x3_256to256_14 b8", 8, 256, 256, 14, 3, 1, 1},
                   {"resnet50.conv_3x3_512to512_7 b8", 8, 512, 512, 7, 3, 1, 1}});
  // Between them: input channels (the reduction of each output), batch and
  // image size (the work of a call).
  add("sweep", {{"sweep.3x3_1to32_28 b64", 64, 1, 32, 28, 3, 1, 1},
                {"sweep.3x3_2to32_28 b64", 64, 2, 32, 28, 3, 1, 1},
                {"sweep.3x3_3to32_28 b64", 64, 3, 32, 28, 3, 1, 1},
                {"sweep.3x3_4to32_28 b64", 64, 4, 32, 28, 3, 1, 1},
                {"sweep.3x3_8to32_28 b64", 64, 8, 32, 28, 3, 1, 1},
                {"sweep.3x3_16to32_28 b64", 64, 16, 32, 28, 3, 1, 1},
                {"sweep.7x7s2_1to64_56 b8", 8, 1, 64, 56, 7, 2, 3},
                {"sweep.7x7s2_3to64_56 b8", 8, 3, 64, 56, 7, 2, 3},
                {"sweep.3x3_16to32_14 b1", 1, 16, 32, 14, 3, 1, 1},
                {"sweep.3x3_16to32_14 b4", 4, 16, 32, 14, 3, 1, 1},
                {"sweep.3x3_16to32_14 b16", 16, 16, 32, 14, 3, 1, 1},
                {"sweep.3x3_16to32_7 b8", 8, 16, 32, 7, 3, 1, 1},
                {"sweep.3x3_32to32_7 b1", 1, 32, 32, 7, 3, 1, 1},
                {"sweep.3x3_64to64_7 b1", 1, 64, 64, 7, 3, 1, 1},
                {"sweep.1x1_16to32_14 b64", 64, 16, 32, 14, 1, 1, 0},
                {"sweep.1x1_64to64_14 b8", 8, 64, 64, 14, 1, 1, 0}});
  return all;
}

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// The two paths run in turn, one call each, after two warm-up calls each, so
// a machine whose speed drifts slows both alike; medians of each.
struct Pair {
  double onednn_ms, reference_ms;
};

Pair time_pair(const std::function<void()>& onednn, const std::function<void()>& reference, double min_time_s) {
  for (int i = 0; i < 2; ++i) {
    onednn();
    reference();
  }
  std::vector<double> a, b;
  const double start = now_ms();
  while (a.size() < 5 || (now_ms() - start < min_time_s * 2e3 && a.size() < 400)) {
    double t0 = now_ms();
    onednn();
    a.push_back(now_ms() - t0);
    t0 = now_ms();
    reference();
    b.push_back(now_ms() - t0);
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return {a[a.size() / 2], b[b.size() / 2]};
}

// Runs `pass` on oneDNN whatever the rule says (HEARTH_ONEDNN_ALWAYS), on the
// reference, and once as the rule decides, to report its choice.
struct PassRow {
  Pair ms;
  bool rule_takes_onednn;
};

PassRow measure(const std::function<void()>& pass, double min_time_s) {
  auto onednn = [&] {
    ::setenv("HEARTH_ONEDNN_ALWAYS", "1", 1);
    pass();
    ::unsetenv("HEARTH_ONEDNN_ALWAYS");
  };
  auto reference = [&] {
    hearth::ForceCpuReference forced;
    pass();
  };
  PassRow row{time_pair(onednn, reference, min_time_s), false};
  const uint64_t before = hearth::cpu::onednn::calls_taken();
  pass();
  row.rule_takes_onednn = hearth::cpu::onednn::calls_taken() != before;
  return row;
}

void print_row(const std::string& name, double mmac_per_thread, const char* pass, const PassRow& r) {
  std::printf("%-36s %9.1f %-8s %10.3f %10.3f %7.2f  %s\n", name.c_str(), mmac_per_thread, pass, r.ms.onednn_ms,
              r.ms.reference_ms, r.ms.reference_ms / r.ms.onednn_ms, r.rule_takes_onednn ? "oneDNN" : "reference");
  std::fflush(stdout);
}

void run_case(const ConvCase& cc, const Options& opt) {
  hearth::NoGradGuard no_grad;
  auto make = [&](const hearth::Shape& shape) {
    return hearth::contiguous(hearth::cast(hearth::randn(shape), opt.dtype), opt.format);
  };
  const Tensor x = make({cc.n, cc.c, cc.hw, cc.hw});
  const Tensor w = hearth::mul(make({cc.o, cc.c, cc.k, cc.k}), 0.05);
  const Tensor b = hearth::cast(hearth::randn({cc.o}), opt.dtype);
  hearth::Conv2dAttrs a;
  a.stride = {cc.stride, cc.stride};
  a.padding = {cc.pad, cc.pad};
  const Tensor y = hearth::conv2d(x, w, b, a.stride, a.padding);
  const Tensor gy = make(y.shape());
  const Tensor gx = hearth::contiguous(hearth::empty_like(x), opt.format);
  const Tensor gw = hearth::contiguous(hearth::empty_like(w), opt.format);
  const double mmac = static_cast<double>(y.numel()) / cc.o * static_cast<double>(w.numel()) / opt.threads * 1e-6;
  static const hearth::OpHandle backward_input = hearth::detail::op_handle(hearth::OpId::conv2d_backward_input);
  static const hearth::OpHandle backward_weight = hearth::detail::op_handle(hearth::OpId::conv2d_backward_weight);
  // The forward as the models call it: with its bias.
  auto forward = [&] { hearth::conv2d(x, w, b, a.stride, a.padding); };
  auto backward_data = [&] { hearth::detail::run(backward_input, {gy, w}, {gx}, a); };
  auto backward_weights = [&] { hearth::detail::run(backward_weight, {gy, x}, {gw}, a); };
  print_row(cc.name, mmac, "forward", measure(forward, opt.min_time));
  print_row(cc.name, mmac, "bwd-data", measure(backward_data, opt.min_time));
  print_row(cc.name, mmac, "bwd-wgt", measure(backward_weights, opt.min_time));
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value after %s\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--set"))
      o.set = next();
    else if (!std::strcmp(argv[i], "--threads"))
      o.threads = std::atoi(next());
    else if (!std::strcmp(argv[i], "--min-time"))
      o.min_time = std::atof(next());
    else if (!std::strcmp(argv[i], "--filter"))
      o.filter = next();
    else if (!std::strcmp(argv[i], "--bf16"))
      o.dtype = hearth::DType::bfloat16;
    else if (!std::strcmp(argv[i], "--channels-last"))
      o.format = hearth::MemoryFormat::channels_last;
    else {
      std::fprintf(stderr,
                   "usage: bench_conv_passes [--set small_cnn|resnet50|sweep|all] [--threads T] [--min-time S] "
                   "[--filter TEXT] [--bf16] [--channels-last]\n");
      std::exit(2);
    }
  }
  return o;
}

int run(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  omp_set_num_threads(opt.threads);
  const std::vector<ConvCase> all = cases(opt.set);
  if (all.empty()) {
    std::fprintf(stderr, "bench_conv_passes: no cases in set '%s'\n", opt.set.c_str());
    return 2;
  }
  if (hearth::cpu::onednn::calls_taken() == 0) {
    ::setenv("HEARTH_ONEDNN_ALWAYS", "1", 1);
    hearth::conv2d(hearth::randn({1, 16, 8, 8}), hearth::randn({16, 16, 3, 3}));
    ::unsetenv("HEARTH_ONEDNN_ALWAYS");
    if (hearth::cpu::onednn::calls_taken() == 0) {
      std::fprintf(stderr, "bench_conv_passes: this build has no oneDNN (hearth env says why)\n");
      return 1;
    }
  }
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  const char* layout = opt.format == hearth::MemoryFormat::channels_last ? "NHWC" : "NCHW";
  std::printf(
      "CPU convolution passes, %s %s, %d threads, OMP_WAIT_POLICY %s; ms per call (medians, the two paths in "
      "turn)\n",
      hearth::dtype_name(opt.dtype), layout, opt.threads, wait_policy ? wait_policy : "unset");
  std::printf("%-36s %9s %-8s %10s %10s %7s  %s\n", "case", "MMAC/thr", "pass", "oneDNN", "reference", "ref/dnn",
              "rule");
  for (const ConvCase& cc : all)
    if (opt.filter.empty() || cc.name.find(opt.filter) != std::string::npos) run_case(cc, opt);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  hearth::validate_switches_or_exit("cpu_conv_passes");  // a bad HEARTH_* value: one line, status 2
  return hearth::run_reporting_exceptions("bench_conv_passes", [&] { return run(argc, argv); });
}
