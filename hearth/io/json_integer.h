// Reading an integer field of a JSON file into a C++ integer type safely.
// nlohmann's get<T>() converts a float, or an integer outside T's range, with
// a plain cast, which is undefined behaviour for a value T cannot hold: a
// corrupt or hand-edited file can hold 1e30 where a step count belongs (found
// by fuzzing trainer_state.json). Parsers check with this before get<T>().
#pragma once

#include <cstdint>
#include <utility>

#include <nlohmann/json.hpp>

namespace hearth::io {

// Whether `v` is a JSON integer (not a float) that T can hold.
template <typename T>
bool json_integer_fits(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return std::in_range<T>(v.get<uint64_t>());
  if (v.is_number_integer()) return std::in_range<T>(v.get<int64_t>());
  return false;
}

}  // namespace hearth::io
