// The CPU fallback, proven on the host-backed "testdev" kind (tests/support),
// which here lacks div and sum, mul for integers, and (in one test) the
// composition of sgd_step_foreach: every other primitive it implements.
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/device_runtime.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/schemas/optim.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "hearth/optim/functional.h"
#include "tests/support/test_device.h"

namespace hearth {
namespace {

constexpr const char* kFallbackVar = "HEARTH_ENABLE_CPU_FALLBACK";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Sets (or unsets, with nullptr) an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class Fallback : public ::testing::Test {
 protected:
  void SetUp() override { reset_fallback_stats(); }
  void TearDown() override { reset_fallback_stats(); }
  Device dev_ = testing::test_device();
  ScopedEnv off_{kFallbackVar, nullptr};  // every test starts with the fallback off
  testing::ScopedOpRemoval lacks_{{OpId::div, OpId::sum}, {{OpId::mul, {DType::float32, DType::float64}}}};
};

std::string not_implemented_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const NotImplementedError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected NotImplementedError";
  return {};
}

Tensor on(const Tensor& t, Device d) { return t.to(d); }

TEST_F(Fallback, MissingOpErrorNamesTheOpTheDeviceAndTheWayOut) {
  Tensor a = on(tensor({1.f, 2.f}), dev_), b = on(tensor({4.f, 8.f}), dev_);
  std::string msg = not_implemented_message([&] { div(a, b); });
  EXPECT_EQ(msg,
            "[div] is not implemented for testdev. Set HEARTH_ENABLE_CPU_FALLBACK=1 to run it on the CPU (slower), "
            "or move the tensors to the CPU.");
  EXPECT_TRUE(fallback_stats().empty());
}

TEST_F(Fallback, MissingDtypeErrorNamesTheDtype) {
  Tensor a = on(tensor(std::vector<int64_t>{1, 2}), dev_);
  std::string msg = not_implemented_message([&] { mul(a, a); });
  EXPECT_TRUE(contains(msg, "[mul] is not implemented for testdev for dtype int64")) << msg;
  EXPECT_TRUE(contains(msg, "HEARTH_ENABLE_CPU_FALLBACK=1")) << msg;
}

TEST_F(Fallback, VariableIsReadAtEveryCall) {
  Tensor a = on(tensor({1.f, 2.f, 3.f}), dev_), b = on(tensor({2.f, 4.f, 5.f}), dev_);
  EXPECT_FALSE(cpu_fallback_enabled());
  EXPECT_THROW(div(a, b), NotImplementedError);
  {
    ScopedEnv on_env(kFallbackVar, "1");
    EXPECT_TRUE(cpu_fallback_enabled());
    ::testing::internal::CaptureStderr();
    Tensor q = div(a, b);
    ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(q.device(), dev_);
    EXPECT_EQ(q.to_vector<float>(), div(a.cpu(), b.cpu()).to_vector<float>());
  }
  EXPECT_FALSE(cpu_fallback_enabled());
  EXPECT_THROW(div(a, b), NotImplementedError);
  for (const char* yes : {"true", "YES", "on"}) {
    ScopedEnv e(kFallbackVar, yes);
    EXPECT_TRUE(cpu_fallback_enabled()) << yes;
  }
  for (const char* no : {"0", "", "false", "No", "OFF"}) {
    ScopedEnv e(kFallbackVar, no);
    EXPECT_FALSE(cpu_fallback_enabled()) << no;
  }
  // Anything else is refused, naming the variable, rather than read as off.
  for (const char* bad : {"garbage", "2", "enabled"}) {
    ScopedEnv e(kFallbackVar, bad);
    try {
      cpu_fallback_enabled();
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ValueError& err) {
      EXPECT_TRUE(contains(err.what(), std::string("HEARTH_ENABLE_CPU_FALLBACK='") + bad + "' is not allowed"))
          << err.what();
    }
  }
}

TEST_F(Fallback, ResultMatchesTheCpuForBroadcastNonContiguousAndDtypeMisses) {
  ScopedEnv on_env(kFallbackVar, "1");
  ::testing::internal::CaptureStderr();
  Tensor a = transpose(tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3}), 0, 1);  // [3, 2], strided
  Tensor b = tensor(std::vector<float>{2, 4});                                            // broadcast over rows
  Tensor q = div(on(a, dev_), on(b, dev_));
  EXPECT_EQ(q.device(), dev_);
  EXPECT_EQ(q.shape(), (Shape{3, 2}));
  EXPECT_EQ(q.to_vector<float>(), div(a, b).to_vector<float>());

  Tensor i = tensor(std::vector<int64_t>{3, -4, 5});
  Tensor p = mul(on(i, dev_), on(i, dev_));
  EXPECT_EQ(p.device(), dev_);
  EXPECT_EQ(p.dtype(), DType::int64);
  EXPECT_EQ(p.to_vector<int64_t>(), (std::vector<int64_t>{9, 16, 25}));

  Tensor s = sum(on(tensor({1.f, 2.f, 3.5f}), dev_));  // sum has no testdev kernel either
  EXPECT_EQ(s.device(), dev_);
  EXPECT_EQ(s.item<float>(), 6.5f);
  ::testing::internal::GetCapturedStderr();
}

TEST_F(Fallback, WarnsOncePerOpName) {
  ScopedEnv on_env(kFallbackVar, "1");
  Tensor a = on(tensor({1.f, 2.f}), dev_);
  Tensor i = on(tensor(std::vector<int64_t>{1, 2}), dev_);

  ::testing::internal::CaptureStderr();
  div(a, a);
  div(a, a);
  mul(i, i);
  div(a, a);
  mul(i, i);
  std::string err = ::testing::internal::GetCapturedStderr();
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t pos = err.find(needle); pos != std::string::npos; pos = err.find(needle, pos + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("[div] is not implemented for testdev; running it on the CPU"), 1u) << err;
  EXPECT_EQ(count("[mul] is not implemented for testdev; running it on the CPU"), 1u) << err;
  EXPECT_EQ(count("warning"), 2u) << err;
  EXPECT_TRUE(contains(err, "fallback_report()")) << err;

  reset_fallback_stats();  // forgets the warnings too
  ::testing::internal::CaptureStderr();
  div(a, a);
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count("[div] is not implemented for testdev"), 1u) << err;
}

TEST_F(Fallback, StatsCountCallsAndBytesAndResetClearsThem) {
  ScopedEnv on_env(kFallbackVar, "1");
  Tensor a = on(ones({1000}), dev_), b = on(full({1000}, 2.0), dev_);
  ::testing::internal::CaptureStderr();
  div(a, b);
  div(a, b);
  ::testing::internal::GetCapturedStderr();
  auto stats = fallback_stats();
  ASSERT_EQ(stats.count("div"), 1u);
  EXPECT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats["div"].calls, 2);
  EXPECT_EQ(stats["div"].bytes_to_cpu, 2 * 2 * 4000);  // two inputs of 4000 bytes, twice
  EXPECT_EQ(stats["div"].bytes_from_cpu, 2 * 4000);    // one output, twice

  std::string report = fallback_report();
  EXPECT_TRUE(contains(report, "CPU fallback")) << report;
  EXPECT_TRUE(std::regex_search(report, std::regex("\ndiv +2 +0\\.016 +0\\.008\n"))) << report;

  reset_fallback_stats();
  EXPECT_TRUE(fallback_stats().empty());
  EXPECT_EQ(fallback_report(), "");
}

TEST_F(Fallback, AutogradThroughAFallenBackOp) {
  ScopedEnv on_env(kFallbackVar, "1");
  ::testing::internal::CaptureStderr();
  Tensor x = on(tensor({1.f, 2.f, 3.f}), dev_).requires_grad_();
  Tensor y = on(tensor({2.f, 4.f, 8.f}), dev_).requires_grad_();
  Tensor z = sum(div(x, y));
  EXPECT_EQ(z.device(), dev_);
  z.backward();
  ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(x.grad().defined());
  ASSERT_TRUE(y.grad().defined());
  EXPECT_EQ(x.grad().device(), dev_);
  EXPECT_EQ(y.grad().device(), dev_);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0.5f, 0.25f, 0.125f}));          // 1 / y
  EXPECT_EQ(y.grad().to_vector<float>(), (std::vector<float>{-0.25f, -0.125f, -0.046875f}));  // -x / y^2
  EXPECT_GE(fallback_stats()["div"].calls, 2) << "the backward's div falls back too";
}

// A test-only op that increments its input in place (like batch norm's
// running statistics) and returns twice the new value. Only the CPU has it.
constexpr const char* kIncrementOp = "test_only_increment_";

void increment_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  float* p = static_cast<float*>(x.data_ptr());
  float* o = static_cast<float*>(call.out(0).data_ptr());
  for (int64_t i = 0; i < x.numel(); ++i) {
    p[i] += 1.0f;
    o[i] = 2.0f * p[i];
  }
}

OpHandle increment_op() {
  static OpHandle op = [] {
    define_op(OpDef{kIncrementOp, {0}, 0});
    return register_kernel(kIncrementOp, kCpu, increment_kernel, {DType::float32});
  }();
  return op;
}

// A foreach op names the mutated inputs of its first group; the fallback
// writes back those positions of every group (the optimizer's foreach steps).
TEST_F(Fallback, ForeachOpsWriteBackEveryGroup) {
  ScopedEnv on_env(kFallbackVar, "1");
  std::vector<Tensor> params, grads, bufs;
  for (int i = 0; i < 3; ++i) {
    params.push_back(on(tensor(std::vector<float>{1.f + i, 2.f}), dev_));
    grads.push_back(on(tensor(std::vector<float>{0.5f, -1.f}), dev_));
    bufs.push_back(on(tensor(std::vector<float>{0.f, 0.f}), dev_));
  }
  SgdStepAttrs a;
  a.lr = 0.1;
  a.momentum = 0.9;
  a.init_buffer = true;
  // The functional layer defines the op (with its mutated inputs) on first use.
  Tensor cpu_p = tensor(std::vector<float>{1.f}), cpu_b = tensor(std::vector<float>{0.f});
  optim::sgd_step_foreach_({cpu_p}, {tensor(std::vector<float>{1.f})}, {cpu_b}, a);
  OpCall call;
  for (int i = 0; i < 3; ++i) call.inputs.insert(call.inputs.end(), {params[i], grads[i], bufs[i]});
  call.set_attrs(a);
  // Without its composition (which would run it on the device), the fusion falls back.
  testing::ScopedOpRemoval uncomposed({}, {}, {OpId::sgd_step_foreach});
  ::testing::internal::CaptureStderr();
  dispatch(find_op("sgd_step_foreach"), call);
  ::testing::internal::GetCapturedStderr();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(params[i].device(), dev_);
    std::vector<float> p = params[i].to_vector<float>(), b = bufs[i].to_vector<float>();
    EXPECT_FLOAT_EQ(p[0], 1.f + i - 0.05f) << "group " << i;
    EXPECT_FLOAT_EQ(p[1], 2.1f) << "group " << i;
    EXPECT_FLOAT_EQ(b[0], 0.5f) << "group " << i;
    EXPECT_FLOAT_EQ(b[1], -1.f) << "group " << i;
  }
}

TEST_F(Fallback, MutatedInputsAreWrittenBack) {
  // A strided view on the device: the write-back must land in the right elements.
  Tensor base = on(tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3}), dev_);
  Tensor x = transpose(base, 0, 1);  // [3, 2]
  Tensor out = Tensor::empty(x.shape(), DType::float32, dev_);
  OpCall call;
  call.inputs = {x};
  call.outputs = {out};
  EXPECT_THROW(dispatch(increment_op(), call), NotImplementedError);
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6})) << "nothing ran";

  ScopedEnv on_env(kFallbackVar, "1");
  ::testing::internal::CaptureStderr();
  dispatch(increment_op(), call);
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(base.device(), dev_);
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{4, 10, 6, 12, 8, 14}));  // out is [3, 2] in x's order
  auto stats = fallback_stats();
  EXPECT_EQ(stats[kIncrementOp].calls, 1);
  EXPECT_EQ(stats[kIncrementOp].bytes_to_cpu, 24);
  EXPECT_EQ(stats[kIncrementOp].bytes_from_cpu, 48);  // the mutated input and the output
}

TEST_F(Fallback, OpsTheCpuCannotRunGiveNoFallbackHint) {
  ScopedEnv on_env(kFallbackVar, "1");
  // Only the test device implements this op: on the CPU there is nothing to fall back to.
  register_kernel("test_only_device_only", dev_.kind, increment_kernel, {DType::float32});
  OpCall call;
  call.inputs = {ones({2})};
  call.outputs = {Tensor::empty({2})};
  std::string msg = not_implemented_message([&] { dispatch(find_op("test_only_device_only"), call); });
  EXPECT_EQ(msg, "[test_only_device_only] is not implemented for cpu.");

  // An op neither device has, even with the fallback on.
  OpHandle none = define_op(OpDef{"test_only_no_kernels", {}, 0});
  OpCall dcall;
  dcall.inputs = {on(ones({2}), dev_)};
  dcall.outputs = {Tensor::empty({2}, DType::float32, dev_)};
  msg = not_implemented_message([&] { dispatch(none, dcall); });
  EXPECT_TRUE(contains(msg, "[test_only_no_kernels] is not implemented for testdev")) << msg;
  EXPECT_FALSE(contains(msg, "HEARTH_ENABLE_CPU_FALLBACK")) << msg;

  // A CPU kernel for other dtypes only: the error lists what is supported.
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  call.inputs = {i};
  call.outputs = {Tensor::empty({2}, DType::int64)};
  msg = not_implemented_message([&] { dispatch(increment_op(), call); });
  EXPECT_EQ(msg, "[test_only_increment_] is not implemented for cpu for dtype int64 (supported: float32).");
  EXPECT_TRUE(fallback_stats().empty());
}

TEST_F(Fallback, MixedDevicesAreAnErrorNamingBothDevicesAndTheOp) {
  ScopedEnv on_env(kFallbackVar, "1");  // the fallback never papers over a device mix
  Tensor a = on(tensor({1.f, 2.f}), dev_);
  Tensor b = tensor({3.f, 4.f});
  try {
    add(a, b);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "[add] expected all tensors on testdev:0, but argument 2 is on cpu");
  }
  try {
    div(b, a);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "[div] expected all tensors on cpu, but argument 2 is on testdev:0");
  }
  // dispatch checks too, outputs included (numbered after the inputs).
  OpCall call;
  call.inputs = {a, a};
  call.outputs = {Tensor::empty({2})};
  try {
    dispatch(find_op("add"), call);
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_EQ(std::string(e.what()), "[add] expected all tensors on testdev:0, but argument 3 is on cpu");
  }
  EXPECT_EQ(common_device("x", {Tensor(), a, Tensor()}), dev_);  // undefined optionals are skipped
  EXPECT_EQ(common_device("x", {}), Device());
  EXPECT_TRUE(fallback_stats().empty());
}

// A device kind with memory but no kernels at all: anything that dispatches fails.
class NoKernelRuntime final : public DeviceRuntime {
 public:
  bool is_available() const override { return true; }
  int device_count() const override { return 1; }
  std::string device_name(int) const override { return "host memory, no kernels"; }
  int auto_priority() const override { return -1; }
  void* allocate(size_t n, int) override { return std::malloc(n ? n : 1); }
  void deallocate(void* p, int) override { std::free(p); }
  void copy_from_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_to_host(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
  void copy_within(void* d, const void* s, size_t n, int) override { std::memcpy(d, s, n); }
};

Device no_kernel_device() {
  static DeviceKind kind = [] {
    DeviceKind k = register_device_kind("nokernels");
    register_device_runtime(k, std::make_unique<NoKernelRuntime>());
    return k;
  }();
  return Device(kind, 0);
}

void expect_view_of(const Tensor& v, const Tensor& base, const Shape& shape, const Strides& strides, int64_t offset) {
  EXPECT_EQ(v.storage().get(), base.storage().get());
  EXPECT_EQ(v.device(), base.device());
  EXPECT_EQ(v.shape(), shape);
  EXPECT_EQ(v.strides(), strides);
  EXPECT_EQ(v.offset(), offset);
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST_F(Fallback, ViewOpsNeverDispatch) {
  Device nk = no_kernel_device();
  Tensor base = on(tensor(iota(24), Shape{2, 3, 4}), nk);  // contiguous: copied by the runtime, no kernel
  ASSERT_EQ(base.device(), nk);
  expect_view_of(transpose(base, 0, 2), base, {4, 3, 2}, {1, 4, 12}, 0);
  expect_view_of(permute(base, {1, 2, 0}), base, {3, 4, 2}, {4, 1, 12}, 0);
  expect_view_of(view(base, {6, 4}), base, {6, 4}, {4, 1}, 0);
  expect_view_of(reshape(base, {-1}), base, {24}, {1}, 0);
  expect_view_of(narrow(base, 2, 1, 2), base, {2, 3, 2}, {12, 4, 1}, 1);
  expect_view_of(select(base, 1, 2), base, {2, 4}, {12, 1}, 8);
  expect_view_of(slice(base, 2, 0, 4, 2), base, {2, 3, 2}, {12, 4, 2}, 0);
  expect_view_of(unsqueeze(base, 0), base, {1, 2, 3, 4}, {24, 12, 4, 1}, 0);
  expect_view_of(squeeze(unsqueeze(base, 1)), base, {2, 3, 4}, {12, 4, 1}, 0);
  expect_view_of(expand(select(base, 0, 1), {5, 3, 4}), base, {5, 3, 4}, {0, 4, 1}, 12);
  expect_view_of(flatten(base, 1), base, {2, 12}, {12, 1}, 0);
  expect_view_of(unflatten(base, 2, {2, 2}), base, {2, 3, 2, 2}, {12, 4, 2, 1}, 0);
  expect_view_of(unfold(base, 2, 2, 2), base, {2, 3, 2, 2}, {12, 4, 2, 1}, 0);
  // Same values as on the CPU: the bytes were never touched.
  EXPECT_EQ(base.cpu().to_vector<float>(), iota(24));

  // A reshape that must copy does dispatch, and copies never fall back.
  ScopedEnv on_env(kFallbackVar, "1");
  std::string msg = not_implemented_message([&] { reshape(transpose(base, 0, 2), {24}); });
  EXPECT_EQ(msg, "[copy_] is not implemented for nokernels.");
  EXPECT_TRUE(fallback_stats().empty());
}

TEST_F(Fallback, ViewOpsOnTheTestDeviceWorkWithoutFallback) {
  Tensor base = on(tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3}), dev_);
  Tensor t = transpose(base, 0, 1);
  EXPECT_EQ(t.device(), dev_);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));  // a testdev copy_, no fallback
  EXPECT_EQ(reshape(t, {6}).to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(select(base, 1, 2).to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_TRUE(fallback_stats().empty());
}

}  // namespace
}  // namespace hearth
