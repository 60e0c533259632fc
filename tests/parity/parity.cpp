#include "tests/parity/parity.h"

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/view.h"

namespace hearth::parity {

namespace {
std::vector<ParityCase>& cases() {
  static std::vector<ParityCase> c;
  return c;
}
}  // namespace

void register_parity_case(ParityCase c) { cases().push_back(std::move(c)); }
const std::vector<ParityCase>& parity_cases() { return cases(); }

double default_tolerance(DType t) {
  switch (t) {
    case DType::float64:
      return 1e-10;
    case DType::float32:
      return 1e-5;
    case DType::bfloat16:
      return 1e-2;
    case DType::float16:
      return 2e-3;
    default:
      return 0;
  }
}

Tensor random_input(const Shape& shape, DType dtype) {
  // Half true, half false: a cast of nonzero values would make every bool true.
  if (dtype == DType::bool_) return lt(rand(shape, DType::float64), 0.5);
  Tensor t = sub(mul(rand(shape, DType::float64), 2.0), 1.0);
  if (is_integral(dtype, true)) t = mul(t, 50.0);
  return cast(t, dtype);
}

std::vector<Tensor> relu_safe_conv_inputs(const Shape& x, const Shape& w, bool bias, DType dtype) {
  auto small_integers = [&](const Shape& s) { return cast(randint(-2, 3, s, DType::int64), dtype); };
  return {small_integers(x), small_integers(w),
          bias ? cast(add(randint(-3, 3, {w[0]}, DType::int64).to(DType::float64), 0.5), dtype) : Tensor()};
}

Tensor random_transposed(const Shape& shape, DType dtype) {
  if (shape.size() < 2) return slice(random_input({shape.empty() ? 1 : shape[0] * 2}, dtype), 0, 0, -1, 2);
  Shape s = shape;
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return transpose(random_input(s, dtype), -1, -2);
}

ParityCase unary(const std::string& op, std::vector<std::string> covers, std::vector<DType> dtypes,
                 std::function<Tensor(const Tensor&)> f, bool positive, bool backward) {
  return ParityCase{op + " dense + transposed",
                    std::move(covers),
                    std::move(dtypes),
                    [positive](DType dt) {
                      Tensor x = random_input({23, 41}, dt);
                      if (positive) x = cast(add(abs(cast(x, DType::float64)), 0.5), dt);
                      return std::vector<Tensor>{x};
                    },
                    [f](const std::vector<Tensor>& in, Device) {
                      return std::vector<Tensor>{f(in[0]), f(transpose(in[0], 0, 1))};
                    },
                    backward};
}

ParityCase binary(const std::string& name, std::vector<std::string> covers, std::vector<DType> dtypes,
                  std::function<Tensor(const Tensor&, const Tensor&)> f, bool backward) {
  return ParityCase{
      name + " broadcast + transposed",
      std::move(covers),
      std::move(dtypes),
      [](DType dt) {
        Tensor a = random_input({19, 33}, dt);
        // Share some rows so eq/ne and ties see equal elements.
        Tensor b = random_input({19, 33}, dt);
        copy_(slice(b, 0, 0, 5), slice(a, 0, 0, 5));
        return std::vector<Tensor>{a, b, random_input({33}, dt)};
      },
      [f](const std::vector<Tensor>& in, Device) {
        return std::vector<Tensor>{f(in[0], in[1]), f(transpose(in[0], 0, 1), transpose(in[1], 0, 1)), f(in[0], in[2])};
      },
      backward};
}

Tensor cat_bools(const Tensor& a, const Tensor& b) { return add(cast(a, DType::uint8), mul(cast(b, DType::uint8), 2)); }

ParityCase one_input(std::string name, std::vector<std::string> covers, std::vector<DType> dtypes, Shape shape,
                     std::function<std::vector<Tensor>(const Tensor&)> fn, bool backward, double tolerance) {
  return ParityCase{std::move(name),
                    std::move(covers),
                    std::move(dtypes),
                    [shape](DType dt) { return std::vector<Tensor>{random_input(shape, dt)}; },
                    [fn](const std::vector<Tensor>& in, Device) { return fn(in[0]); },
                    backward,
                    tolerance};
}

Tensor positive(const Shape& shape, DType dt) {
  return cast(add(mul(random_input(shape, DType::float64), 0.5), 1.0), dt);
}

Tensor nhwc(const Tensor& t) { return contiguous(t, MemoryFormat::channels_last); }

}  // namespace hearth::parity
