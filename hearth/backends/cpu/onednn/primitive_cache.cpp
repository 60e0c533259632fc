#include "hearth/backends/cpu/onednn/primitive_cache.h"

namespace hearth::cpu::onednn {

std::shared_ptr<const StagedPrimitive> PrimitiveCache::get(
    const PrimitiveKey& key, const std::function<std::shared_ptr<const StagedPrimitive>()>& build) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
  }
  std::shared_ptr<const StagedPrimitive> built = build();  // outside the lock: building may take milliseconds
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.size() >= kMaxEntries) entries_.clear();
  return entries_.emplace(key, std::move(built)).first->second;
}

}  // namespace hearth::cpu::onednn
