#include "hearth/data/device_image_batches.h"

#include <utility>
#include <vector>

#include "hearth/core/errors.h"
#include "hearth/data/batch_assembler.h"
#include "hearth/data/image_decoder_choice.h"

namespace hearth::data {
namespace {

// Every field of `sample` but the image.
Example without_image(const Example& sample) {
  Example out;
  for (const auto& [name, t] : sample)
    if (name != field::kPixelValues) out[name] = t;
  return out;
}

}  // namespace

std::unique_ptr<DeviceImageBatches> DeviceImageBatches::for_loader(const Dataset& dataset, const Device& device,
                                                                   DType dtype, MemoryFormat memory_format) {
  const PlannedImageDataset* planned = as_planned_image_dataset(dataset);
  if (planned == nullptr) return nullptr;
  std::shared_ptr<DeviceImageDecoder> decoder = choose_image_decoder(device);
  if (!decoder) return nullptr;
  return std::make_unique<DeviceImageBatches>(*planned, std::move(decoder), dtype, memory_format);
}

DeviceImageBatches::DeviceImageBatches(const PlannedImageDataset& dataset, std::shared_ptr<DeviceImageDecoder> decoder,
                                       DType dtype, MemoryFormat memory_format)
    : dataset_(dataset), decoder_(std::move(decoder)), dtype_(dtype), memory_format_(memory_format) {
  HEARTH_CHECK(dtype_ == DType::float32 || dtype_ == DType::bfloat16, TypeError,
               "[data] images finished on a device come as float32 or bfloat16, not ", dtype_name(dtype_));
}

Batch DeviceImageBatches::build(const int64_t* indices, size_t count, int64_t epoch,
                                const BatchTensorFactory& make_output) const {
  HEARTH_CHECK(count >= 1, ValueError, "[collate] cannot collate an empty list of samples");
  // Reading the files and drawing the plans: the worker's whole share of the work.
  std::vector<PlannedSample> samples;
  samples.reserve(count);
  for (size_t i = 0; i < count; ++i) samples.push_back(dataset_.get_planned(indices[i], epoch));

  const ImagePlan& first = samples[0].plan;
  std::vector<EncodedImageJob> jobs(count);
  std::vector<Example> fields(count);
  for (size_t i = 0; i < count; ++i) {
    const PlannedSample& s = samples[i];
    // The CPU path stacks equal shapes only, and so does this one.
    HEARTH_CHECK(s.plan.out_height == first.out_height && s.plan.out_width == first.out_width, ShapeError,
                 "[collate] field '", field::kPixelValues, "': sample ", i, " has shape [3, ", s.plan.out_height, ", ",
                 s.plan.out_width, "] but sample 0 has shape [3, ", first.out_height, ", ", first.out_width,
                 "]; default_collate stacks equal shapes only (pad the samples or pass a custom collate)");
    fields[i] = s.fields;
    // Only the plain colour JPEGs go to the device; the rest, which the CPU
    // path converts its own way (grey, CMYK, PNG), are made on the host.
    if (s.image.is_plain_color_jpeg()) {
      jobs[i].data = s.image.bytes().data();
      jobs[i].size = s.image.bytes().size();
    }
    jobs[i].height = s.plan.image_height;
    jobs[i].width = s.plan.image_width;
    jobs[i].resampling = s.plan.resampling();
  }

  const HostImageFallback on_host = [&](size_t slot) {
    Example made = dataset_.make_on_host(samples[slot]);
    const Tensor& pixels = made.at(field::kPixelValues);
    HEARTH_CHECK(pixels.dtype() == DType::float32 && pixels.dim() == 3 && pixels.size(0) == 3 &&
                     pixels.size(1) == first.out_height && pixels.size(2) == first.out_width,
                 ShapeError, "[collate] field '", field::kPixelValues, "': sample ", slot, " made on the host is ",
                 dtype_name(pixels.dtype()), " ", pixels.shape_string(), ", but the batch holds float32 [3, ",
                 first.out_height, ", ", first.out_width, "]");
    // A replacement sample brings its own label.
    fields[slot] = without_image(made);
    return pixels;
  };
  // What the CPU path decodes for the sample: the region its resize reads,
  // at the size it is resized to (RandomResizedCrop's and Resize's request).
  const HostImageDecode decode_on_host = [&](size_t slot) {
    const PlannedSample& s = samples[slot];
    HostDecodedImage out;
    try {
      DecodedRegion region = s.image.decode_region({s.plan.box, s.plan.resized_height, s.plan.resized_width});
      out.pixels = std::move(region.pixels);
      out.box_top = region.box.top;
      out.box_left = region.box.left;
      out.box_height = region.box.height;
      out.box_width = region.box.width;
    } catch (const IoError&) {
      // Left undefined: the fallback makes the sample, or its replacement.
    }
    return out;
  };
  Tensor pixels =
      decoder_->decode_batch(jobs, image_batch_format(first, dtype_, memory_format_), on_host, decode_on_host);

  BatchAssembler assembler(static_cast<int64_t>(count), make_output);
  for (const Example& f : fields) assembler.add(f);
  Batch batch = assembler.finish();
  batch[field::kPixelValues] = std::move(pixels);
  return batch;
}

}  // namespace hearth::data
