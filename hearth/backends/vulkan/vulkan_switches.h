// The Vulkan backend's environment switches, declared in vulkan_switches.cpp
// (hearth/core/switches.h says how switches are declared and read). Plain
// C++: compiled in every build, so `hearth env` and the README's table list
// them whether or not this build has Vulkan.
#pragma once

#include <string>

#include "hearth/core/switches.h"

namespace hearth::switches {

const FlagSwitch& vulkan_validation();
const FlagSwitch& vulkan_staged_memory();
const TextSwitch& vulkan_pipeline_cache();

}  // namespace hearth::switches

namespace hearth::vulkan {

// HEARTH_VULKAN_VALIDATION=1: create the instance with Khronos' validation
// layer and count (and print) every error it reports.
bool validation_requested();

// HEARTH_VULKAN_STAGED_MEMORY=1: treat tensor memory as the host cannot map
// it even where it can (unified memory), so a machine without a discrete GPU
// tests the discrete path: reserved addresses and staged copies (memory.h).
bool staged_memory_forced();

// Where the compiled pipelines are kept between runs:
// $XDG_CACHE_HOME/hearth/vulkan_pipeline_cache.bin, else
// ~/.cache/hearth/vulkan_pipeline_cache.bin; empty when neither is set.
// HEARTH_VULKAN_PIPELINE_CACHE overrides the path ("off": no file).
std::string pipeline_cache_path();

}  // namespace hearth::vulkan
