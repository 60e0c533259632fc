#include "hearth/dispatch/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/test_device.h"

namespace hearth {
namespace {

void noop_kernel(OpCall&) {}
void other_kernel(OpCall&) {}

TEST(Registry, FindOpSeesOpsRegisteredByTheCpuBackend) {
  for (const char* name : {"add", "mul", "copy_", "fill_", "sum"}) {
    OpHandle op = find_op(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_EQ(op->def.name, name);
    EXPECT_NE(op->kernels[kCpu.id].fn, nullptr) << name;
  }
  EXPECT_EQ(find_op("no_such_op"), nullptr);
}

TEST(Registry, SupportsIsATableLookupOnKindAndDtype) {
  OpHandle add = find_op("add");
  ASSERT_NE(add, nullptr);
  for (DType t : {DType::float32, DType::float64, DType::bfloat16, DType::int64}) EXPECT_TRUE(supports(add, kCpu, t));
  OpHandle div = find_op("div");
  ASSERT_NE(div, nullptr);
  EXPECT_TRUE(supports(div, kCpu, DType::float32));

  DeviceKind dev = testing::test_device_kind();
  testing::ScopedOpRemoval lacks({OpId::div}, {{OpId::mul, {DType::float32, DType::float64}}});
  OpHandle mul = find_op("mul");
  EXPECT_TRUE(supports(mul, dev, DType::float32));
  EXPECT_FALSE(supports(mul, dev, DType::int64));    // registered, but not for this dtype
  EXPECT_FALSE(supports(div, dev, DType::float32));  // no kernel for this kind at all
}

TEST(Registry, DefineOpIsIdempotentAndKeepsKernels) {
  OpHandle a = register_kernel("test_only_registry_op", kCpu, noop_kernel, {DType::float32});
  EXPECT_FALSE(a->defined);  // a kernel may arrive before the op's definition
  OpHandle b = define_op(OpDef{"test_only_registry_op", {1}, 0});
  EXPECT_EQ(a, b);  // stable address: handles cached in statics stay valid
  EXPECT_TRUE(b->defined);
  EXPECT_EQ(b->def.mutated_inputs, (std::vector<int>{1}));
  EXPECT_EQ(b->kernels[kCpu.id].fn, &noop_kernel);
  EXPECT_EQ(define_op(OpDef{"test_only_registry_op", {1}, 0}), a);
  EXPECT_EQ(find_op("test_only_registry_op"), a);
}

TEST(Registry, RegisteringAgainReplacesAndUnregisterRemoves) {
  DeviceKind dev = testing::test_device_kind();
  OpHandle op = register_kernel("test_only_replace_op", dev, noop_kernel, {DType::float32});
  EXPECT_TRUE(supports(op, dev, DType::float32));
  EXPECT_FALSE(supports(op, dev, DType::float64));
  register_kernel("test_only_replace_op", dev, other_kernel, {DType::float64});
  EXPECT_EQ(op->kernels[dev.id].fn, &other_kernel);
  EXPECT_FALSE(supports(op, dev, DType::float32));
  EXPECT_TRUE(supports(op, dev, DType::float64));
  EXPECT_FALSE(supports(op, kCpu, DType::float64));  // other kinds untouched
  unregister_kernel("test_only_replace_op", dev);
  EXPECT_FALSE(supports(op, dev, DType::float64));
  EXPECT_EQ(find_op("test_only_replace_op"), op);     // the op itself remains
  EXPECT_NO_THROW(unregister_kernel("never_registered_op_name", dev));
}

TEST(Registry, AllOpsIsSortedByNameAndComplete) {
  register_kernel("zzz_test_only_last", kCpu, noop_kernel, DTypeSet::all());
  register_kernel("aaa_test_only_first", kCpu, noop_kernel, DTypeSet::all());
  std::vector<OpHandle> ops = all_ops();
  ASSERT_GE(ops.size(), 4u);
  std::vector<std::string> names;
  for (OpHandle op : ops) names.push_back(op->def.name);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "names are unique";
  for (const char* n : {"add", "copy_", "zzz_test_only_last", "aaa_test_only_first"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

// A kernel's check answers accepts() for its own calls; dispatch never asks
// it. Registered before or after the kernel, it stays until unregistered.
bool takes_long_rows(const OpCall& call) { return call.in(0).size(-1) >= 4; }

TEST(Registry, AKernelsCheckDecidesWhichCallsItAccepts) {
  const DeviceKind dev = testing::test_device_kind();
  const OpHandle op = find_op(OpId::attention_softmax);
  const KernelEntry saved = op->kernels[dev.id];
  register_kernel_check(OpId::attention_softmax, dev, takes_long_rows);
  register_kernel(OpId::attention_softmax, dev, noop_kernel, {DType::float32});
  auto call_on = [](const Shape& shape, DType dtype) {
    OpCall c;
    c.inputs = {Tensor::empty(shape, dtype)};
    return c;
  };
  EXPECT_TRUE(accepts(op, dev, call_on({2, 4}, DType::float32)));
  EXPECT_FALSE(accepts(op, dev, call_on({2, 3}, DType::float32)));  // the check says no
  EXPECT_FALSE(accepts(op, dev, call_on({2, 4}, DType::float64)));  // no kernel for the dtype
  EXPECT_TRUE(supports(op, dev, DType::float32)) << "support stays a table lookup";
  unregister_kernel(OpId::attention_softmax, dev);
  EXPECT_EQ(op->kernels[dev.id].check, nullptr);
  EXPECT_FALSE(accepts(op, dev, call_on({2, 4}, DType::float32)));
  op->kernels[dev.id] = saved;
  // Without a check, a kernel accepts every call of its dtypes.
  register_kernel("test_only_unchecked_op", dev, noop_kernel, {DType::float32});
  EXPECT_TRUE(accepts(find_op("test_only_unchecked_op"), dev, call_on({2, 1}, DType::float32)));
  unregister_kernel("test_only_unchecked_op", dev);
}

TEST(DTypeSetTest, ContainsUnionAndPresets) {
  DTypeSet s{DType::float32, DType::int64};
  EXPECT_TRUE(s.contains(DType::float32));
  EXPECT_TRUE(s.contains(DType::int64));
  EXPECT_FALSE(s.contains(DType::float64));
  EXPECT_TRUE((s | DTypeSet{DType::float64}).contains(DType::float64));
  EXPECT_TRUE(DTypeSet().empty());
  for (int i = 0; i < kNumDTypes; ++i) EXPECT_TRUE(DTypeSet::all().contains(static_cast<DType>(i)));
  EXPECT_TRUE(DTypeSet::floating().contains(DType::bfloat16));
  EXPECT_FALSE(DTypeSet::floating().contains(DType::int32));
  EXPECT_FALSE(DTypeSet::integral().contains(DType::bool_));
}

}  // namespace
}  // namespace hearth
