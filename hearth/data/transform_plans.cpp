// Transform::plan for the transforms a device can carry out
// (hearth/data/image_plan.h). Each draws exactly what its operator() draws,
// in the same order, and refuses (returns false) wherever the CPU path would
// fail or compute something a plan cannot say; whether a pipeline can be
// planned never depends on the image or the draws.
#include "hearth/data/image_plan.h"
#include "hearth/data/image_transforms.h"
#include "hearth/data/transforms.h"

namespace hearth::data {

bool Transform::plan(ImagePlan&, SampleRng&) const { return false; }

bool ToTensor::plan(ImagePlan& plan, SampleRng&) const {
  // The decoded image becomes float pixels; later transforms may follow.
  if (plan.float_pixels) return false;
  plan.float_pixels = true;
  return true;
}

bool Resize::plan(ImagePlan& plan, SampleRng&) const {
  // Only as the first resize: a second would resample already resampled pixels.
  if (plan.resized || plan.windowed || plan.geometry_closed || plan.normalized) return false;
  const auto [oh, ow] = output_size(plan.image_height, plan.image_width);
  plan.box = {0, 0, plan.image_height, plan.image_width};
  plan.resized_height = plan.out_height = oh;
  plan.resized_width = plan.out_width = ow;
  plan.resized = plan.float_pixels = true;
  return true;
}

bool RandomResizedCrop::plan(ImagePlan& plan, SampleRng& rng) const {
  if (plan.resized || plan.windowed || plan.geometry_closed || plan.normalized) return false;
  plan.box = sample_box(plan.image_height, plan.image_width, rng);
  plan.resized_height = plan.out_height = size_;
  plan.resized_width = plan.out_width = size_;
  plan.resized = plan.float_pixels = true;
  return true;
}

bool CenterCrop::plan(ImagePlan& plan, SampleRng&) const {
  // On float pixels (on the decoded [H, W, 3] image it would cut W and C),
  // once, and before anything that mirrors or rescales values.
  if (!plan.float_pixels || plan.windowed || plan.geometry_closed || plan.normalized) return false;
  const auto [top, left] = offset(plan.resized_height, plan.resized_width);
  plan.window_top = top;
  plan.window_left = left;
  plan.out_height = height_;
  plan.out_width = width_;
  plan.windowed = true;
  return true;
}

bool RandomHorizontalFlip::plan(ImagePlan& plan, SampleRng& rng) const {
  // Drawn whether or not it flips, as operator() draws it.
  const bool flip = rng.uniform() < p_;
  if (!plan.float_pixels) return false;
  plan.flip = plan.flip != flip;
  plan.geometry_closed = true;
  return true;
}

bool Normalize::plan(ImagePlan& plan, SampleRng&) const {
  if (!plan.float_pixels || plan.normalized) return false;
  if ((mean_.size() != 1 && mean_.size() != 3) || (std_.size() != 1 && std_.size() != 3)) return false;
  for (size_t c = 0; c < 3; ++c) {
    plan.mean[c] = mean_[mean_.size() == 1 ? 0 : c];
    plan.std[c] = std_[std_.size() == 1 ? 0 : c];
  }
  plan.normalized = true;
  plan.geometry_closed = true;
  return true;
}

bool Compose::plan(ImagePlan& plan, SampleRng& rng) const {
  for (size_t i = 0; i < transforms_.size(); ++i) {
    SampleRng sub = rng.fork(static_cast<uint32_t>(i));
    if (!transforms_[i]->plan(plan, sub)) return false;
  }
  return true;
}

}  // namespace hearth::data
