// A number that is not a tensor (the `2` in `x * 2`). It keeps whether it was
// written as a bool, an integer or a float, which decides type promotion.
#pragma once

#include <cstdint>
#include <type_traits>

#include "hearth/core/dtype.h"

namespace hearth {

class Scalar {
 public:
  Scalar() = default;
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T v) {  // NOLINT: implicit, as numbers are
    if constexpr (std::is_same_v<T, bool>) {
      cat_ = DTypeCategory::boolean;
      i_ = v;
      d_ = v;
    } else if constexpr (std::is_integral_v<T>) {
      cat_ = DTypeCategory::integral;
      i_ = static_cast<int64_t>(v);
      d_ = static_cast<double>(v);
    } else {
      cat_ = DTypeCategory::floating;
      d_ = static_cast<double>(v);
      i_ = static_cast<int64_t>(v);
    }
  }
  Scalar(BFloat16 v) : Scalar(static_cast<float>(v)) {}  // NOLINT
  Scalar(Half v) : Scalar(static_cast<float>(v)) {}      // NOLINT

  DTypeCategory category() const { return cat_; }
  double to_double() const { return d_; }
  int64_t to_int() const { return i_; }
  bool to_bool() const { return cat_ == DTypeCategory::floating ? d_ != 0.0 : i_ != 0; }
  // The dtype this scalar gets alone: float32 for floats (PyTorch's default), int64, bool.
  DType default_dtype() const {
    return cat_ == DTypeCategory::floating ? DType::float32
                                           : (cat_ == DTypeCategory::integral ? DType::int64 : DType::bool_);
  }
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(cat_ == DTypeCategory::floating ? static_cast<int64_t>(d_) : i_);
    else return static_cast<T>(static_cast<compute_t<T>>(cat_ == DTypeCategory::floating ? d_ : static_cast<double>(i_)));
  }

 private:
  DTypeCategory cat_ = DTypeCategory::integral;
  double d_ = 0;
  int64_t i_ = 0;
};

}  // namespace hearth
