// How many batches of images the device decodes at once when batches are
// finished on the device.
//
// The device decodes a few batches at once (HEARTH_IMAGE_DECODE_LANES, 2 by
// default); more decoding states than that only add memory and contention
// for the JPEG engines (three or four lanes decoded slower than two, one
// halved evaluation's rate: bench/NOTES.md section 45). Loader workers
// beyond the lanes wait for one. With host decoding on, a share of each
// batch is decoded by host threads of their own meanwhile (host_share.h,
// host_decode_pool.h).
//
// Plain C++ (no CUDA): tested where CI runs.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace hearth::backends {

class DecodeLanes {
 public:
  // lanes 0: no limit (every worker decodes on the device at once).
  explicit DecodeLanes(size_t lanes);

  size_t lanes() const { return lanes_; }
  // Takes a lane, waiting for one if every lane is held.
  void enter();
  // Frees the lane taken by enter().
  void leave();

 private:
  const size_t lanes_;
  std::mutex mu_;
  std::condition_variable lane_free_;
  size_t active_ = 0;  // lanes held
};

// HEARTH_IMAGE_DECODE_LANES (default 2; 0: no limit), read once.
size_t decode_lanes_from_env();

}  // namespace hearth::backends
