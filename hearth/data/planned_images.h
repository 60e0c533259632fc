// Samples handed out with their image still encoded and the plan of what the
// transform makes of it (hearth/data/image_plan.h), for loaders that finish
// images on a device: the worker reads the file and draws the sample's
// random choices, the device decodes, crops, resizes and normalises.
#pragma once

#include <cstdint>

#include "hearth/data/dataset.h"
#include "hearth/data/encoded_image.h"
#include "hearth/data/image_plan.h"

namespace hearth::data {

struct PlannedSample {
  Example fields;      // every field but the image (the label)
  EncodedImage image;  // the file (bytes shared, not copied)
  ImagePlan plan;
  // Which sample this is, to make it on the host instead.
  int64_t index = 0;
  int64_t epoch = 0;
};

// A data set that can hand out its image samples planned. Implemented by
// TransformDataset (over a data set that hands images out encoded, such as
// ImageFolder); wrappers that only renumber samples (ShardDataset) pass it on.
class PlannedImageDataset {
 public:
  virtual ~PlannedImageDataset() = default;
  // Whether get_planned() works: the images come encoded and every
  // transform can be said as a plan. Fixed for the data set's life.
  virtual bool plans_images() const = 0;
  // get_for_epoch(index, epoch) with the image left encoded and planned. A
  // file whose header cannot be read is replaced as get_for_epoch replaces it.
  virtual PlannedSample get_planned(int64_t index, int64_t epoch) const = 0;
  // The sample made on the host as get_for_epoch makes it, for an image a
  // device does not take or failed to decode: the same pixels from the same
  // file, or, when the file turns out not to decode at all, the replacement
  // get_for_epoch gives (with its own label).
  virtual Example make_on_host(const PlannedSample& sample) const = 0;
};

// `dataset` as a PlannedImageDataset that plans its images, or nullptr.
const PlannedImageDataset* as_planned_image_dataset(const Dataset& dataset);

}  // namespace hearth::data
