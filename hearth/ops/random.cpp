// Random factories over the global Philox generator.
#include "hearth/core/generator.h"
#include "hearth/dispatch/schemas/random.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/op_utils.h"

namespace hearth {
namespace {

void random_fill(OpId id, const Tensor& t, bool four_per_counter, double a, double b) {
  const char* name = op_name(id);
  OpHandle op = detail::op_handle(id);
  detail::check_inplace_allowed(name, t);
  if (t.numel() == 0) return;
  Generator& g = default_generator();
  RandomAttrs attrs{g.seed(), g.reserve(random_counters(t.numel(), four_per_counter)), a, b};
  if (t.is_contiguous()) {
    detail::run(op, {}, {t}, attrs);
  } else {  // generate in logical order, then scatter into the strided view
    Tensor dense = Tensor::empty(t.shape(), t.dtype(), t.device());
    detail::run(op, {}, {dense}, attrs);
    Tensor dst = t;
    copy_(dst, dense);
  }
  t.bump_version();
}

}  // namespace

const Tensor& uniform_(const Tensor& t, double low, double high) {
  detail::check_floating("uniform_", t, "self");
  random_fill(OpId::uniform_, t, t.dtype() != DType::float64, low, high);
  return t;
}

const Tensor& normal_(const Tensor& t, double mean, double std) {
  detail::check_floating("normal_", t, "self");
  HEARTH_CHECK(std >= 0, ValueError, "[normal_] std must be non-negative, got ", std);
  random_fill(OpId::normal_, t, false, mean, std);
  return t;
}

Tensor rand(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  uniform_(t, 0.0, 1.0);
  return t;
}

Tensor randn(const Shape& shape, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  normal_(t, 0.0, 1.0);
  return t;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device) {
  HEARTH_CHECK(high > low, ValueError, "[randint] expected low < high, got low=", low, " high=", high);
  Tensor t = empty(shape, dtype, device);
  random_fill(OpId::randint_, t, false, static_cast<double>(low), static_cast<double>(high));
  return t;
}

}  // namespace hearth
