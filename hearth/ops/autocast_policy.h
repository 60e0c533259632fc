// The autocast hook at the top of an op (see hearth/ops/autocast.h). An op
// whose compute dtype autocast decides starts with one line:
//
//   Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
//     if (auto ac = detail::autocast("linear", x, weight, bias)) return linear(ac[0], ac[1], ac[2]);
//     ...
//
// Outside autocast the hook costs one thread-local read. Inside, it casts the
// tensor arguments by the op's entry in the policy table and the op calls
// itself again on them with autocast suspended, so the ops it is built from
// run in the dtypes it chose (as PyTorch's autocast redispatches below itself).
// Internal to hearth/ops.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "hearth/core/tensor.h"
#include "hearth/ops/autocast.h"

namespace hearth::detail {

enum class CastPolicy {
  lower_precision,  // floating inputs (not float64) to the autocast dtype
  float32,          // half inputs up to float32
  promote,          // floating inputs to the widest floating dtype among them
};

// The table entry for `op`; nullopt for an op autocast leaves alone.
std::optional<CastPolicy> autocast_policy(const std::string& op);

// `t` in `dtype`, recorded by autograd; a parameter's cast is cached for the
// autocast region (hearth/ops/autocast.cpp).
Tensor autocast_cast(const Tensor& t, DType dtype);

// The cast arguments of one op call. True when autocast applies: the op must
// run again on operator[](i), which it may do while this object lives (it
// suspends autocast).
class AutocastCall {
 public:
  AutocastCall() = default;
  AutocastCall(const char* op, std::initializer_list<const Tensor*> args);
  AutocastCall(const AutocastCall&) = delete;
  AutocastCall& operator=(const AutocastCall&) = delete;

  explicit operator bool() const { return suspend_.has_value(); }
  const Tensor& operator[](size_t i) const { return args_[i]; }
  const std::vector<Tensor>& args() const { return args_; }

 private:
  std::vector<Tensor> args_;
  std::optional<AutocastSuspend> suspend_;
};

template <typename... T>
AutocastCall autocast(const char* op, const T&... args) {
  if (!autocast_active()) return AutocastCall();
  return AutocastCall(op, {&args...});
}

}  // namespace hearth::detail
