// The CPU backend's environment switches, declared in cpu_switches.cpp
// (hearth/core/switches.h says how switches are declared and read).
#pragma once

#include "hearth/core/switches.h"

namespace hearth::switches {

const WordsSwitch& onednn_layout();
const FlagSwitch& onednn_always();

}  // namespace hearth::switches
