// bench_image_loader's comparison of the two places images are decoded when
// batches go to an accelerator: on the CPU by the loader's workers (then
// copied to the device, as the Trainer copies them), or on the device by its
// image decoder (nvJPEG and the resampling kernel), the workers only reading
// files and drawing crops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hearth/core/device.h"

namespace hearth::bench {

struct DeviceLoaderOptions {
  std::string dir;
  Device device;
  int64_t image_size = 224;
  int64_t batch_size = 128;
  int64_t batches = 8;          // images per run: batches * batch_size ...
  double max_seconds = 0;       // ... or fewer once a run has taken this long (0: no limit)
  bool eval = false;            // Resize + CenterCrop instead of RandomResizedCrop + flip
  bool bf16_channels_last = false;  // what a bf16-mixed channels_last model takes
  bool device_decoding_only = false;  // skip the CPU-decoding column
  std::vector<int64_t> workers;
};

// For each worker count: images/s with HEARTH_IMAGE_DECODER=cpu and =gpu,
// batches complete on the device in both. Prints a table.
int compare_device_decoding(const DeviceLoaderOptions& o);

// One thread, each stage of the device path alone: reading a file and
// drawing its plan (a worker's share), then the device's decode and finish of
// whole batches (synchronous). ms per image and images/s.
int device_decoding_stages(const DeviceLoaderOptions& o);

}  // namespace hearth::bench
