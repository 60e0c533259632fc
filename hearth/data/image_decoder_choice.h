// Where a loader's image batches are decoded: on the CPU by its workers, or on
// the device the batches are bound for, by that device's image decoder
// (hearth/core/device_image_decoder.h). HEARTH_IMAGE_DECODER chooses:
//
//   auto (default)  the device's decoder when the batches go to an accelerator
//                   that has one; otherwise the CPU, said once in one line
//   cpu             always the CPU
//   gpu             the device's decoder; a DeviceError saying why when there
//                   is none (no accelerator, nvJPEG missing)
//
// Whichever is chosen is said once per process, in one line on the log
// (standard error): which decoder, or why the CPU.
#pragma once

#include <iosfwd>
#include <memory>

#include "hearth/core/device.h"
#include "hearth/core/device_image_decoder.h"

namespace hearth::data {

enum class ImageDecoderSetting { automatic, cpu, device };

// HEARTH_IMAGE_DECODER read now; ValueError naming the variable for anything
// but auto, cpu, gpu (or unset/empty: auto).
ImageDecoderSetting image_decoder_setting();

// The decoder for image batches bound for `device`, or null to decode them on
// the CPU (see above).
std::shared_ptr<DeviceImageDecoder> choose_image_decoder(const Device& device);

// Where the one-time lines go (default: standard error; nullptr: nowhere).
// Setting it also forgets which lines were said, so tests see them again.
void set_image_decoder_log(std::ostream* out);

}  // namespace hearth::data
