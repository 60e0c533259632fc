// Runs every parity case on every registered, available device kind but the
// CPU (testdev always; cuda or vulkan where such a device is) against the CPU,
// and prints a table of op x kind; then checks that every kernel each kind
// registers has a case. A kind without a fusion's kernel runs the fusion's
// composition of primitives (hearth/dispatch/registry.h), so on testdev, a
// backend of primitives alone, the fusions' cases test their compositions
// against the CPU's fused kernels.
//
// HEARTH_PARITY_KINDS (kind names, comma-separated) picks the kinds;
// HEARTH_PARITY_FILTER (a substring of case names) and HEARTH_PARITY_REPEAT
// (runs per case and dtype) narrow the table down when chasing one failure;
// HEARTH_PARITY_SMALL_ONLY=1 leaves out the cases sized for an accelerator.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "hearth/autograd/engine.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/generator.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"
#include "tests/parity/parity.h"
#include "tests/support/tensor_compare.h"
#include "tests/support/test_device.h"

namespace hearth::parity {
namespace {

using testing::relative_error;

struct Outcome {
  double out_err = 0, grad_err = 0;
  int worst_out = -1;  // which output had out_err, to say where a failure is
  bool ok = true;
  std::string error;
};

Outcome run_case(const ParityCase& c, DType dt, Device dev) {
  Outcome r;
  manual_seed(1234);
  std::vector<Tensor> base = c.inputs(dt);
  std::vector<Tensor> cpu_in, dev_in;
  for (const Tensor& t : base) {
    if (!t.defined()) {
      cpu_in.emplace_back();
      dev_in.emplace_back();
      continue;
    }
    Tensor a = t.detach(), b = t.to(dev).detach();
    bool grad = c.backward && t.is_floating_point();
    if (grad) {
      a.requires_grad_();
      b.requires_grad_();
    }
    cpu_in.push_back(a);
    dev_in.push_back(b);
  }
  double tol = std::max(c.tolerance, default_tolerance(dt));
  manual_seed(99);
  std::vector<Tensor> cpu_out = c.run(cpu_in, Device());
  manual_seed(99);
  std::vector<Tensor> dev_out = c.run(dev_in, dev);
  std::vector<Tensor> roots_c, roots_d, grads_c, grads_d;
  for (size_t i = 0; i < cpu_out.size(); ++i) {
    EXPECT_EQ(dev_out[i].device(), dev) << c.name << ": output " << i << " is not on " << dev.str();
    double e = relative_error(dev_out[i], cpu_out[i]);
    if (e > r.out_err || r.worst_out < 0) r.worst_out = static_cast<int>(i);
    r.out_err = std::max(r.out_err, e);
    if (c.backward && cpu_out[i].requires_grad()) {
      Tensor g = random_input(cpu_out[i].shape(), cpu_out[i].dtype());
      roots_c.push_back(cpu_out[i]);
      roots_d.push_back(dev_out[i]);
      grads_c.push_back(g);
      grads_d.push_back(g.to(dev));
    }
  }
  if (!roots_c.empty()) {
    autograd::run_backward(roots_c, grads_c, false);
    autograd::run_backward(roots_d, grads_d, false);
    for (size_t i = 0; i < cpu_in.size(); ++i) {
      if (!cpu_in[i].defined() || !cpu_in[i].requires_grad()) continue;
      Tensor gc = cpu_in[i].grad(), gd = dev_in[i].grad();
      if (!gc.defined() && !gd.defined()) continue;
      if (gc.defined() != gd.defined()) {
        r.grad_err = INFINITY;
        continue;
      }
      r.grad_err = std::max(r.grad_err, relative_error(gd, gc));
    }
  }
  r.ok = r.out_err <= tol && r.grad_err <= tol * 4;  // backward chains several kernels
  return r;
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The kinds under test: every registered kind but the CPU with a runtime that
// is available here (testdev is registered first, so it always is one), or
// those HEARTH_PARITY_KINDS names. Unavailable kinds come back in `skipped`,
// with the runtime's reason.
std::vector<DeviceKind> kinds_under_test(std::vector<std::string>* skipped) {
  testing::test_device_kind();
  std::vector<DeviceKind> kinds;
  const char* only = std::getenv("HEARTH_PARITY_KINDS");
  const std::vector<std::string> wanted = only ? split_names(only) : std::vector<std::string>{};
  for (int id = 1; id < num_device_kinds(); ++id) {
    const DeviceKind kind{static_cast<uint8_t>(id)};
    const std::string& name = device_kind_name(kind);
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), name) == wanted.end()) continue;
    if (!has_device_runtime(kind)) continue;
    DeviceRuntime& rt = device_runtime(kind);
    if (!rt.is_available() || rt.device_count() < 1) {
      if (skipped) skipped->push_back(name + " (" + rt.unavailable_reason() + ")");
      continue;
    }
    kinds.push_back(kind);
  }
  return kinds;
}

// Whether the kind computes every op the case covers in dtype dt: with its
// own kernel, or for a fusion with the fusion's composition.
bool kind_runs(const ParityCase& c, DeviceKind kind, DType dt) {
  for (const std::string& name : c.covers) {
    OpHandle op = find_op(name);
    if (!op) return false;
    if (supports(op, kind, dt)) continue;
    if (is_fusion(op) && op->composition) continue;
    return false;
  }
  return true;
}

struct Tally {
  int cases = 0, passed = 0;
  int not_run = 0;        // runs a kernel refused with NotImplementedError (a dtype it lacks)
  bool composed = false;  // dispatch ran the op as its composition of primitives
};

TEST(Parity, EveryDeviceKernelMatchesTheCpu) {
  std::vector<std::string> skipped;
  const std::vector<DeviceKind> kinds = kinds_under_test(&skipped);
  for (const std::string& s : skipped) std::printf("\nparity: skipping %s\n", s.c_str());
  // Only where HEARTH_PARITY_KINDS names kinds (testdev is always available):
  // a GPU job on a machine without one skips, as the GPU tests do.
  if (kinds.empty()) GTEST_SKIP() << "no device kind of HEARTH_PARITY_KINDS is available here";
  const char* filter = std::getenv("HEARTH_PARITY_FILTER");
  const char* repeat_env = std::getenv("HEARTH_PARITY_REPEAT");
  const int repeat = repeat_env ? std::max(1, std::atoi(repeat_env)) : 1;
  // Small shapes only: every case but those sized for an accelerator's launch
  // geometry (the run under Vulkan's validation layer, where each call is
  // checked and the large cases would take minutes on a software device).
  const char* small_env = std::getenv("HEARTH_PARITY_SMALL_ONLY");
  const bool small_only = small_env != nullptr && std::string(small_env) == "1";
  int failures = 0, runs = 0, not_run = 0;
  // op -> kind name -> runs of cases covering it.
  std::map<std::string, std::map<std::string, Tally>> table;
  for (DeviceKind kind : kinds) {
    const Device dev(kind, 0);
    const std::string kind_name = device_kind_name(kind);
    std::printf("\n[%s] %-44s %-9s %12s %12s %8s  %s\n", kind_name.c_str(), "case", "dtype", "out rel err",
                "grad rel err", "ms", "result");
    for (const ParityCase& c : parity_cases()) {
      if (filter && c.name.find(filter) == std::string::npos) continue;
      if (c.accelerator_scale && (kind_name == "testdev" || small_only)) continue;
      for (int rep = 0; rep < repeat; ++rep)
        for (DType dt : c.dtypes) {
          if (!kind_runs(c, kind, dt)) continue;
          Outcome o;
          reset_composed_calls();
          const auto start = std::chrono::steady_clock::now();
          bool needs_primitive = false;  // a composition met a primitive the kind lacks in dt
          try {
            o = run_case(c, dt, dev);
          } catch (const std::exception& e) {
            // kind_runs() admits a fusion by its composition; the composition's
            // primitives may still be missing in this dtype (a backend without
            // half-precision storage, say). That is a gap in the kind's op set,
            // which the coverage test and `hearth ops` show, not a wrong result.
            // Likewise a kernel that says it cannot take one of the case's
            // operands (a cast into a dtype it does not store): the row is
            // marked, and every op must still pass somewhere (below).
            if (dynamic_cast<const NotImplementedError*>(&e) != nullptr) {
              needs_primitive = true;
              std::printf("[%s] %-44s %-9s %12s %12s %8s  not run: %s\n", kind_name.c_str(),
                          c.name.substr(0, 44).c_str(), dtype_name(dt), "-", "-", "-",
                          std::string(e.what()).substr(0, 140).c_str());
            } else {
              o.ok = false;
              o.error = e.what();
            }
          }
          if (needs_primitive) {
            ++not_run;
            for (const std::string& op : c.covers) table[op][kind_name].not_run += 1;
            continue;
          }
          const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
          ++runs;
          failures += o.ok ? 0 : 1;
          const std::map<std::string, int64_t> composed = composed_calls();
          for (const std::string& op : c.covers) {
            Tally& t = table[op][kind_name];
            t.cases += 1;
            t.passed += o.ok ? 1 : 0;
            t.composed = t.composed || composed.count(op) > 0;
          }
          if (!o.ok && o.error.empty() && o.worst_out >= 0) o.error = "worst output #" + std::to_string(o.worst_out);
          std::printf("[%s] %-44s %-9s %12.3e %12.3e %8.1f  %s %s\n", kind_name.c_str(), c.name.substr(0, 44).c_str(),
                      dtype_name(dt), o.out_err, o.grad_err, ms, o.ok ? "pass" : "FAIL",
                      o.error.substr(0, 160).c_str());
        }
    }
  }
  // The table: per op and kind, the case runs that covered it and how many
  // passed; "composed" where dispatch ran the fusion as its composition of
  // primitives, "no kernel" where the kind lacks the fusion's kernel and the
  // functional layer took another path (the ops the fusion fuses).
  std::printf("\n%-34s", "op");
  for (DeviceKind kind : kinds) std::printf(" %22s", device_kind_name(kind).c_str());
  std::printf("\n");
  for (const auto& [op, per_kind] : table) {
    std::printf("%-34s", op.c_str());
    OpHandle h = find_op(op);
    for (DeviceKind kind : kinds) {
      auto it = per_kind.find(device_kind_name(kind));
      std::string cell = "-";
      if (it != per_kind.end()) {
        cell = std::to_string(it->second.passed) + "/" + std::to_string(it->second.cases);
        if (it->second.not_run > 0) cell += " (" + std::to_string(it->second.not_run) + " not run)";
        if (it->second.composed)
          cell += " composed";
        else if (h && is_fusion(h) && !h->kernels[kind.id].fn)
          cell += " no kernel";
      }
      std::printf(" %22s", cell.c_str());
    }
    std::printf("\n");
  }
  std::printf("%d parity runs on %zu kind(s), %d failed, %d not run (a kernel lacked a dtype)\n", runs, kinds.size(),
              failures, not_run);
  EXPECT_EQ(failures, 0);
  // A dtype a kernel lacks may leave runs undone, never a kernel untested:
  // every op a kind has a kernel for passes at least one run there.
  if (!filter) {
    for (DeviceKind kind : kinds) {
      std::string untested;
      for (OpHandle op : all_ops()) {
        if (!op->kernels[kind.id].fn) continue;
        auto it = table.find(op->def.name);
        const bool passed_once = it != table.end() && it->second.count(device_kind_name(kind)) &&
                                 it->second.at(device_kind_name(kind)).passed > 0;
        if (!passed_once) untested += " " + op->def.name;
      }
      EXPECT_TRUE(untested.empty()) << device_kind_name(kind) << " kernels that passed no parity run:" << untested;
    }
  }
  EXPECT_TRUE(fallback_stats().empty()) << "parity cases fell back to the CPU:\n" << fallback_report();
}

TEST(Parity, EveryKernelOfEveryKindHasACase) {
  std::set<std::string> covered;
  for (const ParityCase& c : parity_cases()) covered.insert(c.covers.begin(), c.covers.end());
  for (DeviceKind kind : kinds_under_test(nullptr)) {
    std::vector<std::string> missing, not_native;
    for (OpHandle op : all_ops()) {
      const bool native = op->kernels[kind.id].fn != nullptr;
      if (native && !covered.count(op->def.name)) missing.push_back(op->def.name);
      if (!native && op->kernels[kCpu.id].fn) not_native.push_back(op->def.name);
    }
    std::printf("\nops without a %s kernel (fusions run composed; the rest through HEARTH_ENABLE_CPU_FALLBACK=1):",
                device_kind_name(kind).c_str());
    for (auto& n : not_native) std::printf(" %s", n.c_str());
    std::printf("\n");
    std::string m;
    for (auto& n : missing) m += " " + n;
    EXPECT_TRUE(missing.empty()) << device_kind_name(kind) << " kernels without a parity case:" << m;
  }
}

}  // namespace
}  // namespace hearth::parity
