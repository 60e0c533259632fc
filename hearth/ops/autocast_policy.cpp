// Which ops autocast touches, and how: the one table to read or change.
#include "hearth/ops/autocast_policy.h"

#include <unordered_map>

#include "hearth/core/errors.h"

namespace hearth::detail {
namespace {

const std::unordered_map<std::string, CastPolicy>& policy_table() {
  using P = CastPolicy;
  static const std::unordered_map<std::string, CastPolicy> table = {
      // Products: where low precision pays (tensor cores, half the bytes), and
      // where the float32 accumulation of the kernels keeps it accurate.
      {"matmul", P::lower_precision},
      {"mm", P::lower_precision},
      {"bmm", P::lower_precision},
      {"linear", P::lower_precision},
      {"conv2d", P::lower_precision},
      {"scaled_dot_product_attention", P::lower_precision},
      {"fused_attention", P::lower_precision},
      // Range and accuracy: exponentials overflow half types, long sums lose
      // their small terms, and losses and normalisations feed every gradient.
      {"softmax", P::float32},
      {"log_softmax", P::float32},
      {"cross_entropy", P::float32},
      {"nll_loss", P::float32},
      {"mse_loss", P::float32},
      {"layer_norm", P::float32},
      {"sum", P::float32},
      {"mean", P::float32},
      {"cumsum", P::float32},
      {"norm", P::float32},
      {"var", P::float32},
      {"std", P::float32},
      {"exp", P::float32},
      {"log", P::float32},
      {"rsqrt", P::float32},
      {"pow", P::float32},
      // Ops whose inputs must share one dtype, where the two sides of a mixed
      // network meet: the widest wins.
      {"scatter_add", P::promote},
  };
  return table;
}

}  // namespace

std::optional<CastPolicy> autocast_policy(const std::string& op) {
  auto it = policy_table().find(op);
  if (it == policy_table().end()) return std::nullopt;
  return it->second;
}

AutocastCall::AutocastCall(const char* op, std::initializer_list<const Tensor*> args) {
  const std::optional<CastPolicy> policy = autocast_policy(op);
  HEARTH_CHECK(policy.has_value(), ValueError, "[autocast] op '", op,
               "' calls the autocast hook but has no entry in the policy table (hearth/ops/autocast_policy.cpp)");
  // The device is that of the first floating argument; ops validate devices themselves.
  const Tensor* first = nullptr;
  for (const Tensor* t : args)
    if (first == nullptr && t->defined() && t->is_floating_point()) first = t;
  if (first == nullptr || !autocast_enabled(first->device().kind)) return;

  DType target = DType::float32;
  switch (*policy) {
    case CastPolicy::lower_precision:
      target = autocast_dtype(first->device().kind);
      break;
    case CastPolicy::float32:
      target = DType::float32;
      break;
    case CastPolicy::promote:
      target = first->dtype();
      for (const Tensor* t : args)
        if (t->defined() && t->is_floating_point()) target = promote_types(target, t->dtype());
      break;
  }
  args_.reserve(args.size());
  for (const Tensor* t : args) {
    bool eligible = t->defined() && t->is_floating_point();
    // float64 asks for more precision than autocast offers: left alone, as in PyTorch.
    if (*policy == CastPolicy::lower_precision) eligible = eligible && t->dtype() != DType::float64;
    if (*policy == CastPolicy::float32) eligible = eligible && is_half_type(t->dtype());
    args_.push_back(eligible ? autocast_cast(*t, target) : *t);
  }
  suspend_.emplace();
}

}  // namespace hearth::detail
