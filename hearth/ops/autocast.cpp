// The thread-local autocast state, its guards, the per-region cache of
// parameter casts, and the shared casts of activations.
#include "hearth/ops/autocast.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "hearth/autograd/grad_mode.h"
#include "hearth/autograd/node.h"
#include "hearth/core/errors.h"
#include "hearth/core/tensor.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/cast_from_values.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/param_half_copies.h"

namespace hearth {
namespace {

struct KindState {
  bool enabled = false;
  DType dtype = DType::bfloat16;
};

struct CachedCast {
  Tensor source;  // held so its address cannot be reused by another tensor while cached
  uint32_t version = 0;
  Tensor cast;
};

// (parameter, target dtype, grad mode at cast time): a cast made under
// NoGradGuard has no graph and must not serve a forward that records one.
using CacheKey = std::tuple<const TensorImpl*, DType, bool>;

// The cast of an activation (any tensor but a parameter), shared by the ops
// that read the same tensor while it is alive and unchanged.
//
// The entry holds nothing alive: the source, the cast's memory and the cast's
// graph node are all weak references. Under grad mode every consumer of the
// cast (linear, conv2d, matmul, attention) saves it for its backward, so the
// cast lives exactly as long as autograd already keeps it, and the cache adds
// no memory at all; a cast nobody saved (no-grad evaluation, a frozen layer)
// is freed after its op as before, and the next reader casts again. Holding
// the cast strongly until the region closes would share it under no-grad too,
// but would keep every layer's cast of an evaluation alive to the region's
// end (and, in training, those whose consumers were frozen); the weak form
// never costs memory, and training, where the graph keeps the cast anyway,
// gets the whole saving.
//
// Key: the source's storage and view (offset, shape, strides, dtype), the
// target dtype, grad mode (a cast made under no-grad has no graph and must
// not serve a forward that records one, nor the reverse) and whether the cast
// is recorded (grad mode on and the source requires grad). A recorded cast is
// a node of the graph that stands for its source's gradient, so it is reused
// only for the same tensor (its impl: another view of the same bytes has
// another place in the graph); a plain copy is reused for any tensor showing
// the same bytes. The storage's version must match (an in-place write
// invalidates), and a dead source's entry never matches (its weak reference
// has expired even if a new storage took its address).
using SharedKey = std::tuple<const Storage*, int64_t, DType, DType, bool, bool, Shape, Strides>;

struct SharedCast {
  std::weak_ptr<Storage> source_storage;
  std::weak_ptr<TensorImpl> source;  // recorded casts: only this tensor's
  uint32_t source_version = 0;
  bool recorded = false;
  // The cast, rebuilt from its memory, view and graph node on reuse (the
  // consumers keep only detached aliases of it).
  std::weak_ptr<Storage> storage;
  std::weak_ptr<autograd::Node> grad_fn;
  uint32_t output_nr = 0;
  uint32_t version = 0;
  DType dtype = DType::float32;
  Shape shape;
  Strides strides;
  int64_t offset = 0;
};

struct AutocastState {
  std::array<KindState, kMaxDeviceKinds> kinds{};
  int enabled_kinds = 0;  // how many kinds are enabled
  int open_guards = 0;    // enabled guards alive; the cache lives until the outermost closes
  bool suspended = false;
  std::map<CacheKey, CachedCast> cache;
  std::map<SharedKey, SharedCast> shared;
  size_t shared_sweep_at = 64;  // sweep out dead entries when the map reaches this size
  uint64_t casts_made = 0;
};

AutocastState& state() {
  thread_local AutocastState s;
  return s;
}

// Drops the casts made with grad mode `recorded` (true: those with a graph).
void drop_casts(AutocastState& s, bool recorded) {
  for (auto it = s.cache.begin(); it != s.cache.end();)
    it = std::get<2>(it->first) == recorded ? s.cache.erase(it) : std::next(it);
}

void drop_shared_casts(AutocastState& s, bool recorded) {
  for (auto it = s.shared.begin(); it != s.shared.end();)
    it = it->second.recorded == recorded ? s.shared.erase(it) : std::next(it);
}

// Drops the entries whose source or cast is gone; called as the map grows, so
// a long region (an evaluation, gradient accumulation) does not collect them.
void sweep_shared_casts(AutocastState& s) {
  for (auto it = s.shared.begin(); it != s.shared.end();)
    it = it->second.source_storage.expired() || it->second.storage.expired() ? s.shared.erase(it) : std::next(it);
  s.shared_sweep_at = std::max<size_t>(64, 2 * s.shared.size());
}

std::atomic<bool>& shared_casts_flag() {
  // On: the other path stays as the reference tests compare this one with.
  static std::atomic<bool> on{true};
  return on;
}

Tensor counted_cast(AutocastState& s, const Tensor& t, DType dtype) {
  ++s.casts_made;
  return cast(t, dtype);
}

// The cast of parameter `t` in a training forward: the copy the last
// optimizer step wrote, when it still matches the parameter (recorded as the
// cast, so the gradient reaches the parameter as it would through the cast);
// else a cast, and the optimizer is asked to write the copy from now on.
Tensor training_param_cast(AutocastState& s, const Tensor& t, DType dtype) {
  const Tensor copy = valid_param_half_copy(t, dtype);
  if (copy.defined()) return detail::cast_from_values(t, copy);
  want_param_half_copy(t, dtype);
  return counted_cast(s, t, dtype);
}

// Without a graph (evaluation, a checkpointed block's first forward) the
// copy the optimizer wrote serves as it is, no node needed; else a cast. A
// checkpointed BERT-base step cast its 144 weights again in each block's
// no-grad forward (~1.2 ms of ~21).
Tensor no_grad_param_cast(AutocastState& s, const Tensor& t, DType dtype) {
  const Tensor copy = valid_param_half_copy(t, dtype);
  return copy.defined() ? copy.detach() : counted_cast(s, t, dtype);
}

// The cast of activation `t`, shared with earlier readers where it can be.
Tensor shared_cast(AutocastState& s, const Tensor& t, DType dtype) {
  const bool grad_mode = grad_enabled();
  const bool recorded = grad_mode && t.requires_grad();
  SharedKey key{t.storage().get(), t.offset(), t.dtype(), dtype, grad_mode, recorded, t.shape(), t.strides()};
  auto it = s.shared.find(key);
  if (it != s.shared.end()) {
    const SharedCast& e = it->second;
    std::shared_ptr<Storage> storage = e.storage.lock();
    std::shared_ptr<autograd::Node> fn = e.grad_fn.lock();
    const bool hit = e.source_storage.lock() == t.storage() && e.source_version == t.version() &&
                     e.recorded == recorded && (!recorded || (e.source.lock() == t.impl() && fn != nullptr)) &&
                     storage != nullptr && storage->version() == e.version;
    if (hit) {
      auto impl = std::make_shared<TensorImpl>();
      impl->storage = std::move(storage);
      impl->dtype = e.dtype;
      impl->shape = e.shape;
      impl->strides = e.strides;
      impl->offset = e.offset;
      if (recorded) {
        impl->autograd = std::make_shared<autograd::AutogradMeta>();
        impl->autograd->requires_grad = true;
        impl->autograd->grad_fn = std::move(fn);
        impl->autograd->output_nr = e.output_nr;
      }
      return Tensor(std::move(impl));
    }
  }
  Tensor c = counted_cast(s, t, dtype);
  SharedCast e;
  e.source_storage = t.storage();
  e.source = t.impl();
  e.source_version = t.version();
  e.recorded = recorded;
  e.storage = c.storage();
  if (recorded) {
    e.grad_fn = c.grad_fn();
    e.output_nr = c.autograd_meta()->output_nr;
  }
  e.version = c.version();
  e.dtype = c.dtype();
  e.shape = c.shape();
  e.strides = c.strides();
  e.offset = c.offset();
  if (it != s.shared.end()) {
    it->second = std::move(e);
  } else {
    if (s.shared.size() + 1 >= s.shared_sweep_at) sweep_shared_casts(s);
    s.shared.emplace(std::move(key), std::move(e));
  }
  return c;
}

// Drops the casts whose parameter only the cache still holds (its model is
// gone): kept casts must not keep dead models alive.
void drop_orphaned_casts(AutocastState& s) {
  for (auto it = s.cache.begin(); it != s.cache.end();)
    it = it->second.source.impl().use_count() == 1 ? s.cache.erase(it) : std::next(it);
}

// The products every network spends its time in: a backend that cannot run
// them in the autocast dtype cannot run mixed precision.
constexpr OpId kLowPrecisionOps[] = {OpId::bmm, OpId::conv2d};

}  // namespace

bool autocast_enabled(DeviceKind kind) {
  const AutocastState& s = state();
  return !s.suspended && s.kinds[kind.id].enabled;
}

DType autocast_dtype(DeviceKind kind) { return state().kinds[kind.id].dtype; }

bool autocast_active() {
  const AutocastState& s = state();
  return s.enabled_kinds > 0 && !s.suspended;
}

void check_autocast_supported(DeviceKind kind, DType dtype) {
  HEARTH_CHECK(dtype == DType::bfloat16 || dtype == DType::float16, TypeError,
               "[autocast] expected dtype bfloat16 or float16 for mixed precision, got ", dtype_name(dtype));
  for (OpId id : kLowPrecisionOps) {
    const char* name = op_name(id);
    OpHandle op = find_op(id);
    HEARTH_CHECK(supports(op, kind, dtype), NotImplementedError, "[autocast] ", dtype_name(dtype),
                 " mixed precision on ", device_kind_name(kind), " needs its ", name, " kernel in ", dtype_name(dtype),
                 ", which the ", device_kind_name(kind), " backend does not have; train in fp32 (precision \"fp32\")",
                 dtype == DType::float16 ? " or try bf16-mixed" : " or try fp16-mixed", ", or use another device");
  }
}

AutocastGuard::AutocastGuard(DeviceKind kind, DType dtype, bool enabled) : kind_(kind) {
  if (enabled) check_autocast_supported(kind, dtype);
  AutocastState& s = state();
  KindState& k = s.kinds[kind.id];
  prev_enabled_ = k.enabled;
  prev_dtype_ = k.dtype;
  s.enabled_kinds += static_cast<int>(enabled) - static_cast<int>(k.enabled);
  k.enabled = enabled;
  if (enabled) k.dtype = dtype;
  // Training resumes: the casts kept from an evaluation would only hold memory.
  if (enabled && s.open_guards == 0 && grad_enabled()) drop_casts(s, false);
  if (enabled) ++s.open_guards;
}

AutocastGuard::~AutocastGuard() {
  AutocastState& s = state();
  KindState& k = s.kinds[kind_.id];
  // Casts with a graph end with the region. Casts made without one are plain
  // copies checked by the parameter's version, so they outlive it: an
  // evaluation that opens a region per batch casts its weights once, not per
  // batch (0.8 GB of traffic per VGG16 step).
  if (k.enabled && --s.open_guards == 0) {
    drop_casts(s, true);
    drop_orphaned_casts(s);
    s.shared.clear();  // activations' casts end with the region, with or without a graph
  }
  s.enabled_kinds += static_cast<int>(prev_enabled_) - static_cast<int>(k.enabled);
  k.enabled = prev_enabled_;
  k.dtype = prev_dtype_;
}

AutocastSuspend::AutocastSuspend() : prev_(state().suspended) { state().suspended = true; }

AutocastSuspend::~AutocastSuspend() { state().suspended = prev_; }

AutocastResume::AutocastResume() : prev_(state().suspended) { state().suspended = false; }

AutocastResume::~AutocastResume() { state().suspended = prev_; }

void clear_autocast_cache() {
  state().cache.clear();
  state().shared.clear();
}

void drop_recorded_autocast_casts() {
  drop_casts(state(), true);
  drop_shared_casts(state(), true);
}

size_t autocast_cache_size() { return state().cache.size(); }

bool autocast_shared_casts_enabled() { return shared_casts_flag().load(std::memory_order_relaxed); }

void set_autocast_shared_casts_enabled(bool on) { shared_casts_flag().store(on, std::memory_order_relaxed); }

uint64_t autocast_casts_made() { return state().casts_made; }

namespace detail {

Tensor autocast_cast(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  AutocastState& s = state();
  // Parameters (leaves that require grad) are held by their model: their
  // casts are cached strongly, for the region or across an evaluation.
  const bool parameter = t.is_leaf() && t.requires_grad();
  if (!parameter) return autocast_shared_casts_enabled() ? shared_cast(s, t, dtype) : counted_cast(s, t, dtype);
  const bool grad_mode = grad_enabled();
  const CacheKey key{t.impl().get(), dtype, grad_mode};
  auto it = s.cache.find(key);
  if (it != s.cache.end() && it->second.version == t.version()) return it->second.cast;
  Tensor c = grad_mode ? training_param_cast(s, t, dtype) : no_grad_param_cast(s, t, dtype);
  s.cache[key] = CachedCast{t, t.version(), c};
  return c;
}

}  // namespace detail
}  // namespace hearth
