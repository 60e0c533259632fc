#include "hearth/backends/cpu/onednn/reordered_weights.h"

#include "hearth/backends/cpu/onednn/engine.h"
#include "hearth/backends/cpu/onednn/onednn.h"

namespace hearth::cpu::onednn {
namespace {

// The same storage, not merely one at the same address: weak pointers share
// their control block exactly when they came from the same shared_ptr.
bool same_storage(const std::weak_ptr<Storage>& kept, const std::shared_ptr<Storage>& s) {
  return !kept.owner_before(s) && !s.owner_before(kept);
}

}  // namespace

dnnl::memory ReorderedWeights::get(const Tensor& weight, const dnnl::memory::desc& user,
                                   const dnnl::memory::desc& inner, const dnnl::reorder& reorder) {
  const std::shared_ptr<Storage>& storage = weight.storage();
  const uint32_t version = weight.version();
  bool seen = false;  // an earlier call read this weight unchanged, in this layout
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_address_.find(weight.data_ptr());
    if (it != by_address_.end())
      for (const Entry& e : it->second)
        if (e.user == user && e.inner == inner && same_storage(e.storage, storage) && e.version == version) {
          if (!e.copy) {
            seen = true;
            break;
          }
          ++hits_;
          return e.copy;
        }
  }
  // Outside the lock: a reorder of large weights takes a while. Always a new
  // buffer, never a stale copy's, which a call on another thread may still read.
  dnnl::memory copy(inner, cpu_engine());
  dnnl::stream& s = cpu_stream();
  dnnl::memory source(user, cpu_engine(), weight.data_ptr());
  reorder.execute(s, source, copy);
  s.wait();

  std::lock_guard<std::mutex> lock(mutex_);
  ++reorders_;
  if (entries_ >= kMaxEntries) forget_freed_weights();
  // The first call only notes the weight; the copy is kept from the second
  // call that finds it unchanged.
  Entry entry{storage, version, user, inner, seen ? copy : dnnl::memory()};
  std::vector<Entry>& list = by_address_[weight.data_ptr()];
  for (Entry& e : list)
    if (e.user == user && e.inner == inner) {  // another version, or a storage since freed
      e = std::move(entry);
      return copy;
    }
  list.push_back(std::move(entry));
  ++entries_;
  return copy;
}

void ReorderedWeights::forget_freed_weights() {
  entries_ = 0;
  for (auto it = by_address_.begin(); it != by_address_.end();) {
    std::erase_if(it->second, [](const Entry& e) { return e.storage.expired(); });
    entries_ += it->second.size();
    it = it->second.empty() ? by_address_.erase(it) : std::next(it);
  }
  if (entries_ >= kMaxEntries) {
    by_address_.clear();
    entries_ = 0;
  }
}

size_t ReorderedWeights::reorders() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reorders_;
}

size_t ReorderedWeights::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

uint64_t weight_reorders() { return reordered_weights().reorders(); }
uint64_t weight_reorders_saved() { return reordered_weights().hits(); }

ReorderedWeights& reordered_weights() {
  static ReorderedWeights* cache = new ReorderedWeights;  // its memories outlive static destruction order
  return *cache;
}

}  // namespace hearth::cpu::onednn
