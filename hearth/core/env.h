// Reading configuration from the environment, in one consistent way.
#pragma once

#include <string>

namespace hearth {

// "1", "true", "yes", "on" (any case) are true; unset or anything else is false.
bool env_flag(const char* name);
// The variable's value, or `fallback` when unset.
std::string env_string(const char* name, const std::string& fallback = "");

}  // namespace hearth
