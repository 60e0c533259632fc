// Runs every parity case on cuda:0 against the CPU and prints the table; then
// checks that every op registered for cuda has a case.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/gpu/parity.h"

namespace hearth::gpu_testing {
namespace {

struct Outcome {
  double out_err = 0, grad_err = 0;
  int worst_out = -1;  // which output had out_err, to say where a failure is
  bool ok = true;
  std::string error;
};

Outcome run_case(const ParityCase& c, DType dt, Device gpu) {
  Outcome r;
  manual_seed(1234);
  std::vector<Tensor> base = c.inputs(dt);
  std::vector<Tensor> cpu_in, gpu_in;
  for (const Tensor& t : base) {
    if (!t.defined()) {
      cpu_in.emplace_back();
      gpu_in.emplace_back();
      continue;
    }
    Tensor a = t.detach(), b = t.to(gpu).detach();
    bool grad = c.backward && t.is_floating_point();
    if (grad) {
      a.requires_grad_();
      b.requires_grad_();
    }
    cpu_in.push_back(a);
    gpu_in.push_back(b);
  }
  double tol = std::max(c.tolerance, default_tolerance(dt));
  manual_seed(99);
  std::vector<Tensor> cpu_out = c.run(cpu_in, Device());
  manual_seed(99);
  std::vector<Tensor> gpu_out = c.run(gpu_in, gpu);
  std::vector<Tensor> roots_c, roots_g, grads_c, grads_g;
  for (size_t i = 0; i < cpu_out.size(); ++i) {
    EXPECT_EQ(gpu_out[i].device(), gpu) << c.name << ": output " << i << " is not on the GPU";
    double e = relative_error(gpu_out[i], cpu_out[i]);
    if (e > r.out_err || r.worst_out < 0) r.worst_out = static_cast<int>(i);
    r.out_err = std::max(r.out_err, e);
    if (c.backward && cpu_out[i].requires_grad()) {
      Tensor g = random_input(cpu_out[i].shape(), cpu_out[i].dtype());
      roots_c.push_back(cpu_out[i]);
      roots_g.push_back(gpu_out[i]);
      grads_c.push_back(g);
      grads_g.push_back(g.to(gpu));
    }
  }
  if (!roots_c.empty()) {
    autograd::run_backward(roots_c, grads_c, false);
    autograd::run_backward(roots_g, grads_g, false);
    for (size_t i = 0; i < cpu_in.size(); ++i) {
      if (!cpu_in[i].defined() || !cpu_in[i].requires_grad()) continue;
      Tensor gc = cpu_in[i].grad(), gg = gpu_in[i].grad();
      if (!gc.defined() && !gg.defined()) continue;
      if (gc.defined() != gg.defined()) {
        r.grad_err = INFINITY;
        continue;
      }
      r.grad_err = std::max(r.grad_err, relative_error(gg, gc));
    }
  }
  r.ok = r.out_err <= tol && r.grad_err <= tol * 4;  // backward chains several kernels
  return r;
}

// HEARTH_PARITY_FILTER (a substring of case names) and HEARTH_PARITY_REPEAT
// (runs per case and dtype) narrow the table down when chasing one failure.
TEST(Parity, EveryCudaKernelMatchesTheCpu) {
  HEARTH_REQUIRE_CUDA();
  Device gpu = cuda0();
  const char* filter = std::getenv("HEARTH_PARITY_FILTER");
  const char* repeat_env = std::getenv("HEARTH_PARITY_REPEAT");
  const int repeat = repeat_env ? std::max(1, std::atoi(repeat_env)) : 1;
  int failures = 0, runs = 0;
  std::printf("\n%-44s %-9s %12s %12s  %s\n", "case", "dtype", "out rel err", "grad rel err", "result");
  for (const ParityCase& c : parity_cases()) {
    if (filter && c.name.find(filter) == std::string::npos) continue;
    for (int rep = 0; rep < repeat; ++rep)
      for (DType dt : c.dtypes) {
        Outcome o;
        try {
          o = run_case(c, dt, gpu);
        } catch (const std::exception& e) {
          o.ok = false;
          o.error = e.what();
        }
        ++runs;
        failures += o.ok ? 0 : 1;
        if (!o.ok && o.error.empty() && o.worst_out >= 0) o.error = "worst output #" + std::to_string(o.worst_out);
        std::printf("%-44s %-9s %12.3e %12.3e  %s %s\n", c.name.substr(0, 44).c_str(), dtype_name(dt), o.out_err,
                    o.grad_err, o.ok ? "pass" : "FAIL", o.error.substr(0, 160).c_str());
      }
  }
  std::printf("%d parity runs, %d failed\n", runs, failures);
  EXPECT_EQ(failures, 0);
}

TEST(Parity, EveryCudaOpHasACaseAndNonNativeOpsAreListed) {
  DeviceKind cuda;
  ASSERT_TRUE(find_device_kind("cuda", &cuda));
  std::set<std::string> covered;
  for (const ParityCase& c : parity_cases()) covered.insert(c.covers.begin(), c.covers.end());
  std::vector<std::string> missing, cpu_only;
  for (OpHandle op : all_ops()) {
    bool native = op->kernels[cuda.id].fn != nullptr;
    if (native && !covered.count(op->def.name)) missing.push_back(op->def.name);
    if (!native && op->kernels[kCpu.id].fn) cpu_only.push_back(op->def.name);
  }
  std::printf("\nops without a cuda kernel (run through HEARTH_ENABLE_CPU_FALLBACK=1):");
  for (auto& n : cpu_only) std::printf(" %s", n.c_str());
  std::printf("\n");
  std::string m;
  for (auto& n : missing) m += " " + n;
  EXPECT_TRUE(missing.empty()) << "cuda kernels without a parity case:" << m;
}

}  // namespace
}  // namespace hearth::gpu_testing
