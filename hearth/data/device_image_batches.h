// A DataLoader's batches of images finished on the device they are bound for.
//
// With a data set that plans its images (hearth/data/planned_images.h) and a
// device decoder chosen (hearth/data/image_decoder_choice.h), a worker
// building a batch reads each file, draws each sample's crop and flip exactly
// as the CPU path draws them, and hands the encoded files and their plans to
// the device decoder, which decodes, crops, resizes, flips and normalises the
// whole batch into the device's memory. The batch's other fields (labels)
// are stacked on the host as the default collate stacks them. Images the
// device does not take (PNG, grey, CMYK, progressive JPEGs) or fails to
// decode are made on the host by the CPU path, sample for sample what it
// would have given, and placed in the batch; a file that does not decode at
// all is replaced as the CPU path replaces it, label included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "hearth/core/device.h"
#include "hearth/core/device_image_decoder.h"
#include "hearth/core/dtype.h"
#include "hearth/core/memory_format.h"
#include "hearth/data/collate.h"
#include "hearth/data/dataset.h"
#include "hearth/data/planned_images.h"

namespace hearth::data {

class DeviceImageBatches {
 public:
  // For a loader over `dataset` whose batches go to `device`, with pixel
  // values in `dtype` (float32 or bfloat16) and `memory_format`: null when
  // its batches are built on the host (the data set does not plan its
  // images, or no device decoder was chosen).
  static std::unique_ptr<DeviceImageBatches> for_loader(const Dataset& dataset, const Device& device, DType dtype,
                                                        MemoryFormat memory_format);

  DeviceImageBatches(const PlannedImageDataset& dataset, std::shared_ptr<DeviceImageDecoder> decoder, DType dtype,
                     MemoryFormat memory_format);

  // The batch of samples indices[0, count) of `epoch`: pixel_values on the
  // device, finished; the other fields stacked into tensors from `make_output`.
  Batch build(const int64_t* indices, size_t count, int64_t epoch, const BatchTensorFactory& make_output) const;

 private:
  const PlannedImageDataset& dataset_;
  std::shared_ptr<DeviceImageDecoder> decoder_;
  DType dtype_;
  MemoryFormat memory_format_;
};

}  // namespace hearth::data
