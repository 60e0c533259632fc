#include "hearth/core/dtype.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace hearth {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::float32:
      return "float32";
    case DType::float64:
      return "float64";
    case DType::bfloat16:
      return "bfloat16";
    case DType::float16:
      return "float16";
    case DType::int64:
      return "int64";
    case DType::int32:
      return "int32";
    case DType::uint8:
      return "uint8";
    case DType::bool_:
      return "bool";
  }
  return "?";
}

DType parse_dtype(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "float32" || n == "fp32" || n == "float" || n == "f32") return DType::float32;
  if (n == "float64" || n == "fp64" || n == "double" || n == "f64") return DType::float64;
  if (n == "bfloat16" || n == "bf16") return DType::bfloat16;
  if (n == "float16" || n == "fp16" || n == "half" || n == "f16") return DType::float16;
  if (n == "int64" || n == "long" || n == "i64") return DType::int64;
  if (n == "int32" || n == "int" || n == "i32") return DType::int32;
  if (n == "uint8" || n == "u8") return DType::uint8;
  if (n == "bool") return DType::bool_;
  HEARTH_THROW(ValueError, "[dtype] unknown dtype '", name,
               "'; expected one of float32, float64, bfloat16, float16, int64, int32, uint8, bool");
}

size_t itemsize(DType t) {
  switch (t) {
    case DType::float64:
    case DType::int64:
      return 8;
    case DType::float32:
    case DType::int32:
      return 4;
    case DType::bfloat16:
    case DType::float16:
      return 2;
    case DType::uint8:
    case DType::bool_:
      return 1;
  }
  return 0;
}

bool is_floating(DType t) {
  return t == DType::float32 || t == DType::float64 || t == DType::bfloat16 || t == DType::float16;
}

bool is_integral(DType t, bool include_bool) {
  return t == DType::int64 || t == DType::int32 || t == DType::uint8 || (include_bool && t == DType::bool_);
}

bool is_half_type(DType t) { return t == DType::bfloat16 || t == DType::float16; }

double lowest_finite(DType t) {
  switch (t) {
    case DType::float64:
      return std::numeric_limits<double>::lowest();
    case DType::float32:
      return static_cast<double>(std::numeric_limits<float>::lowest());
    case DType::bfloat16:
      return -3.3895313892515355e38;  // -(2 - 2^-7) * 2^127
    case DType::float16:
      return -65504.0;
    default:
      HEARTH_THROW(TypeError, "[dtype] lowest_finite expects a floating dtype, got ", dtype_name(t));
  }
}

DTypeCategory category(DType t) {
  if (t == DType::bool_) return DTypeCategory::boolean;
  return is_floating(t) ? DTypeCategory::floating : DTypeCategory::integral;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // PyTorch's table, restricted to our dtypes.
  if (a == DType::bool_) return b;
  if (b == DType::bool_) return a;
  bool fa = is_floating(a), fb = is_floating(b);
  if (fa && !fb) return a;
  if (fb && !fa) return b;
  if (fa && fb) {
    if (a == DType::float64 || b == DType::float64) return DType::float64;
    if (a == DType::float32 || b == DType::float32) return DType::float32;
    return DType::float32;  // bfloat16 with float16
  }
  // both integral (int64, int32, uint8)
  if (a == DType::int64 || b == DType::int64) return DType::int64;
  if (a == DType::int32 || b == DType::int32) return DType::int32;
  return DType::uint8;
}

}  // namespace hearth
