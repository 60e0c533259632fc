// The switches of the backend code any accelerator may share (an image
// decoder's lanes and its host share), declared once (see
// hearth/core/switches.h). Compiled in every build.
#include "hearth/backends/common/common_switches.h"

#include <cstdlib>
#include <string>

namespace {

// HEARTH_IMAGE_HOST_DECODING: off, auto, or a fixed share from 0 to 1.
std::string host_decoding_problem(const std::string& v) {
  if (v == "off" || v == "auto") return "";
  char* end = nullptr;
  const double f = std::strtod(v.c_str(), &end);
  if (!v.empty() && end == v.c_str() + v.size() && f >= 0.0 && f <= 1.0) return "";
  return "expected off, auto or a fraction from 0 to 1";
}

}  // namespace

using hearth::SwitchReading;

HEARTH_DECLARE_SWITCH(
    IntegerSwitch, image_decode_lanes,
    {.name = "HEARTH_IMAGE_DECODE_LANES",
     .default_value = "2",
     .description = "CUDA builds: how many batches the GPU decodes at once (0: one per loader worker)",
     .reader = "hearth/backends/common/decode_lanes.cpp (when the decoder is made)",
     .reading = SwitchReading::each_use,
     .min = 0,
     .max = 64})

HEARTH_DECLARE_SWITCH(TextSwitch, image_host_decoding,
                      {.name = "HEARTH_IMAGE_HOST_DECODING",
                       .default_value = "off",
                       .description = "CUDA builds: whether host threads decode a share of each batch beside the GPU",
                       .reader = "hearth/backends/common/host_share.cpp (when the decoder is made)",
                       .reading = SwitchReading::each_use,
                       .check = host_decoding_problem,
                       .allowed = "off, auto or a fraction from 0 to 1"})

HEARTH_DECLARE_SWITCH(IntegerSwitch, image_host_threads,
                      {.name = "HEARTH_IMAGE_HOST_THREADS",
                       .default_value = "",
                       .description = "CUDA builds: threads decoding the host's share (unset: the cores less 4)",
                       .reader = "hearth/backends/common/host_decode_pool.cpp (when the decoder is made)",
                       .reading = SwitchReading::each_use,
                       .min = 0,
                       .max = 256})
