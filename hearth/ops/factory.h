// Creating tensors: uninitialised, filled, ranges, random, and from host data.
#pragma once

#include <cstdint>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth {

Tensor empty(const Shape& shape, DType dtype = DType::float32, Device device = Device());
Tensor zeros(const Shape& shape, DType dtype = DType::float32, Device device = Device());
Tensor ones(const Shape& shape, DType dtype = DType::float32, Device device = Device());
Tensor full(const Shape& shape, const Scalar& value, DType dtype = DType::float32, Device device = Device());
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, const Scalar& value);

// [start, end) in steps; dtype int64 unless a float argument or dtype says otherwise.
Tensor arange(const Scalar& end, DType dtype, Device device = Device());
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, DType dtype, Device device = Device());
Tensor arange(int64_t end, Device device = Device());
Tensor linspace(double start, double end, int64_t steps, DType dtype = DType::float32, Device device = Device());
Tensor eye(int64_t n, int64_t m = -1, DType dtype = DType::float32, Device device = Device());

// Random, from the global Philox generator (hearth/core/generator.h): the same
// seed gives the same numbers on every device and thread count.
Tensor rand(const Shape& shape, DType dtype = DType::float32, Device device = Device());   // U[0, 1)
Tensor randn(const Shape& shape, DType dtype = DType::float32, Device device = Device());  // N(0, 1)
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::int64, Device device = Device());
// In place: uniform in [low, high) and normal(mean, std), used by nn::init.
const Tensor& uniform_(const Tensor& t, double low = 0.0, double high = 1.0);
const Tensor& normal_(const Tensor& t, double mean = 0.0, double std = 1.0);

// Copies host values into a new tensor (shape defaults to 1-D).
template <typename T>
Tensor tensor(const std::vector<T>& values, const Shape& shape, Device device = Device());
template <typename T>
Tensor tensor(const std::vector<T>& values, Device device = Device()) {
  return tensor(values, Shape{static_cast<int64_t>(values.size())}, device);
}
Tensor tensor(std::initializer_list<float> values, Device device = Device());
// Copies `nbytes` from host memory into a new tensor of `shape` and `dtype`.
Tensor from_buffer(const void* data, const Shape& shape, DType dtype, Device device = Device());
// A zero-dim tensor holding `value`.
Tensor scalar_tensor(const Scalar& value, DType dtype, Device device = Device());

}  // namespace hearth
