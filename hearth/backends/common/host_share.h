// How many images of each batch the host decodes (host_decode_pool.h) while
// the device's JPEG engines decode the rest.
//
// The split that finishes both parts together: the device takes d seconds
// an image on a lane (its decoding call's wall time over its images; the
// engines are shared by the lanes, so under load a lane's d grows), the host
// t seconds an image on one of P threads, which the L lanes share. While the
// device decodes its n - h images, (n - h) d seconds, the lane's share of
// the threads decodes (P / L) (n - h) d / t images; setting that to h gives
// h = n a / (1 + a) with a = P d / (L t). Both times are running averages of
// what was measured, so the split follows the load: under a training step
// the engines slow 2-3x and the host takes more; evaluating, less. The
// starter of a batch decodes on the host what the pool has not reached when
// the device is done, so a host slower than measured costs little.
//
// HEARTH_IMAGE_HOST_DECODING: off (the default: every image the device
// takes goes to the device), auto (that split), or a fraction from 0 to 1
// (that share of every batch, for tests and experiments). Off by default
// because on the H100 machine (16 cores) the split made nothing faster:
// the host threads took the cores that feed the engines and run the
// training loop, and evaluation's batches came later (bench/NOTES.md section
// 46). A host with many cores to each GPU is where auto can add to the engines.
// Plain C++: tested where CI runs.
#pragma once

#include <cstddef>
#include <mutex>

namespace hearth::backends {

class HostShare {
 public:
  enum class Mode { off, automatic, fixed };

  // `fixed_fraction`: the share in Mode::fixed. `host_threads`: the pool's
  // threads (none: nothing goes to the host). `lanes`: batches the device
  // decodes at once (0: no limit, counted as 1).
  HostShare(Mode mode, double fixed_fraction, size_t host_threads, size_t lanes);
  // As HEARTH_IMAGE_HOST_DECODING and HEARTH_IMAGE_HOST_THREADS say (no
  // threads when off), for `lanes` lanes.
  static HostShare from_env(size_t lanes);

  // The threads the share is sized for: none when nothing goes to the host.
  size_t host_threads() const { return mode_ == Mode::off ? 0 : static_cast<size_t>(host_threads_); }

  // Of `candidates` images the device could decode, how many the host decodes.
  size_t host_images(size_t candidates) const;
  // The device decoded `images` in `seconds`.
  void record_device(size_t images, double seconds);
  // The host decoded one image in `seconds` on one thread.
  void record_host(double seconds);

  double device_seconds_per_image() const;
  double host_seconds_per_image() const;

 private:
  const Mode mode_;
  const double fixed_fraction_;
  const double host_threads_;
  const double lanes_;
  mutable std::mutex mu_;
  double device_per_image_ = 0.0;  // 0 until the device has decoded a batch: nothing goes to the host
  double host_per_image_ = 2e-3;   // a guess (a 500x375 photograph on one core) until measured
  bool host_measured_ = false;
};

// The most of a batch the automatic split gives the host: the engines are
// the faster decoder, and a batch the host mostly makes waits on its slowest thread.
inline constexpr double kMostHostShare = 0.75;

// HEARTH_IMAGE_HOST_DECODING, read once: the mode and, for a fraction, the fraction.
HostShare::Mode host_share_mode_from_env(double* fixed_fraction);

}  // namespace hearth::backends
