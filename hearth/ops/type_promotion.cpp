#include "hearth/ops/type_promotion.h"

namespace hearth {
namespace {

// Three priority classes, as in PyTorch: dimensioned tensors, zero-dim tensors, scalars.
struct State {
  bool has_dim = false, has_zero = false, has_wrapped = false;
  DType dim_t = DType::bool_, zero_t = DType::bool_, wrapped_t = DType::bool_;
  void add_tensor(const Tensor& t) {
    if (t.dim() > 0) {
      dim_t = has_dim ? promote_types(dim_t, t.dtype()) : t.dtype();
      has_dim = true;
    } else {
      zero_t = has_zero ? promote_types(zero_t, t.dtype()) : t.dtype();
      has_zero = true;
    }
  }
  void add_scalar(const Scalar& s) {
    DType d = s.default_dtype();
    wrapped_t = has_wrapped ? promote_types(wrapped_t, d) : d;
    has_wrapped = true;
  }
  DType result() const {
    DType r = has_dim ? dim_t : DType::bool_;
    bool have = has_dim;
    auto merge = [&](bool present, DType t) {
      if (!present) return;
      if (!have) {
        r = t;
        have = true;
      } else if (category(t) > category(r)) {
        // A higher category from a lower priority class takes its own default
        // width for floats (float32) unless the existing type is wider.
        r = (category(t) == DTypeCategory::floating && !is_floating(r)) ? t : promote_types(r, t);
      }
    };
    merge(has_zero, zero_t);
    merge(has_wrapped, wrapped_t);
    return r;
  }
};

}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  State s;
  s.add_tensor(a);
  s.add_tensor(b);
  return s.result();
}

DType result_type(const Tensor& a, const Scalar& b) {
  State s;
  s.add_tensor(a);
  s.add_scalar(b);
  return s.result();
}

DType result_type(const std::vector<Tensor>& tensors) {
  State s;
  for (const Tensor& t : tensors) s.add_tensor(t);
  return s.result();
}

}  // namespace hearth
