// The op list (hearth/dispatch/op_list.h) against the code: every family has
// its file in every layer, every built backend's kernels live in its folder by
// family, every listed op is defined in the registry from its row and has a
// CPU kernel, every fusion has a composition, and every op a backend
// registered a kernel for is listed.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/dispatch/op_info.h"
#include "hearth/dispatch/registry.h"
#include "tests/support/test_device.h"

namespace hearth {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = HEARTH_SOURCE_DIR;

// Tests define ops of their own at run time; their names say so.
bool defined_by_a_test(const std::string& name) { return name.find("test_only") != std::string::npos; }

TEST(OpList, EveryFamilyHasItsFileInEveryLayer) {
  for (OpFamily family : all_op_families()) {
    const std::string f = family_name(family);
    for (const std::string& path : {"hearth/dispatch/schemas/" + f + ".h", "hearth/ops/" + f + ".cpp",
                                    "hearth/backends/cpu/" + f + ".cpp", "tests/unit/ops/test_" + f + ".cpp"})
      EXPECT_TRUE(fs::exists(kSource / path)) << "family " << f << " has no " << path;
  }
}

bool has_kernel_of(OpFamily family, DeviceKind kind) {
  for (const OpInfo& info : all_op_infos())
    if (info.family == family && find_op(info.id)->kernels[kind.id].fn != nullptr) return true;
  return false;
}

// Whether `folder` holds a file named <family>.<anything> (.cu for CUDA, .cpp for others).
bool has_family_file(const fs::path& folder, const std::string& family) {
  if (!fs::is_directory(folder)) return false;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.is_regular_file() && entry.path().stem() == family) return true;
  return false;
}

// The kinds that registered kernels: the built backends, and testdev. A kind
// of a backend this build lacks is registered without kernels.
std::vector<DeviceKind> kinds_with_kernels() {
  testing::test_device_kind();
  std::vector<DeviceKind> kinds;
  for (int id = 0; id < num_device_kinds(); ++id) {
    const DeviceKind kind{static_cast<uint8_t>(id)};
    for (const OpInfo& info : all_op_infos()) {
      if (find_op(info.id)->kernels[kind.id].fn != nullptr) {
        kinds.push_back(kind);
        break;
      }
    }
  }
  return kinds;
}

// A kind's folder: hearth/backends/<kind>/, and testdev's under tests/support.
std::string folder_of(DeviceKind kind) {
  const std::string& name = device_kind_name(kind);
  return name == "testdev" ? "tests/support/testdev/" : "hearth/backends/" + name + "/";
}

// Every kind's kernels are registered from its own folder (the file each
// kernel's registration recorded); a backend under hearth/backends has one
// file per family it has kernels of, <family>.<ext>, and no family file
// without kernels; and a family with kernels on any kind but the CPU has
// parity cases against the CPU in tests/parity/parity_<family>.cpp.
TEST(OpList, EveryBuiltKindsKernelsLiveInItsFolderByFamily) {
  const std::vector<DeviceKind> kinds = kinds_with_kernels();
  ASSERT_GE(kinds.size(), 2u) << "expected the CPU and testdev at least";
  for (DeviceKind kind : kinds) {
    const std::string folder = folder_of(kind);
    for (const OpInfo& info : all_op_infos()) {
      const std::string file = kernel_source_file(find_op(info.id), kind);
      if (file.empty()) continue;  // no kernel, or registered without its file
      EXPECT_EQ(file.rfind(folder, 0), 0u) << info.name << "'s " << device_kind_name(kind)
                                           << " kernel is registered in " << file << ", outside " << folder;
    }
    for (OpFamily family : all_op_families()) {
      const std::string f = family_name(family);
      const bool kernels = has_kernel_of(family, kind);
      if (folder.rfind("hearth/backends/", 0) == 0) {
        EXPECT_EQ(has_family_file(kSource / folder, f), kernels)
            << "family " << f << (kernels ? " has " : " has no ") << device_kind_name(kind) << " kernels but "
            << (kernels ? "no file " : "a file ") << folder << f << ".*";
      }
      if (kernels && kind != kCpu) {
        EXPECT_TRUE(fs::exists(kSource / ("tests/parity/parity_" + f + ".cpp")))
            << "family " << f << " has " << device_kind_name(kind) << " kernels but no tests/parity/parity_" << f
            << ".cpp";
      }
    }
  }
}

// testdev is a backend of primitives: every primitive the CPU has, no fusion.
TEST(OpList, TestdevRegistersEveryPrimitiveAndNoFusion) {
  const DeviceKind testdev = testing::test_device_kind();
  for (const OpInfo& info : all_op_infos()) {
    OpHandle op = find_op(info.id);
    if (info.is_fusion) {
      EXPECT_EQ(op->kernels[testdev.id].fn, nullptr) << info.name << " is a fusion";
      EXPECT_NE(op->composition, nullptr) << info.name << " is a fusion without a composition";
    } else {
      EXPECT_EQ(op->kernels[testdev.id].fn, op->kernels[kCpu.id].fn) << info.name;
      EXPECT_EQ(op->composition, nullptr) << info.name << " is a primitive";
    }
  }
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
  EXPECT_TRUE(op_info(OpId::conv2d_relu).is_fusion);
  EXPECT_TRUE(op_info(OpId::clip_grad_norm_foreach).is_fusion);
  EXPECT_FALSE(op_info(OpId::conv2d).is_fusion);
  EXPECT_FALSE(op_info(OpId::sgd_step).is_fusion);
}

// Dispatch runs a fusion's composition where a device lacks its kernel: every
// fusion has one, and a primitive (which has no other way to run) none.
TEST(OpList, OnlyFusionsTakeACompositionAndEveryFusionHasOne) {
  for (const OpInfo& info : all_op_infos()) {
    OpHandle op = find_op(info.id);
    EXPECT_EQ(op->composition != nullptr, info.is_fusion) << info.name;
    EXPECT_EQ(is_fusion(op), info.is_fusion) << info.name;
  }
  EXPECT_THROW(register_composition(OpId::add, nullptr), ValueError);
}

}  // namespace
}  // namespace hearth
