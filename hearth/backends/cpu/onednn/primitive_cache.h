// Built primitives by key. Creating a oneDNN primitive JIT-compiles its
// kernels (tens of microseconds to milliseconds), so each distinct call
// (shapes, strides, attributes, dtype, post-ops) builds once. A key that
// oneDNN declined is remembered too, as a null entry, so the reference kernel
// takes it without asking again.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "hearth/backends/cpu/onednn/staged_primitive.h"

namespace hearth::cpu::onednn {

using PrimitiveKey = std::vector<int64_t>;

class PrimitiveCache {
 public:
  // The entry for key, built by `build` on a miss (build returns null to decline).
  std::shared_ptr<const StagedPrimitive> get(const PrimitiveKey& key,
                                             const std::function<std::shared_ptr<const StagedPrimitive>()>& build);

 private:
  // A model has tens of distinct convolutions; a program that sweeps shapes
  // (variable image sizes) starts over rather than growing without bound.
  static constexpr size_t kMaxEntries = 1024;
  std::mutex mutex_;
  std::map<PrimitiveKey, std::shared_ptr<const StagedPrimitive>> entries_;
};

}  // namespace hearth::cpu::onednn
