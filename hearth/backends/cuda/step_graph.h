// Step graphs on CUDA: a step's kernels recorded once with stream capture and
// replayed with one cudaGraphLaunch (DeviceRuntime::StepGraph).
//
// Before recording, the step runs once eagerly under watch: it must not copy
// to or from the host or wait for the device (the recorded copy would carry
// the recording's data, the wait cannot be recorded), must free no tensor made
// before it and keep none it makes (the graph's memory is its own, fixed at
// recording). Random kernels draw from the Philox offset reserved while
// recording plus a shift that each replay sets on the device, so replay k
// draws what the eager step would have drawn at that point.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "hearth/core/device_runtime.h"

namespace hearth::cuda {

// A copy between host and device or a wait for the device, counted while a
// step is watched or recorded.
void note_host_round_trip(int device);

// The shift random kernels add to their Philox offset: a device word while a
// step is being recorded on `device`, null otherwise.
const uint64_t* philox_offset_shift(int device);

std::string rehearse_step(int device, const std::function<void()>& step);
std::unique_ptr<DeviceRuntime::StepGraph> capture_step(int device, const std::function<void()>& step);

}  // namespace hearth::cuda
