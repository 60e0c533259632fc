// The switches of hearth/backends/common/, declared in common_switches.cpp
// (hearth/core/switches.h says how switches are declared and read).
#pragma once

#include "hearth/core/switches.h"

namespace hearth::switches {

const IntegerSwitch& image_decode_lanes();
const TextSwitch& image_host_decoding();
const IntegerSwitch& image_host_threads();

}  // namespace hearth::switches
