#include "hearth/dispatch/registry.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

#include "hearth/dispatch/schemas/activation.h"
#include "hearth/dispatch/schemas/attention_softmax.h"
#include "hearth/dispatch/schemas/batch_norm.h"
#include "hearth/dispatch/schemas/binary.h"
#include "hearth/dispatch/schemas/clamp.h"
#include "hearth/dispatch/schemas/compare.h"
#include "hearth/dispatch/schemas/conv2d.h"
#include "hearth/dispatch/schemas/copy.h"
#include "hearth/dispatch/schemas/dropout.h"
#include "hearth/dispatch/schemas/dropout_add_layer_norm.h"
#include "hearth/dispatch/schemas/embedding.h"
#include "hearth/dispatch/schemas/fused_attention.h"
#include "hearth/dispatch/schemas/index.h"
#include "hearth/dispatch/schemas/layer_norm.h"
#include "hearth/dispatch/schemas/loss.h"
#include "hearth/dispatch/schemas/matmul.h"
#include "hearth/dispatch/schemas/maximum.h"
#include "hearth/dispatch/schemas/optim.h"
#include "hearth/dispatch/schemas/pooling.h"
#include "hearth/dispatch/schemas/pow.h"
#include "hearth/dispatch/schemas/random.h"
#include "hearth/dispatch/schemas/range.h"
#include "hearth/dispatch/schemas/reduce_minmax.h"
#include "hearth/dispatch/schemas/reduce_norm.h"
#include "hearth/dispatch/schemas/reduce_sum.h"
#include "hearth/dispatch/schemas/reduce_var.h"
#include "hearth/dispatch/schemas/scan.h"
#include "hearth/dispatch/schemas/softmax.h"
#include "hearth/dispatch/schemas/sort.h"
#include "hearth/dispatch/schemas/unary.h"
#include "hearth/dispatch/schemas/where.h"

namespace hearth {
namespace {

// The schema column of op_list.h names real attribute structs (NoAttrs: none).
struct NoAttrs {};
#define HEARTH_CHECK_SCHEMA_(name, family, schema, ...) \
  static_assert(std::is_class_v<schema>, "op_list.h: the schema of " #name " is not a struct");
HEARTH_OP_LIST(HEARTH_CHECK_SCHEMA_)
#undef HEARTH_CHECK_SCHEMA_

struct Registry {
  std::mutex mu;
  // std::map keeps entries at stable addresses and sorted for printing.
  std::map<std::string, std::unique_ptr<OpEntry>> ops;
  // The listed ops by OpId: filled once, below, and never changed after.
  std::array<OpEntry*, kNumOps> listed{};

  Registry() {
    for (const OpInfo& info : all_op_infos()) {
      auto& slot = ops[info.name];
      slot = std::make_unique<OpEntry>();
      slot->def.name = info.name;
      slot->def.mutated_inputs.assign(info.mutated_inputs.begin(), info.mutated_inputs.end());
      slot->def.mutated_stride = info.mutated_stride;
      slot->defined = true;
      slot->info = &info;
      listed[static_cast<size_t>(info.id)] = slot.get();
    }
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

OpEntry& get_or_create(Registry& r, const std::string& name) {
  auto& slot = r.ops[name];
  if (!slot) {
    slot = std::make_unique<OpEntry>();
    slot->def.name = name;
  }
  return *slot;
}

}  // namespace

OpHandle find_op(OpId op) { return registry().listed[static_cast<size_t>(op)]; }

OpHandle register_kernel(OpId op, DeviceKind kind, KernelFn fn, DTypeSet dtypes, const char* file) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  OpEntry& e = *r.listed[static_cast<size_t>(op)];
  e.kernels[kind.id].fn = fn;
  e.kernels[kind.id].dtypes = dtypes;
  e.kernels[kind.id].file = file;
  return &e;
}

OpHandle register_composition(OpId op, Composition composition) {
  HEARTH_CHECK(is_fusion(op), ValueError, "[", op_name(op),
               "] is a primitive in hearth/dispatch/op_list.h; only a fusion takes a composition");
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  OpEntry& e = *r.listed[static_cast<size_t>(op)];
  e.composition = composition;
  return &e;
}

bool is_fusion(OpHandle op) { return op->info != nullptr && op->info->is_fusion; }

std::string kernel_source_file(OpHandle op, DeviceKind kind) {
  const KernelEntry& k = op->kernels[kind.id];
  if (!k.fn || !k.file) return {};
  // The source root is where this file's own path, known at compile time,
  // ends in hearth/dispatch/registry.cpp; a path under it is shown relative.
  static const std::string self = __FILE__;
  static const std::string tail = "hearth/dispatch/registry.cpp";
  static const std::string root =
      self.size() >= tail.size() && self.compare(self.size() - tail.size(), tail.size(), tail) == 0
          ? self.substr(0, self.size() - tail.size())
          : std::string();
  std::string file = k.file;
  // (A relative root, as a compiler cache that rewrites paths gives, may
  // prefix a file compiled from a deeper folder: "../" of "../../tests/...".)
  if (!root.empty() && file.compare(0, root.size(), root) == 0 && file.compare(root.size(), 3, "../") != 0)
    return file.substr(root.size());
  // Built elsewhere (another tree, a path the compiler was given relative):
  // from the first of the tree's top-level folders on.
  size_t first = std::string::npos;
  for (const char* top : {"hearth/", "tests/", "apps/"}) {
    const std::string dir = std::string("/") + top;
    if (file.compare(0, dir.size() - 1, top) == 0) return file;
    first = std::min(first, file.find(dir));
  }
  return first == std::string::npos ? file : file.substr(first + 1);
}

OpHandle register_kernel_check(OpId op, DeviceKind kind, KernelCheck check) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  OpEntry& e = *r.listed[static_cast<size_t>(op)];
  e.kernels[kind.id].check = check;
  return &e;
}

void unregister_kernel(OpId op, DeviceKind kind) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.listed[static_cast<size_t>(op)]->kernels[kind.id] = KernelEntry{};
}

OpHandle define_op(OpDef def) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  OpEntry& e = get_or_create(r, def.name);
  e.def = std::move(def);
  e.defined = true;
  return &e;
}

OpHandle register_kernel(const std::string& op, DeviceKind kind, KernelFn fn, DTypeSet dtypes) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  OpEntry& e = get_or_create(r, op);
  e.kernels[kind.id].fn = fn;
  e.kernels[kind.id].dtypes = dtypes;
  return &e;
}

void unregister_kernel(const std::string& op, DeviceKind kind) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.ops.find(op);
  if (it != r.ops.end()) it->second->kernels[kind.id] = KernelEntry{};
}

OpHandle find_op(const std::string& name) {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.ops.find(name);
  return it == r.ops.end() ? nullptr : it->second.get();
}

std::vector<OpHandle> all_ops() {
  auto& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<OpHandle> out;
  for (auto& [name, e] : r.ops) out.push_back(e.get());
  return out;
}

bool supports(OpHandle op, DeviceKind kind, DType dtype) {
  const KernelEntry& k = op->kernels[kind.id];
  return k.fn != nullptr && k.dtypes.contains(dtype);
}

bool accepts(OpHandle op, DeviceKind kind, const OpCall& call) {
  // The key dtype is the first input's, or the first output's for ops without inputs.
  const Tensor& key = !call.inputs.empty() ? call.inputs.front() : call.outputs.front();
  if (!key.defined() || !supports(op, kind, key.dtype())) return false;
  const KernelCheck check = op->kernels[kind.id].check;
  return check == nullptr || check(call);
}

}  // namespace hearth
