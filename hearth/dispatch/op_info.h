// What hearth/dispatch/op_list.h generates: the OpId and OpFamily enums, and
// a constexpr table of OpInfo rows, one per op in list order, with accessors.
// Usable from .cpp and .cu files alike.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "hearth/dispatch/op_list.h"

namespace hearth {

enum class OpFamily : uint8_t {
#define HEARTH_OP_FAMILY_ENUM_(family) family,
  HEARTH_OP_FAMILIES(HEARTH_OP_FAMILY_ENUM_)
#undef HEARTH_OP_FAMILY_ENUM_
};

enum class OpId : uint16_t {
#define HEARTH_OP_ID_ENUM_(name, ...) name,
  HEARTH_OP_LIST(HEARTH_OP_ID_ENUM_)
#undef HEARTH_OP_ID_ENUM_
};

#define HEARTH_OP_COUNT_(...) +1
inline constexpr size_t kNumOps = 0 HEARTH_OP_LIST(HEARTH_OP_COUNT_);
inline constexpr size_t kNumOpFamilies = 0 HEARTH_OP_FAMILIES(HEARTH_OP_COUNT_);
#undef HEARTH_OP_COUNT_

// A short list of at most N values, built in constant expressions.
template <typename T, size_t N>
struct FixedList {
  std::array<T, N> items{};
  size_t count = 0;
  constexpr const T* begin() const { return items.data(); }
  constexpr const T* end() const { return items.data() + count; }
  constexpr size_t size() const { return count; }
  constexpr bool empty() const { return count == 0; }
  constexpr const T& operator[](size_t i) const { return items[i]; }
};

struct OpInfo {
  OpId id;
  const char* name;
  OpFamily family;
  const char* schema;                // the attributes struct its kernels read; "" for none
  FixedList<int, 4> mutated_inputs;  // inputs written in place (see op_list.h)
  int mutated_stride;                // > 0: mutated_inputs repeat every mutated_stride inputs
  bool is_view;                      // outputs alias inputs
  FixedList<OpId, 3> backward;       // the ops its backward dispatches
  bool is_fusion;                    // a fusion of primitives, with a composition (see op_list.h)
};

namespace op_list_detail {

template <typename... I>
constexpr FixedList<int, 4> indices(I... i) {
  static_assert(sizeof...(i) <= 4, "op_list.h: at most 4 mutated inputs");
  return {{static_cast<int>(i)...}, sizeof...(i)};
}

template <typename... O>
constexpr FixedList<OpId, 3> ops(O... o) {
  static_assert(sizeof...(o) <= 3, "op_list.h: at most 3 backward ops");
  return {{o...}, sizeof...(o)};
}

constexpr const char* schema_name(const char* s) { return std::string_view(s) == "NoAttrs" ? "" : s; }

// The role column names one of two words; anything else does not compile.
enum class OpRole : uint8_t { primitive, fusion };

constexpr std::array<OpInfo, kNumOps> make_op_table() {
  // The backward column names ops bare: they resolve to OpId's enumerators here.
  using enum OpId;
  return {{
#define HEARTH_OP_INFO_ROW_(name, family, schema, mutates, stride, view, backward, role)                     \
  OpInfo{OpId::name, #name,      OpFamily::family, schema_name(#schema), indices mutates, stride, view, ops backward, \
         OpRole::role == OpRole::fusion},
      HEARTH_OP_LIST(HEARTH_OP_INFO_ROW_)
#undef HEARTH_OP_INFO_ROW_
  }};
}

inline constexpr std::array<OpInfo, kNumOps> kOpTable = make_op_table();

inline constexpr std::array<const char*, kNumOpFamilies> kFamilyNames = {
#define HEARTH_OP_FAMILY_NAME_(family) #family,
    HEARTH_OP_FAMILIES(HEARTH_OP_FAMILY_NAME_)
#undef HEARTH_OP_FAMILY_NAME_
};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < kNumOps; ++i)
    if (static_cast<size_t>(kOpTable[i].id) != i) return false;
  return true;
}
static_assert(table_in_enum_order());

}  // namespace op_list_detail

// The op's row of the list.
constexpr const OpInfo& op_info(OpId id) { return op_list_detail::kOpTable[static_cast<size_t>(id)]; }
constexpr const char* op_name(OpId id) { return op_info(id).name; }
constexpr bool is_fusion(OpId id) { return op_info(id).is_fusion; }
// Every op, in list order (grouped by family).
constexpr std::span<const OpInfo> all_op_infos() { return op_list_detail::kOpTable; }
// The listed op of that name, if any.
constexpr std::optional<OpId> op_id_from_name(std::string_view name) {
  for (const OpInfo& info : op_list_detail::kOpTable)
    if (name == info.name) return info.id;
  return std::nullopt;
}

constexpr const char* family_name(OpFamily f) { return op_list_detail::kFamilyNames[static_cast<size_t>(f)]; }
// Every family, in list order.
constexpr std::array<OpFamily, kNumOpFamilies> all_op_families() {
  std::array<OpFamily, kNumOpFamilies> out{};
  for (size_t i = 0; i < kNumOpFamilies; ++i) out[i] = static_cast<OpFamily>(i);
  return out;
}

}  // namespace hearth
