// Times hearth's CPU GEMM and conv2d (forward, and forward + backward) on the
// layer shapes of ResNet-50, for the side-by-side table that
// bench/run_cpu_compare.sh prints against bench/cpu_ops_pytorch.py (which times
// the same cases with PyTorch). A program, never a test: it prints, it asserts nothing.
//
//   bench_cpu_ops [--batch N] [--threads T] [--min-time S] [--csv] [--filter TEXT]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/exception_report.h"
#include "hearth/core/switches.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/linalg.h"
#include "hearth/ops/nn_functional.h"

namespace {

using hearth::Pair;
using hearth::Shape;
using hearth::Tensor;

struct Options {
  int64_t batch = 8;
  int threads = 2;
  double min_time = 1.0;
  bool csv = false;
  std::string filter;
};

struct ConvCase {
  const char* name;
  int64_t c, o, hw, k, stride, pad;
};

// The distinct convolution shapes ResNet-50 spends its time in.
const std::vector<ConvCase> kConvCases = {
    {"conv1_7x7s2_3to64_224", 3, 64, 224, 7, 2, 3},  {"conv_3x3_64to64_56", 64, 64, 56, 3, 1, 1},
    {"conv_1x1_256to64_56", 256, 64, 56, 1, 1, 0},   {"conv_3x3_128to128_28", 128, 128, 28, 3, 1, 1},
    {"conv_3x3_256to256_14", 256, 256, 14, 3, 1, 1}, {"conv_3x3_512to512_7", 512, 512, 7, 3, 1, 1},
};

double now_ms() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

// Median of repeated runs after a warm-up; repeats until min_time has passed
// (at least 5 runs) so short ops are not dominated by timer noise.
double time_ms(const std::function<void()>& fn, double min_time_s) {
  fn();
  fn();
  std::vector<double> runs;
  const double start = now_ms();
  while (runs.size() < 5 || (now_ms() - start < min_time_s * 1e3 && runs.size() < 200)) {
    const double t0 = now_ms();
    fn();
    runs.push_back(now_ms() - t0);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

struct Row {
  std::string name;
  double fwd_ms, fwd_bwd_ms, gflop;  // gflop of the forward pass
};

Row time_conv(const ConvCase& cc, const Options& opt) {
  const int64_t n = opt.batch;
  Tensor x = hearth::randn({n, cc.c, cc.hw, cc.hw});
  Tensor w = hearth::mul(hearth::randn({cc.o, cc.c, cc.k, cc.k}), 0.05);
  const Pair stride{cc.stride, cc.stride}, pad{cc.pad, cc.pad};
  const int64_t out = (cc.hw + 2 * cc.pad - cc.k) / cc.stride + 1;
  Tensor grad = hearth::randn({n, cc.o, out, out});
  Row r;
  r.name = cc.name;
  r.gflop = 2.0 * n * cc.o * out * out * cc.c * cc.k * cc.k * 1e-9;
  r.fwd_ms = time_ms(
      [&] {
        hearth::NoGradGuard no_grad;
        hearth::conv2d(x, w, Tensor(), stride, pad);
      },
      opt.min_time);
  // Input gradient too (as every layer but the first needs), plus the weight gradient.
  Tensor xg = x.detach().requires_grad_();
  Tensor wg = w.detach().requires_grad_();
  r.fwd_bwd_ms = time_ms(
      [&] {
        xg.zero_grad_();
        wg.zero_grad_();
        hearth::conv2d(xg, wg, Tensor(), stride, pad).backward(grad);
      },
      opt.min_time);
  return r;
}

// The classifier of ResNet-50: [batch, 2048] x [1000, 2048]^T (+ bias).
Row time_fc(const Options& opt) {
  Tensor x = hearth::randn({opt.batch, 2048});
  Tensor w = hearth::mul(hearth::randn({1000, 2048}), 0.02);
  Tensor b = hearth::randn({1000});
  Tensor grad = hearth::randn({opt.batch, 1000});
  Row r{"fc_2048to1000", 0, 0, 2.0 * opt.batch * 2048 * 1000 * 1e-9};
  r.fwd_ms = time_ms(
      [&] {
        hearth::NoGradGuard no_grad;
        hearth::linear(x, w, b);
      },
      opt.min_time);
  Tensor xg = x.detach().requires_grad_(), wg = w.detach().requires_grad_(), bg = b.detach().requires_grad_();
  r.fwd_bwd_ms = time_ms(
      [&] {
        xg.zero_grad_();
        wg.zero_grad_();
        bg.zero_grad_();
        hearth::linear(xg, wg, bg).backward(grad);
      },
      opt.min_time);
  return r;
}

// A square GEMM: what OpenBLAS itself reaches, for scale.
Row time_gemm(const Options& opt, int64_t size) {
  Tensor a = hearth::randn({size, size}), b = hearth::randn({size, size});
  Tensor grad = hearth::randn({size, size});
  Row r{"gemm_" + std::to_string(size), 0, 0, 2.0 * size * size * size * 1e-9};
  r.fwd_ms = time_ms(
      [&] {
        hearth::NoGradGuard no_grad;
        hearth::mm(a, b);
      },
      opt.min_time);
  Tensor ag = a.detach().requires_grad_(), bg = b.detach().requires_grad_();
  r.fwd_bwd_ms = time_ms(
      [&] {
        ag.zero_grad_();
        bg.zero_grad_();
        hearth::mm(ag, bg).backward(grad);
      },
      opt.min_time);
  return r;
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
    if (!std::strcmp(argv[i], "--batch"))
      o.batch = std::atoll(next());
    else if (!std::strcmp(argv[i], "--threads"))
      o.threads = std::atoi(next());
    else if (!std::strcmp(argv[i], "--min-time"))
      o.min_time = std::atof(next());
    else if (!std::strcmp(argv[i], "--filter"))
      o.filter = next();
    else if (!std::strcmp(argv[i], "--csv"))
      o.csv = true;
    else {
      std::fprintf(stderr, "usage: bench_cpu_ops [--batch N] [--threads T] [--min-time S] [--csv] [--filter TEXT]\n");
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

static int run(int argc, char** argv);

int main(int argc, char** argv) {
  hearth::validate_switches_or_exit("cpu_ops_vs_pytorch");  // a bad HEARTH_* value: one line, status 2
  return hearth::run_reporting_exceptions("bench_cpu_ops", [&] { return run(argc, argv); });
}

static int run(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  // hearth threads everything, GEMMs included, through OpenMP (hearth/backends/cpu/gemm.h).
  omp_set_num_threads(opt.threads);
  auto wanted = [&](const std::string& name) {
    return opt.filter.empty() || name.find(opt.filter) != std::string::npos;
  };

  if (opt.csv)
    std::printf("name,fwd_ms,fwd_bwd_ms\n");
  else
    std::printf("hearth CPU ops, batch %lld, %d threads\n%-24s %10s %14s %10s\n", static_cast<long long>(opt.batch),
                opt.threads, "case", "fwd ms", "fwd+bwd ms", "fwd GFLOP/s");
  auto emit = [&](const Row& r) {
    if (opt.csv)
      std::printf("%s,%.3f,%.3f\n", r.name.c_str(), r.fwd_ms, r.fwd_bwd_ms);
    else
      std::printf("%-24s %10.2f %14.2f %10.1f\n", r.name.c_str(), r.fwd_ms, r.fwd_bwd_ms, r.gflop / r.fwd_ms * 1e3);
    std::fflush(stdout);
  };
  for (const ConvCase& cc : kConvCases)
    if (wanted(cc.name)) emit(time_conv(cc, opt));
  if (wanted("fc_2048to1000")) emit(time_fc(opt));
  if (wanted("gemm_1024")) emit(time_gemm(opt, 1024));
  return 0;
}
