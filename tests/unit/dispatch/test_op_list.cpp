// The op list (hearth/dispatch/op_list.h) against the code: every family has
// its file in every layer, every listed op is defined in the registry from its
// row and has a CPU kernel, and every op a backend registered a kernel for is
// listed.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/dispatch/op_info.h"
#include "hearth/dispatch/registry.h"

namespace hearth {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = HEARTH_SOURCE_DIR;

// Tests define ops of their own at run time; their names say so.
bool defined_by_a_test(const std::string& name) { return name.find("test_only") != std::string::npos; }

// Unused in a CPU-only build, where the test below skips.
[[maybe_unused]] bool has_cuda_kernel(OpFamily family, DeviceKind cuda) {
  for (const OpInfo& info : all_op_infos())
    if (info.family == family && find_op(info.id)->kernels[cuda.id].fn != nullptr) return true;
  return false;
}

TEST(OpList, EveryFamilyHasItsFileInEveryLayer) {
  for (OpFamily family : all_op_families()) {
    const std::string f = family_name(family);
    for (const std::string& path : {"hearth/dispatch/schemas/" + f + ".h", "hearth/ops/" + f + ".cpp",
                                    "hearth/backends/cpu/" + f + ".cpp", "tests/unit/ops/test_" + f + ".cpp"})
      EXPECT_TRUE(fs::exists(kSource / path)) << "family " << f << " has no " << path;
  }
}

// A family's CUDA kernels live in backends/cuda/<family>.cu and are compared
// with the CPU in tests/gpu/parity_<family>.cpp. The CUDA backend registers
// its kernels at start-up whether or not a GPU is present, so any CUDA build
// tells which families have them.
TEST(OpList, FamiliesWithCudaKernelsHaveTheirCudaAndParityFiles) {
#if !HEARTH_TEST_CUDA_BUILT
  GTEST_SKIP() << "built without the CUDA backend";
#else
  DeviceKind cuda;
  ASSERT_TRUE(find_device_kind("cuda", &cuda));
  for (OpFamily family : all_op_families()) {
    const std::string f = family_name(family);
    const bool kernels = has_cuda_kernel(family, cuda);
    EXPECT_EQ(fs::exists(kSource / ("hearth/backends/cuda/" + f + ".cu")), kernels)
        << "family " << f << (kernels ? " has CUDA kernels but no " : " has no CUDA kernel but a ")
        << "hearth/backends/cuda/" << f << ".cu";
    if (kernels) {
      EXPECT_TRUE(fs::exists(kSource / ("tests/gpu/parity_" + f + ".cpp")))
          << "family " << f << " has CUDA kernels but no tests/gpu/parity_" << f << ".cpp";
    }
  }
#endif
}

TEST(OpList, EveryListedOpIsDefinedFromItsRowAndHasACpuKernel) {
  for (const OpInfo& info : all_op_infos()) {
    OpHandle op = find_op(info.id);
    ASSERT_NE(op, nullptr) << info.name;
    EXPECT_EQ(find_op(std::string(info.name)), op) << info.name;
    EXPECT_TRUE(op->defined) << info.name;
    EXPECT_EQ(op->info, &info) << info.name;
    EXPECT_EQ(op->def.name, info.name);
    EXPECT_EQ(op->def.mutated_inputs, std::vector<int>(info.mutated_inputs.begin(), info.mutated_inputs.end()))
        << info.name;
    EXPECT_EQ(op->def.mutated_stride, info.mutated_stride) << info.name;
    EXPECT_NE(op->kernels[kCpu.id].fn, nullptr) << info.name << " has no CPU kernel";
  }
}

TEST(OpList, NamesAreUniqueAndRoundTrip) {
  std::set<std::string> names;
  for (const OpInfo& info : all_op_infos()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name << " is listed twice";
    ASSERT_TRUE(op_id_from_name(info.name).has_value()) << info.name;
    EXPECT_EQ(*op_id_from_name(info.name), info.id);
    EXPECT_STREQ(op_name(info.id), info.name);
  }
  EXPECT_FALSE(op_id_from_name("no_such_op").has_value());
  EXPECT_EQ(names.size(), kNumOps);
}

TEST(OpList, EveryOpWithAKernelIsListed) {
  for (OpHandle op : all_ops()) {
    if (defined_by_a_test(op->def.name)) continue;
    bool any_kernel = false;
    for (const KernelEntry& k : op->kernels) any_kernel = any_kernel || k.fn != nullptr;
    if (any_kernel) {
      EXPECT_NE(op->info, nullptr) << op->def.name << " has a kernel but is not in op_list.h";
    }
  }
}

// A backward op is listed (the list does not compile otherwise), belongs to
// its forward's family, and has a CPU kernel.
TEST(OpList, BackwardOpsAreOfTheForwardsFamily) {
  for (const OpInfo& info : all_op_infos()) {
    for (OpId bw : info.backward) {
      EXPECT_EQ(op_info(bw).family, info.family) << info.name << " -> " << op_name(bw);
      EXPECT_NE(find_op(bw)->kernels[kCpu.id].fn, nullptr) << op_name(bw);
    }
  }
}

TEST(OpList, FusedOpsAreListedWithTheirFamily) {
  EXPECT_EQ(op_info(OpId::conv2d_relu).family, OpFamily::conv2d);
  EXPECT_EQ(op_info(OpId::batch_norm_add_relu).family, OpFamily::batch_norm);
  EXPECT_EQ(op_info(OpId::attention_softmax).family, OpFamily::attention_softmax);
  EXPECT_EQ(op_info(OpId::fused_attention).family, OpFamily::fused_attention);
  EXPECT_STREQ(op_info(OpId::fused_attention).schema, "FusedAttentionAttrs");
  EXPECT_EQ(op_info(OpId::sgd_step_foreach).mutated_stride, 3);
  EXPECT_EQ(op_info(OpId::adam_step_foreach).mutated_stride, 5);
  EXPECT_STREQ(family_name(OpFamily::layer_norm), "layer_norm");
  EXPECT_STREQ(op_info(OpId::layer_norm).schema, "LayerNormAttrs");
  EXPECT_STREQ(op_info(OpId::bmm).schema, "");
}

}  // namespace
}  // namespace hearth
