// Where each batch of images is made when batches are finished on the
// device: the device's decoding lanes, or the host.
//
// The device decodes a few batches at once (HEARTH_IMAGE_DECODE_LANES, 2 by
// default); more decoding states than that only add memory and contention.
// Loader workers beyond the lanes wait for one, which costs nothing while
// the device decodes faster than the model trains. Under a training step the
// JPEG engines deliver about as many images a second as ResNet-50 trains on.
// With HEARTH_IMAGE_HOST_DECODING=auto a worker whose batch would wait
// longer for the device than the host takes to make it makes it on the host
// instead (the CPU path's decode and transforms, then copied up), so the
// host's cores and the engines together feed the step, and no batch comes
// later than the device would have made it (the loader hands batches over in
// order, so a slow one holds up those behind it). Both times are running averages of
// the batches made each way (the host's starts at a guess, 1 ms an image,
// until a batch has been made there). When the lanes have stood idle (an
// epoch or an evaluation ends, another starts) the device's time is
// forgotten: the next batches meet another load (evaluation decodes several
// times faster than training lets it), so no batch goes to the host until
// one has been timed on the device again. By default (off) every batch is
// made on the device: since the device has 32 work queues (runtime.cu) the
// engines keep up with ResNet-50's bf16 step on an H100 by themselves, and
// host batches (the CPU path's float32 pixels, copied up) made training no
// faster at 12-16 workers, 10% slower at 8, and evaluation slower
// (bench/NOTES.md section 45).
//
// Plain C++ (no CUDA): the policy is tested where CI runs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace hearth::cuda {

class DecodeLanes {
 public:
  enum class Route { device, host };

  // lanes 0: no limit (every worker decodes on the device at once, never on
  // the host). host_spill: whether a batch may go to the host.
  DecodeLanes(size_t lanes, bool host_spill);

  // Where a batch of `images` is made. Route::device holds a lane, waited
  // for if need be, until leave_device(); Route::host holds nothing.
  Route enter(size_t images);
  // Frees the lane; `seconds` it was held, from enter() returning to the
  // batch complete on the device.
  void leave_device(size_t images, double seconds);
  // A batch made on the host in `seconds`.
  void record_host(size_t images, double seconds);

  // The running averages, seconds an image (for tests and logs).
  double device_seconds_per_image() const;
  double host_seconds_per_image() const;

 private:
  const size_t lanes_;
  const bool host_spill_;
  mutable std::mutex mu_;
  std::condition_variable lane_free_;
  size_t active_ = 0;   // lanes held
  size_t waiting_ = 0;  // batches waiting for one
  double device_per_image_ = 0.0;    // 0 until a batch has been decoded
  double host_per_image_ = 1e-3;     // a guess until a batch has been made on the host
  bool host_measured_ = false;
  std::chrono::steady_clock::time_point idle_since_{};  // when the last lane was freed with nobody waiting
};

// HEARTH_IMAGE_DECODE_LANES (default 2; 0: no limit) and
// HEARTH_IMAGE_HOST_DECODING (off, the default, or auto), read once.
size_t decode_lanes_from_env();
bool host_decoding_from_env();

}  // namespace hearth::cuda
