// The thread-local autocast state, its guards, and the per-region cache of
// parameter casts.
#include "hearth/ops/autocast.h"

#include <array>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "hearth/autograd/grad_mode.h"
#include "hearth/core/errors.h"
#include "hearth/core/tensor.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/elementwise.h"

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

struct AutocastState {
  std::array<KindState, kMaxDeviceKinds> kinds{};
  int enabled_kinds = 0;  // how many kinds are enabled
  int open_guards = 0;    // enabled guards alive; the cache lives until the outermost closes
  bool suspended = false;
  std::map<CacheKey, CachedCast> cache;
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
  }
  s.enabled_kinds += static_cast<int>(prev_enabled_) - static_cast<int>(k.enabled);
  k.enabled = prev_enabled_;
  k.dtype = prev_dtype_;
}

AutocastSuspend::AutocastSuspend() : prev_(state().suspended) { state().suspended = true; }

AutocastSuspend::~AutocastSuspend() { state().suspended = prev_; }

AutocastResume::AutocastResume() : prev_(state().suspended) { state().suspended = false; }

AutocastResume::~AutocastResume() { state().suspended = prev_; }

void clear_autocast_cache() { state().cache.clear(); }

void drop_recorded_autocast_casts() { drop_casts(state(), true); }

size_t autocast_cache_size() { return state().cache.size(); }

namespace detail {

Tensor autocast_cast(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  // Parameters only: activations are used once, and caching them would keep them alive.
  const bool cacheable = t.is_leaf() && t.requires_grad();
  if (!cacheable) return cast(t, dtype);
  AutocastState& s = state();
  const CacheKey key{t.impl().get(), dtype, grad_enabled()};
  auto it = s.cache.find(key);
  if (it != s.cache.end() && it->second.version == t.version()) return it->second.cast;
  Tensor c = cast(t, dtype);
  s.cache[key] = CachedCast{t, t.version(), c};
  return c;
}

}  // namespace detail
}  // namespace hearth
