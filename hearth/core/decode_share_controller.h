// How much of each batch a device image decoder's worker makes on the host
// while the device decodes the rest (HEARTH_IMAGE_HOST_SHARE).
//
// A device image decoder (device_image_decoder.h) queues a batch's JPEGs on
// the device and, while the device decodes them, the calling worker makes on
// the host the images the device does not take; the batch is done when both
// parts are. When the device's part is the slower one (the device is shared
// by every worker and by the training steps), the worker's core sits idle
// until the device is done, and batches come at the device's pace alone.
// Giving the host the last few of the images the device would take, so that
// the host's part and the device's part of a batch take about the same time,
// makes batches come at the pace of both decoders together. The share that
// balances them depends on the machine, the images, the number of workers and
// what else the device runs, so it is measured, not set: each batch reports
// how long its host part took (H) and how long the worker then still waited
// for the device's decoding (W), and the controller, one per decoder and
// shared by its workers, moves the share.
//
// The rule, on the mean of a few batches begun at the current share (batches
// begun at an older share, still in flight when it moved, count only towards
// the host's cost per image):
//  - the device was clearly the slower (W above 10% of H + W and above the
//    host time one step of the share costs, c_h * step * n, c_h the host's
//    smoothed seconds per image, n the batch): raise the share by half the
//    estimated distance to the balance point, W / (c_h + c_d) images (c_d
//    the device's seconds per image it decoded, (H + W) / its images), at
//    least one step, at most `max_steps`;
//  - the host was the slower (W under 2% of H + W): lower it by one step,
//    and from the third consecutive lowering on by twice the last, at most
//    `max_steps`;
//  - in between (the dead band): keep it.
// Raising only when the wait is larger than what a step costs the host keeps
// the share at 0 where the device decodes a whole batch faster than the host
// makes one step's images; the averaging and the dead band keep +-20% jitter
// in either part from moving it more than about three steps from the
// balance (tests/unit/core/test_decode_share_controller.cpp). Until the host
// has made an image its cost is unknown: a worker that waited raises the
// share by one step, a probe that measures it.
//
// Plain C++ (no device calls), so it is tested on the CPU with simulated
// decoders.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace hearth {

// HEARTH_IMAGE_HOST_SHARE: `auto` (or unset: the controller below) or a fixed
// share from 0 to 1 (0: the device takes every image it can).
struct ImageHostShareSetting {
  bool adaptive = true;
  double fixed = 0.0;  // when not adaptive
};

// Parses a value of HEARTH_IMAGE_HOST_SHARE; a ValueError naming the variable
// and what it takes for anything else.
ImageHostShareSetting parse_image_host_share(const std::string& value);
// The variable's setting, parsed (a decoder reads it once, when it is made).
ImageHostShareSetting image_host_share_from_env();

class DecodeShareController {
 public:
  struct Options {
    double step = 1.0 / 64;           // the share moves by multiples of this
    double cap = 0.5;                 // the adaptive share stays in [0, cap]
    int batches_per_decision = 4;     // batches averaged before each move
    int max_steps = 8;                // the largest move, in steps
    double raise_gain = 0.5;          // the part of the estimated distance a raise covers
    double device_slower_wait = 0.1;  // W above this part of H + W (and above a step's host time): raise
    double host_slower_wait = 0.02;   // W below this part of H + W: the host was the slower
    double cost_smoothing = 0.25;     // weight of a new batch in the host's cost per image
  };

  // What a batch uses: how many images the host makes, and the share's
  // generation, passed back with the batch's measurements.
  struct Plan {
    int64_t host_images = 0;
    uint64_t generation = 0;
  };

  // One batch's measurements.
  struct Measurement {
    double host_seconds = 0.0;  // H: making the host's images
    double wait_seconds = 0.0;  // W: then waiting for the device's decoding
    int64_t host_images = 0;    // every image made on the host (those the device cannot take too)
    int64_t device_images = 0;  // the images the device decoded
  };

  DecodeShareController();
  explicit DecodeShareController(ImageHostShareSetting setting);
  DecodeShareController(ImageHostShareSetting setting, Options options);

  // For a batch of `batch_images` of which the device could take `device_capable`:
  // the host makes round(share * batch_images) of those, at most all of them.
  Plan plan(int64_t batch_images, int64_t device_capable) const;
  // The measurements of a batch made with `plan`.
  void report(const Plan& plan, const Measurement& m);

  bool adaptive() const { return setting_.adaptive; }
  // The share now.
  double share() const;
  // "adaptive, now 12.5%" or "fixed at 25%", for a log line.
  std::string describe() const;

 private:
  const ImageHostShareSetting setting_;
  const Options options_;
  mutable std::mutex mu_;
  double share_ = 0.0;
  uint64_t generation_ = 0;
  double host_cost_ = 0.0;  // c_h, seconds per image made on the host
  bool host_cost_known_ = false;
  int lowerings_ = 0;  // consecutive lowerings
  // The batches reported at the current generation since the last decision.
  int count_ = 0;
  double sum_host_ = 0.0, sum_wait_ = 0.0, sum_host_images_ = 0.0, sum_device_images_ = 0.0;
};

}  // namespace hearth
