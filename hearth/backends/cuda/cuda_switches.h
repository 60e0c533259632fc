// The CUDA backend's environment switches, declared in cuda_switches.cpp
// (hearth/core/switches.h says how switches are declared and read). Plain C++:
// compiled in every build, so `hearth env` and the README's table list them
// whether or not this build has CUDA.
#pragma once

#include "hearth/core/switches.h"

namespace hearth::switches {

const NumberSwitch& cuda_memory_fraction();
const TextSwitch& cuda_driver_library();
const FlagSwitch& cudnn_fusion();
const FlagSwitch& cudnn_legacy();
const FlagSwitch& cudnn_log();
const TextSwitch& nvjpeg_library();
const WordsSwitch& nvjpeg_backend();
const NumberSwitch& nvjpeg_hardware_share();
const IntegerSwitch& image_decode_lanes();
const TextSwitch& image_host_decoding();
const IntegerSwitch& image_host_threads();
const FlagSwitch& image_decode_report();

}  // namespace hearth::switches
