// The CUDA backend's image decoder (hearth/core/device_image_decoder.h):
// nvJPEG decodes a batch's files into device memory as Y, Cb and Cr planes,
// one kernel converts them all to RGB (ycbcr_to_rgb.h), and one kernel
// resizes, crops, flips and normalises all of them into the batch
// (image_resample.h). With HEARTH_IMAGE_HOST_DECODING on, host threads
// decode a share of the batch meanwhile (host_share.h) to 8-bit pixels,
// copied up for the same resampling kernel. The images nvJPEG does not take
// are made whole on the host and copied up.
//
// Each call runs in the calling thread (a loader worker) on a stream of its
// own, with buffers of its own taken from a pool of per-call states, and
// returns once the batch is complete on the device, so the training step
// can use it from the device's stream without waiting on anything.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/cuda_switches.h"
#include "hearth/backends/cuda/image/batch_memory.h"
#include "hearth/backends/cuda/image/block_cache.h"
#include "hearth/backends/common/decode_lanes.h"
#include "hearth/backends/common/host_decode_pool.h"
#include "hearth/backends/common/host_share.h"
#include "hearth/backends/cuda/image/image_resample.h"
#include "hearth/backends/cuda/image/nvjpeg_decoder.h"
#include "hearth/backends/cuda/image/ycbcr_to_rgb.h"
#include "hearth/core/device_image_decoder.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/memory_format.h"

namespace hearth::cuda {

using backends::decode_lanes_from_env;
using backends::DecodeLanes;
using backends::HostDecodePool;
using backends::HostShare;

namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// A buffer that grows to the largest request and keeps its memory
// (block_cache.h: no cudaFree while training runs).
struct GrowingBuffer {
  BlockKind kind;
  void* ptr = nullptr;
  size_t capacity = 0;

  explicit GrowingBuffer(BlockKind k) : kind(k) {}
  ~GrowingBuffer() { give_block(kind, ptr); }
  GrowingBuffer(const GrowingBuffer&) = delete;
  GrowingBuffer& operator=(const GrowingBuffer&) = delete;

  uint8_t* reserve(size_t nbytes) {
    if (nbytes > capacity) {
      give_block(kind, ptr);
      const size_t want = round_up(nbytes + nbytes / 4, size_t{1} << 20);  // room for larger batches ahead
      ptr = take_block(kind, want);
      capacity = ptr != nullptr ? want : 0;
      HEARTH_CHECK(ptr != nullptr, OutOfMemoryError, "[cuda] out of memory: the image decoder could not allocate ",
                   want, kind == BlockKind::device ? " bytes on the device" : " bytes of page-locked host memory",
                   " (use a smaller batch or fewer loader workers, or HEARTH_IMAGE_DECODER=cpu)");
    }
    return static_cast<uint8_t*>(ptr);
  }
};

// The pixels [first, end) along one axis of `size` that a box [start, start
// + length) touches: floor of its start to ceiling of its end, within the image.
std::pair<int32_t, int32_t> pixels_touched(double start, double length, int32_t size) {
  const double first = std::clamp(std::floor(start), 0.0, static_cast<double>(size));
  const double end = std::clamp(std::ceil(start + length), first, static_cast<double>(size));
  return {static_cast<int32_t>(first), static_cast<int32_t>(end)};
}

// What the resampling kernel reads of an image decoded to `pixels` (4 bytes
// a pixel, rows `pitch` apart, height x width), with the box, sizes, window
// and flip of its resampling.
ResampleSource resample_source(const ImageResampling& r, const uint8_t* pixels, int64_t pitch, int32_t height,
                               int32_t width) {
  ResampleSource s;
  s.pixels = pixels;
  s.pitch = pitch;
  s.height = height;
  s.width = width;
  s.box_top = r.box_top;
  s.box_left = r.box_left;
  s.box_height = r.box_height;
  s.box_width = r.box_width;
  s.resized_height = static_cast<int32_t>(r.resized_height);
  s.resized_width = static_cast<int32_t>(r.resized_width);
  s.window_top = static_cast<int32_t>(r.window_top);
  s.window_left = static_cast<int32_t>(r.window_left);
  s.flip = r.flip ? 1 : 0;
  return s;
}

// Copies an image decoded on the host (uint8 [h, w, 3]) to `dst` as 4-byte
// pixels, rows `pitch` bytes apart: the layout the resampling kernel reads.
void copy_rgb_to_rgbx(const Tensor& rgb, uint8_t* dst, size_t pitch) {
  const auto h = static_cast<size_t>(rgb.size(0)), w = static_cast<size_t>(rgb.size(1));
  const uint8_t* src = rgb.data<uint8_t>();
  for (size_t y = 0; y < h; ++y) {
    const uint8_t* in = src + y * w * 3;
    uint8_t* out = dst + y * pitch;
    for (size_t x = 0; x < w; ++x) {
      out[4 * x] = in[3 * x];
      out[4 * x + 1] = in[3 * x + 1];
      out[4 * x + 2] = in[3 * x + 2];
      out[4 * x + 3] = 0;
    }
  }
}

// Copies the files nvJPEG will decode into `files` (page-locked) and points
// `data` at the copies.
void stage_files(GrowingBuffer& files, const std::vector<NvjpegDecoder::Inspection>& inspected,
                 std::vector<const uint8_t*>& data, const std::vector<size_t>& sizes) {
  auto decoded_on_device = [&](size_t i) {
    return data[i] != nullptr && inspected[i].route != NvjpegDecoder::Inspection::Route::none;
  };
  size_t total = 0;
  for (size_t i = 0; i < data.size(); ++i)
    if (decoded_on_device(i)) total += round_up(sizes[i], 64);
  if (total == 0) return;
  uint8_t* base = files.reserve(total);
  size_t at = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    if (!decoded_on_device(i)) continue;
    std::memcpy(base + at, data[i], sizes[i]);
    data[i] = base + at;
    at += round_up(sizes[i], 64);
  }
}

// What one call works with: nvJPEG's states, a stream, the decoded images,
// and the staging of the kernel's arguments and of images made on the host.
struct CallState {
  std::unique_ptr<NvjpegDecoder::Session> session;
  cudaStream_t stream = nullptr;
  // Waited on by sleeping, not spinning: a dozen workers spinning while the
  // device decodes would take the cores the training thread needs.
  cudaEvent_t finished = nullptr;
  GrowingBuffer planes{BlockKind::device};   // the Y, Cb and Cr planes nvJPEG writes
  GrowingBuffer decoded{BlockKind::device};  // their RGB pixels (4 bytes each), which the resampling reads
  GrowingBuffer staging_host{BlockKind::pinned_host};
  GrowingBuffer staging_device{BlockKind::device};
  // The compressed files nvJPEG copies to the device: from page-locked memory
  // that copy is asynchronous, from the loader's pageable buffers the driver
  // stages it through its own and the worker blocks meanwhile.
  GrowingBuffer files_host{BlockKind::pinned_host};
  // The pixels of the images decoded on the host, and their copy on the device.
  GrowingBuffer host_pixels{BlockKind::pinned_host};
  GrowingBuffer host_pixels_device{BlockKind::device};

  ~CallState() {
    if (finished != nullptr) cudaEventDestroy(finished);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  // Waits, asleep, until everything queued on the stream has run.
  cudaError_t wait() {
    const cudaError_t recorded = cudaEventRecord(finished, stream);
    return recorded != cudaSuccess ? recorded : cudaEventSynchronize(finished);
  }
};

class CudaImageDecoder final : public DeviceImageDecoder {
 public:
  CudaImageDecoder(int device, std::unique_ptr<NvjpegDecoder> nvjpeg)
      : device_(device),
        nvjpeg_(std::move(nvjpeg)),
        memory_(BatchMemory::create(device)),
        lanes_(decode_lanes_from_env()),
        share_(HostShare::from_env(lanes_.lanes())),
        pool_(share_.host_threads()),
        report_(switches::image_decode_report().get()) {}

  std::string description() const override {
    const size_t threads = pool_.threads();
    return nvjpeg_->description() +
           (threads > 0 ? "; " + std::to_string(threads) + " host threads decode a share of each batch" : "");
  }

  Tensor decode_batch(const std::vector<EncodedImageJob>& images, const ImageBatchFormat& format,
                      const HostImageFallback& fallback, const HostImageDecode& decode_on_host) override;

 private:
  // A call's state, taken from its pool and returned to it (after its
  // stream has finished, so its staging may be written again).
  class Lease {
   public:
    explicit Lease(CudaImageDecoder& d) : d_(d), s_(d.take_state()) {}
    ~Lease() {
      s_->wait();
      (void)cudaGetLastError();
      // What nvJPEG freed during the call: its work on the stream is done.
      release_blocks_held();
      std::lock_guard<std::mutex> lock(d_.mu_);
      d_.idle_.push_back(std::move(s_));
    }
    CallState& operator*() { return *s_; }

   private:
    CudaImageDecoder& d_;
    std::unique_ptr<CallState> s_;
  };

  // Holds a decoding lane for the call, however it ends.
  class LaneHeld {
   public:
    explicit LaneHeld(DecodeLanes& lanes) : lanes_(lanes) { lanes_.enter(); }
    ~LaneHeld() { lanes_.leave(); }
    LaneHeld(const LaneHeld&) = delete;
    LaneHeld& operator=(const LaneHeld&) = delete;

   private:
    DecodeLanes& lanes_;
  };

  std::unique_ptr<CallState> take_state() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        std::unique_ptr<CallState> s = std::move(idle_.back());
        idle_.pop_back();
        return s;
      }
    }
    auto s = std::make_unique<CallState>();
    s->session = nvjpeg_->new_session();
    HEARTH_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    HEARTH_CUDA_CHECK(cudaEventCreateWithFlags(&s->finished, cudaEventBlockingSync | cudaEventDisableTiming));
    return s;
  }

  Tensor make_batch(CallState& call, const std::vector<EncodedImageJob>& images, const ImageBatchFormat& format,
                    const HostImageFallback& fallback, const HostImageDecode& decode_on_host);

  // Counts where a batch's images were made; with HEARTH_IMAGE_DECODE_REPORT
  // set, says so for every kReportEvery batches on stderr.
  void count_batch(size_t on_device, size_t decoded_on_host, size_t made_whole_on_host) {
    if (!report_) return;
    std::lock_guard<std::mutex> lock(mu_);
    counts_.batches += 1;
    counts_.on_device += on_device;
    counts_.decoded_on_host += decoded_on_host;
    counts_.made_whole_on_host += made_whole_on_host;
    if (counts_.batches < kReportEvery) return;
    std::fprintf(stderr,
                 "[cuda] image decoder, last %zu batches: %zu images decoded on the device, %zu on the host (%zu "
                 "threads), %zu made whole on the host; %.3f ms an image on a lane, %.3f ms on a host thread\n",
                 counts_.batches, counts_.on_device, counts_.decoded_on_host, pool_.threads(),
                 counts_.made_whole_on_host, 1e3 * share_.device_seconds_per_image(),
                 1e3 * share_.host_seconds_per_image());
    counts_ = {};
  }
  static constexpr size_t kReportEvery = 50;

  int device_;
  std::unique_ptr<NvjpegDecoder> nvjpeg_;
  std::shared_ptr<BatchMemory> memory_;
  DecodeLanes lanes_;
  HostShare share_;
  HostDecodePool pool_;  // share_.host_threads() threads
  const bool report_;
  struct Counts {
    size_t batches = 0, on_device = 0, decoded_on_host = 0, made_whole_on_host = 0;
  } counts_;  // since the last report (mu_)
  std::mutex mu_;
  std::vector<std::unique_ptr<CallState>> idle_;
};

// Finishes a set of host jobs when the call leaves early (an exception):
// the jobs use the call's buffers, so they must be done before those go.
class JobsFinished {
 public:
  JobsFinished(HostDecodePool& pool, std::shared_ptr<HostDecodePool::JobSet> set) : pool_(pool), set_(std::move(set)) {}
  ~JobsFinished() {
    if (!set_) return;
    try {
      pool_.finish(*set_);
    } catch (...) {
      // The call is already leaving with its own error.
    }
  }
  // Finishes the set now; rethrows a job's exception.
  void finish() {
    std::shared_ptr<HostDecodePool::JobSet> set = std::move(set_);
    pool_.finish(*set);
  }

 private:
  HostDecodePool& pool_;
  std::shared_ptr<HostDecodePool::JobSet> set_;
};

Tensor CudaImageDecoder::decode_batch(const std::vector<EncodedImageJob>& images, const ImageBatchFormat& format,
                                      const HostImageFallback& fallback, const HostImageDecode& decode_on_host) {
  HEARTH_CHECK(format.dtype == DType::float32 || format.dtype == DType::bfloat16, TypeError,
               "[cuda] the image decoder writes float32 or bfloat16 batches, not ", dtype_name(format.dtype));
  HEARTH_CHECK(format.height >= 1 && format.width >= 1, ValueError, "[cuda] image batch size must be positive, got ",
               format.height, "x", format.width);
  const size_t n = images.size();
  HEARTH_CHECK(n >= 1 && n <= 65535, ValueError, "[cuda] the image decoder takes 1 to 65535 images a batch, got ", n);
  HEARTH_CUDA_CHECK(cudaSetDevice(device_));
  LaneHeld lane(lanes_);
  Lease lease(*this);
  return make_batch(*lease, images, format, fallback, decode_on_host);
}

Tensor CudaImageDecoder::make_batch(CallState& call, const std::vector<EncodedImageJob>& images,
                                    const ImageBatchFormat& format, const HostImageFallback& fallback,
                                    const HostImageDecode& decode_on_host) {
  using Clock = std::chrono::steady_clock;
  const size_t n = images.size();
  std::vector<const uint8_t*> data(n, nullptr);
  std::vector<size_t> sizes(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const EncodedImageJob& job = images[i];
    if (job.data == nullptr || job.height < 1 || job.width < 1) continue;
    data[i] = job.data;
    sizes[i] = job.size;
  }
  std::vector<NvjpegDecoder::Inspection> inspected = call.session->inspect(data, sizes);
  for (size_t i = 0; i < n; ++i)  // the plan was drawn from the header's size: nvJPEG must read the same
    if (inspected[i].widths[0] != images[i].width || inspected[i].heights[0] != images[i].height)
      inspected[i].route = NvjpegDecoder::Inspection::Route::none;

  // The host's share: the batch's last images the device would decode, taken
  // from nvJPEG's list. Each gets room for the whole pixels its box touches
  // at full size (a reduced scale decodes fewer), 4 bytes a pixel.
  struct HostImage {
    size_t slot = 0;
    size_t offset = 0, pitch = 0, capacity_rows = 0, capacity_width = 0;
    HostDecodedImage decoded;  // pixels left undefined when the host could not decode it
  };
  std::vector<HostImage> host_images;
  size_t host_bytes = 0;
  if (decode_on_host) {
    std::vector<size_t> candidates;
    for (size_t i = 0; i < n; ++i)
      if (inspected[i].route != NvjpegDecoder::Inspection::Route::none) candidates.push_back(i);
    const size_t count = share_.host_images(candidates.size());
    for (size_t k = candidates.size() - count; k < candidates.size(); ++k) {
      HostImage h;
      h.slot = candidates[k];
      const ImageResampling& r = images[h.slot].resampling;
      const auto [left, right] = pixels_touched(r.box_left, r.box_width, static_cast<int32_t>(images[h.slot].width));
      const auto [top, bottom] = pixels_touched(r.box_top, r.box_height, static_cast<int32_t>(images[h.slot].height));
      h.capacity_width = static_cast<size_t>(right - left);
      h.capacity_rows = static_cast<size_t>(bottom - top);
      h.pitch = round_up(h.capacity_width * 4, 64);
      h.offset = host_bytes;
      host_bytes += round_up(h.pitch * h.capacity_rows, 256);
      inspected[h.slot].route = NvjpegDecoder::Inspection::Route::none;
      host_images.push_back(std::move(h));
    }
  }
  uint8_t* host_pixels = host_bytes > 0 ? call.host_pixels.reserve(host_bytes) : nullptr;
  uint8_t* host_pixels_device = host_bytes > 0 ? call.host_pixels_device.reserve(host_bytes) : nullptr;
  // Started before nvJPEG's call, which blocks this thread while the engines decode.
  JobsFinished host_jobs(pool_, pool_.start(host_images.size(), [&](size_t k) {
    HostImage& h = host_images[k];
    const auto began = Clock::now();
    HostDecodedImage d = decode_on_host(h.slot);
    const bool fits = d.pixels.defined() && d.pixels.dtype() == DType::uint8 && d.pixels.dim() == 3 &&
                      d.pixels.size(2) == 3 && d.pixels.size(0) >= 1 && d.pixels.size(1) >= 1 &&
                      static_cast<size_t>(d.pixels.size(0)) <= h.capacity_rows &&
                      static_cast<size_t>(d.pixels.size(1)) <= h.capacity_width;
    if (fits) {
      d.pixels = d.pixels.contiguous();
      copy_rgb_to_rgbx(d.pixels, host_pixels + h.offset, h.pitch);
      h.decoded = std::move(d);
    }
    share_.record_host(std::chrono::duration<double>(Clock::now() - began).count());
  }));

  // Where each image's planes go, and its RGB after the conversion: rows
  // padded to 64 bytes, planes to 256.
  struct Place {
    size_t planes[3] = {0, 0, 0}, pitches[3] = {0, 0, 0};
    size_t rgb = 0, rgb_pitch = 0;
  };
  std::vector<Place> place(n);
  size_t planes_total = 0, rgb_total = 0;
  for (size_t i = 0; i < n; ++i) {
    const NvjpegDecoder::Inspection& in = inspected[i];
    if (in.route == NvjpegDecoder::Inspection::Route::none) continue;
    Place& p = place[i];
    for (int c = 0; c < 3; ++c) {
      p.pitches[c] = round_up(static_cast<size_t>(in.widths[c]), 64);
      p.planes[c] = planes_total;
      planes_total += round_up(p.pitches[c] * static_cast<size_t>(in.heights[c]), 256);
    }
    p.rgb_pitch = round_up(static_cast<size_t>(in.widths[0]) * 4, 64);
    p.rgb = rgb_total;
    rgb_total += round_up(p.rgb_pitch * static_cast<size_t>(in.heights[0]), 256);
  }
  uint8_t* planes_base = planes_total > 0 ? call.planes.reserve(planes_total) : nullptr;
  uint8_t* rgb_base = rgb_total > 0 ? call.decoded.reserve(rgb_total) : nullptr;
  std::vector<nvjpeg::Image> destinations(n);
  for (size_t i = 0; i < n; ++i) {
    destinations[i] = nvjpeg::Image{};
    if (inspected[i].route == NvjpegDecoder::Inspection::Route::none) continue;
    for (int c = 0; c < 3; ++c) {
      destinations[i].channel[c] = planes_base + place[i].planes[c];
      destinations[i].pitch[c] = place[i].pitches[c];
    }
  }
  const auto device_began = Clock::now();
  stage_files(call.files_host, inspected, data, sizes);
  const std::vector<char> ok = call.session->decode(data, sizes, inspected, destinations, call.stream);
  size_t device_count = 0;
  for (size_t i = 0; i < n; ++i) device_count += ok[i] ? 1 : 0;
  share_.record_device(device_count, std::chrono::duration<double>(Clock::now() - device_began).count());
  host_jobs.finish();  // this thread takes the jobs no host thread has reached
  std::vector<const HostImage*> decoded_on_host(n, nullptr);
  for (const HostImage& h : host_images)
    if (h.decoded.pixels.defined()) decoded_on_host[h.slot] = &h;
  if (host_bytes > 0)
    HEARTH_CUDA_CHECK(
        cudaMemcpyAsync(host_pixels_device, host_pixels, host_bytes, cudaMemcpyHostToDevice, call.stream));

  // The rest made whole on the host.
  const size_t plane = static_cast<size_t>(format.height * format.width);
  std::vector<Tensor> ready(n);
  size_t ready_count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (ok[i] || decoded_on_host[i] != nullptr) continue;
    ready[i] = fallback(i).contiguous();
    HEARTH_CHECK(ready[i].dtype() == DType::float32 && ready[i].numel() == static_cast<int64_t>(3 * plane),
                 ShapeError, "[cuda] image ", i, " made on the host is ", dtype_name(ready[i].dtype()), " ",
                 ready[i].shape_string(), ", the batch holds float32 [3, ", format.height, ", ", format.width, "]");
    ++ready_count;
  }

  // The kernels' arguments and the host-made images, in one copy.
  const size_t conversions_bytes = round_up(n * sizeof(YcbcrSource), 256);
  const size_t sources_bytes = round_up(n * sizeof(ResampleSource), 256);
  const size_t staged = conversions_bytes + sources_bytes + ready_count * 3 * plane * sizeof(float);
  uint8_t* host = call.staging_host.reserve(staged);
  uint8_t* dev = call.staging_device.reserve(staged);
  auto* conversions = reinterpret_cast<YcbcrSource*>(host);
  auto* sources = reinterpret_cast<ResampleSource*>(host + conversions_bytes);
  size_t ready_at = conversions_bytes + sources_bytes;
  int max_taps = 0;
  int32_t max_region_width = 0, max_region_height = 0;
  for (size_t i = 0; i < n; ++i) {
    YcbcrSource y{};
    ResampleSource s{};
    if (ok[i]) {
      const NvjpegDecoder::Inspection& in = inspected[i];
      const Place& p = place[i];
      for (int c = 0; c < 3; ++c) {
        y.planes[c] = planes_base + p.planes[c];
        y.pitches[c] = static_cast<int32_t>(p.pitches[c]);
      }
      y.width = in.widths[0];
      y.height = in.heights[0];
      y.chroma_width = in.widths[1];
      y.chroma_height = in.heights[1];
      y.h_factor = in.h_factor;
      y.v_factor = in.v_factor;
      y.rgb = rgb_base + p.rgb;
      y.rgb_pitch = static_cast<int64_t>(p.rgb_pitch);

      const EncodedImageJob& job = images[i];
      const ImageResampling& r = job.resampling;
      s = resample_source(r, rgb_base + p.rgb, static_cast<int64_t>(p.rgb_pitch), static_cast<int32_t>(job.height),
                          static_cast<int32_t>(job.width));
      // The resampling's taps lie in the whole pixels the box touches.
      const auto [left, right] = pixels_touched(r.box_left, r.box_width, y.width);
      const auto [top, bottom] = pixels_touched(r.box_top, r.box_height, y.height);
      y.left = left;
      y.top = top;
      y.region_width = right - left;
      y.region_height = bottom - top;
      max_region_width = std::max(max_region_width, y.region_width);
      max_region_height = std::max(max_region_height, y.region_height);
    } else if (const HostImage* h = decoded_on_host[i]) {
      s = resample_source(images[i].resampling, host_pixels_device + h->offset, static_cast<int64_t>(h->pitch),
                          static_cast<int32_t>(h->decoded.pixels.size(0)),
                          static_cast<int32_t>(h->decoded.pixels.size(1)));
      // Its box in the pixels the host decoded (a region, maybe at a reduced scale).
      s.box_top = h->decoded.box_top;
      s.box_left = h->decoded.box_left;
      s.box_height = h->decoded.box_height;
      s.box_width = h->decoded.box_width;
    } else {
      std::memcpy(host + ready_at, ready[i].data_ptr(), 3 * plane * sizeof(float));
      s.ready = reinterpret_cast<const float*>(dev + ready_at);
      ready_at += 3 * plane * sizeof(float);
    }
    conversions[i] = y;
    sources[i] = s;
    max_taps = std::max(max_taps, resample_taps_bound(s));
  }
  HEARTH_CUDA_CHECK(cudaMemcpyAsync(dev, host, staged, cudaMemcpyHostToDevice, call.stream));

  const Shape shape{static_cast<int64_t>(n), 3, format.height, format.width};
  const size_t nbytes = n * 3 * plane * (format.dtype == DType::bfloat16 ? 2 : 4);
  launch_ycbcr_to_rgb_batch(reinterpret_cast<const YcbcrSource*>(dev), static_cast<int64_t>(n), max_region_width,
                            max_region_height, call.stream);
  std::shared_ptr<Storage> storage = memory_->take(nbytes, call.stream);
  launch_resample_batch(reinterpret_cast<const ResampleSource*>(dev + conversions_bytes), static_cast<int64_t>(n),
                        format, storage->data(), call.stream, max_taps);
  count_batch(device_count, n - device_count - ready_count, ready_count);
  // Complete before it is handed over: the training stream may use it at once.
  const cudaError_t err = call.wait();
  HEARTH_CHECK(err == cudaSuccess, DeviceError, "[cuda] decoding a batch of ", n, " images on cuda:", device_,
               " failed: ", cudaGetErrorString(err), " (", nvjpeg_->description(),
               "; HEARTH_IMAGE_DECODER=cpu decodes on the CPU)");
  return Tensor::from_storage(std::move(storage), format.dtype, shape, strides_for(shape, format.memory_format), 0);
}

const bool registered = [] {
  const DeviceKind cuda = register_device_kind("cuda");
  register_device_image_decoder(cuda, [cuda](int index) -> DeviceImageDecoderChoice {
    DeviceRuntime& runtime = device_runtime(cuda);
    if (!runtime.is_available()) return {nullptr, runtime.unavailable_reason()};
    std::string error;
    std::unique_ptr<NvjpegDecoder> nvjpeg = NvjpegDecoder::open(index, &error);
    if (!nvjpeg) return {nullptr, error};
    return {std::make_shared<CudaImageDecoder>(index, std::move(nvjpeg)), {}};
  });
  return true;
}();

}  // namespace
}  // namespace hearth::cuda
