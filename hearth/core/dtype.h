// Element types and PyTorch's type-promotion rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "hearth/core/errors.h"
#include "hearth/core/half.h"

namespace hearth {

enum class DType : uint8_t { float32, float64, bfloat16, float16, int64, int32, uint8, bool_ };
inline constexpr int kNumDTypes = 8;

const char* dtype_name(DType t);             // "float32", ...
DType parse_dtype(const std::string& name);  // accepts "float32", "fp32", "float", "bf16", ...
size_t itemsize(DType t);
bool is_floating(DType t);
bool is_integral(DType t, bool include_bool = false);
bool is_half_type(DType t);  // bfloat16, float16
// The most negative finite value of a floating dtype (what masked scores get).
double lowest_finite(DType t);

// PyTorch's promote_types for two tensor dtypes.
DType promote_types(DType a, DType b);

// Category used when a zero-dim tensor or a Python-style scalar meets a tensor:
// it only wins if its category (bool < integral < floating) is higher.
enum class DTypeCategory : uint8_t { boolean = 0, integral = 1, floating = 2 };
DTypeCategory category(DType t);

// A set of dtypes, for backends to declare what a kernel supports.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> l) {
    for (DType t : l) bits_ |= 1u << static_cast<unsigned>(t);
  }
  constexpr bool contains(DType t) const { return bits_ & (1u << static_cast<unsigned>(t)); }
  constexpr DTypeSet operator|(DTypeSet o) const {
    DTypeSet r;
    r.bits_ = bits_ | o.bits_;
    return r;
  }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint32_t bits() const { return bits_; }  // bit i: DType i
  static constexpr DTypeSet all() {
    DTypeSet r;
    r.bits_ = (1u << kNumDTypes) - 1;
    return r;
  }
  static constexpr DTypeSet floating() { return {DType::float32, DType::float64, DType::bfloat16, DType::float16}; }
  static constexpr DTypeSet integral() { return {DType::int64, DType::int32, DType::uint8}; }

 private:
  uint32_t bits_ = 0;
};

// C++ type <-> DType.
template <typename T>
struct dtype_of;
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::float32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::float64;
};
template <>
struct dtype_of<BFloat16> {
  static constexpr DType value = DType::bfloat16;
};
template <>
struct dtype_of<Half> {
  static constexpr DType value = DType::float16;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::int64;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::int32;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::uint8;
};
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::bool_;
};
template <typename T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

// A type as a value, for visitors (hearth/core/dtype_visit.h).
template <typename T>
struct TypeTag {
  using type = T;
};

// The type arithmetic happens in: float for the half types, the type itself otherwise.
template <typename T>
using compute_t = std::conditional_t<std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>, float, T>;

}  // namespace hearth
