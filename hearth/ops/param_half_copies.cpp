// The registry of parameters' low-precision copies (param_half_copies.h).
#include "hearth/ops/param_half_copies.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "hearth/autograd/grad_mode.h"
#include "hearth/dispatch/dispatch.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/op_utils.h"

namespace hearth {
namespace {

struct Entry {
  std::weak_ptr<TensorImpl> param;
  DType dtype = DType::bfloat16;
  Tensor copy;  // undefined until the first update writes it
  // What the copy was written from: the parameter's memory (a parameter moved
  // to another device or layout gets new memory) and its version there.
  std::weak_ptr<Storage> storage;
  uint32_t version = 0;
  bool valid = false;
};

// Global, not thread-local like autocast's state: a forward on one thread
// and the optimizer step on another must meet here.
struct Registry {
  std::mutex mu;
  std::unordered_map<const TensorImpl*, Entry> entries;
  size_t sweep_at = 256;  // drops dead parameters' entries when the map reaches this size
};

Registry& registry() {
  static Registry r;
  return r;
}

std::atomic<bool>& enabled_flag() {
  // On: the other path stays as the reference tests compare this one with.
  static std::atomic<bool> on{true};
  return on;
}

// The live entry of `param`; null when there is none (an entry whose
// parameter died, its address now another tensor's, is dropped).
Entry* lookup(Registry& r, const Tensor& param) {
  auto it = r.entries.find(param.impl().get());
  if (it == r.entries.end()) return nullptr;
  if (it->second.param.lock() != param.impl()) {
    r.entries.erase(it);
    return nullptr;
  }
  return &it->second;
}

// Whether `copy` can hold `param`'s values as the kernels write them: element
// k of the one is element k of the other in memory order.
bool fits(const Tensor& copy, const Tensor& param) {
  return copy.shape() == param.shape() && copy.strides() == param.strides() && copy.device() == param.device();
}

bool current(const Entry& e, const Tensor& param) {
  return e.valid && e.copy.defined() && e.storage.lock() == param.storage() && e.version == param.version() &&
         fits(e.copy, param);
}

void sweep(Registry& r) {
  for (auto it = r.entries.begin(); it != r.entries.end();)
    it = it->second.param.expired() ? r.entries.erase(it) : std::next(it);
  r.sweep_at = std::max<size_t>(256, 2 * r.entries.size());
}

}  // namespace

bool optimizer_half_copies_enabled() { return enabled_flag().load(std::memory_order_relaxed); }

void set_optimizer_half_copies_enabled(bool on) { enabled_flag().store(on, std::memory_order_relaxed); }

Tensor valid_param_half_copy(const Tensor& param, DType dtype) {
  if (!optimizer_half_copies_enabled()) return Tensor();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const Entry* e = lookup(r, param);
  return e && e->dtype == dtype && current(*e, param) ? e->copy : Tensor();
}

void want_param_half_copy(const Tensor& param, DType dtype) {
  if (!optimizer_half_copies_enabled() || param.dtype() != DType::float32 ||
      (dtype != DType::bfloat16 && dtype != DType::float16))
    return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (lookup(r, param)) return;
  if (r.entries.size() + 1 >= r.sweep_at) sweep(r);
  Entry e;
  e.param = param.impl();
  e.dtype = dtype;
  r.entries.emplace(param.impl().get(), std::move(e));
}

Tensor param_half_copy_to_write(const Tensor& param) {
  if (!optimizer_half_copies_enabled() || param.dtype() != DType::float32) return Tensor();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  Entry* e = lookup(r, param);
  if (!e) return Tensor();
  if (!e->copy.defined() || !fits(e->copy, param)) {
    // Laid out as cast() lays out the parameter's cast, so the copy stands
    // for it exactly (a channels_last weight's copy is channels_last).
    e->copy = detail::empty_like_inputs(param.shape(), e->dtype, param.device(), {param});
    e->valid = false;
    if (!fits(e->copy, param)) {  // a layout the kernels' flat order cannot follow: cast as before
      r.entries.erase(param.impl().get());
      return Tensor();
    }
  }
  return e->copy;
}

void mark_param_half_copy_written(const Tensor& param, const Tensor& copy) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  Entry* e = lookup(r, param);
  if (!e || !e->copy.is_same(copy)) return;
  copy.bump_version();
  e->storage = param.storage();
  e->version = param.version();
  e->valid = true;
}

void refresh_param_half_copies(const std::vector<Tensor>& params) {
  if (!optimizer_half_copies_enabled()) return;
  NoGradGuard no_grad;
  for (const Tensor& p : params) {
    Tensor copy;
    {
      Registry& r = registry();
      std::lock_guard<std::mutex> lock(r.mu);
      const Entry* e = lookup(r, p);
      if (!e || !e->copy.defined() || current(*e, p) || !fits(e->copy, p)) continue;
      copy = e->copy;
    }
    copy_into(copy, p);
    mark_param_half_copy_written(p, copy);
  }
}

size_t param_half_copy_count() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  sweep(r);
  return r.entries.size();
}

void clear_param_half_copies() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.entries.clear();
}

}  // namespace hearth
