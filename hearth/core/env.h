// Reading configuration from the environment, in one consistent way.
#pragma once

#include <string>

namespace hearth {

// A boolean switch: "1", "true", "yes", "on" (any case) are true; "0", "false",
// "no", "off", empty or unset are false. Any other value is a ValueError naming
// the variable, so a typo never silently turns a switch off.
bool env_flag(const char* name);
// The variable's value, or `fallback` when unset.
std::string env_string(const char* name, const std::string& fallback = "");

}  // namespace hearth
