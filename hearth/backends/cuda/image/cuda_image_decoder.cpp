// The CUDA backend's image decoder (hearth/core/device_image_decoder.h):
// nvJPEG decodes a batch's files into device memory as Y, Cb and Cr planes,
// one kernel converts them all to RGB (ycbcr_to_rgb.h), the images nvJPEG
// does not take are made on the host and copied up, and one kernel resizes,
// crops, flips and normalises all of them into the batch (image_resample.h).
//
// Each call runs in the calling thread (a loader worker) on a stream of its
// own, with buffers of its own taken from a pool of per-call states, and
// returns once the batch is complete on the device, so the training step
// can use it from the device's stream without waiting on anything.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/image/batch_memory.h"
#include "hearth/backends/cuda/image/block_cache.h"
#include "hearth/backends/cuda/image/decode_lanes.h"
#include "hearth/backends/cuda/image/image_resample.h"
#include "hearth/backends/cuda/image/nvjpeg_decoder.h"
#include "hearth/backends/cuda/image/ycbcr_to_rgb.h"
#include "hearth/core/device_image_decoder.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/memory_format.h"

namespace hearth::cuda {
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
        lanes_(decode_lanes_from_env(), host_decoding_from_env()) {}

  std::string description() const override { return nvjpeg_->description(); }

  Tensor decode_batch(const std::vector<EncodedImageJob>& images, const ImageBatchFormat& format,
                      const HostImageFallback& fallback) override;

 private:
  // A call's state, taken from its pool and returned to it (after its
  // stream has finished, so its staging may be written again). States that
  // decode with nvJPEG and states that stage host-made batches are pooled
  // apart: only the first kind holds nvJPEG's memory.
  class Lease {
   public:
    Lease(CudaImageDecoder& d, bool with_nvjpeg) : d_(d), with_nvjpeg_(with_nvjpeg), s_(d.take_state(with_nvjpeg)) {}
    ~Lease() {
      s_->wait();
      (void)cudaGetLastError();
      // What nvJPEG freed during the call: its work on the stream is done.
      release_blocks_held();
      std::lock_guard<std::mutex> lock(d_.mu_);
      (with_nvjpeg_ ? d_.idle_ : d_.idle_host_).push_back(std::move(s_));
    }
    CallState& operator*() { return *s_; }

   private:
    CudaImageDecoder& d_;
    bool with_nvjpeg_;
    std::unique_ptr<CallState> s_;
  };

  // Frees a device lane when the batch is done with it, however it ends.
  class LaneHeld {
   public:
    LaneHeld(DecodeLanes& lanes, size_t images)
        : lanes_(lanes), images_(images), since_(std::chrono::steady_clock::now()) {}
    ~LaneHeld() {
      lanes_.leave_device(images_, std::chrono::duration<double>(std::chrono::steady_clock::now() - since_).count());
    }

   private:
    DecodeLanes& lanes_;
    size_t images_;
    std::chrono::steady_clock::time_point since_;
  };

  std::unique_ptr<CallState> take_state(bool with_nvjpeg) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::vector<std::unique_ptr<CallState>>& pool = with_nvjpeg ? idle_ : idle_host_;
      if (!pool.empty()) {
        std::unique_ptr<CallState> s = std::move(pool.back());
        pool.pop_back();
        return s;
      }
    }
    auto s = std::make_unique<CallState>();
    if (with_nvjpeg) s->session = nvjpeg_->new_session();
    HEARTH_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    HEARTH_CUDA_CHECK(cudaEventCreateWithFlags(&s->finished, cudaEventBlockingSync | cudaEventDisableTiming));
    return s;
  }

  // The batch made in `call`: with nvJPEG (what it declines made on the
  // host), or all of it on the host.
  Tensor make_batch(CallState& call, const std::vector<EncodedImageJob>& images, const ImageBatchFormat& format,
                    const HostImageFallback& fallback);

  int device_;
  std::unique_ptr<NvjpegDecoder> nvjpeg_;
  std::shared_ptr<BatchMemory> memory_;
  DecodeLanes lanes_;
  std::mutex mu_;
  std::vector<std::unique_ptr<CallState>> idle_, idle_host_;
};

Tensor CudaImageDecoder::decode_batch(const std::vector<EncodedImageJob>& images, const ImageBatchFormat& format,
                                      const HostImageFallback& fallback) {
  HEARTH_CHECK(format.dtype == DType::float32 || format.dtype == DType::bfloat16, TypeError,
               "[cuda] the image decoder writes float32 or bfloat16 batches, not ", dtype_name(format.dtype));
  HEARTH_CHECK(format.height >= 1 && format.width >= 1, ValueError, "[cuda] image batch size must be positive, got ",
               format.height, "x", format.width);
  const size_t n = images.size();
  HEARTH_CHECK(n >= 1 && n <= 65535, ValueError, "[cuda] the image decoder takes 1 to 65535 images a batch, got ", n);
  HEARTH_CUDA_CHECK(cudaSetDevice(device_));
  const auto start = std::chrono::steady_clock::now();
  if (lanes_.enter(n) == DecodeLanes::Route::host) {
    Tensor batch;
    {
      Lease lease(*this, /*with_nvjpeg=*/false);
      batch = make_batch(*lease, images, format, fallback);
    }
    lanes_.record_host(n, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return batch;
  }
  LaneHeld lane(lanes_, n);
  Lease lease(*this, /*with_nvjpeg=*/true);
  return make_batch(*lease, images, format, fallback);
}

Tensor CudaImageDecoder::make_batch(CallState& call, const std::vector<EncodedImageJob>& images,
                                    const ImageBatchFormat& format, const HostImageFallback& fallback) {
  const size_t n = images.size();
  std::vector<const uint8_t*> data(n, nullptr);
  std::vector<size_t> sizes(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const EncodedImageJob& job = images[i];
    if (job.data == nullptr || job.height < 1 || job.width < 1) continue;
    data[i] = job.data;
    sizes[i] = job.size;
  }
  // A host-made batch has no nvJPEG session: every image takes the fallback.
  std::vector<NvjpegDecoder::Inspection> inspected =
      call.session ? call.session->inspect(data, sizes) : std::vector<NvjpegDecoder::Inspection>(n);
  for (size_t i = 0; i < n; ++i)  // the plan was drawn from the header's size: nvJPEG must read the same
    if (inspected[i].widths[0] != images[i].width || inspected[i].heights[0] != images[i].height)
      inspected[i].route = NvjpegDecoder::Inspection::Route::none;

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
  if (call.session) stage_files(call.files_host, inspected, data, sizes);
  const std::vector<char> ok =
      call.session ? call.session->decode(data, sizes, inspected, destinations, call.stream) : std::vector<char>(n, 0);

  // The rest made on the host while the device decodes.
  const size_t plane = static_cast<size_t>(format.height * format.width);
  std::vector<Tensor> ready(n);
  size_t ready_count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (ok[i]) continue;
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
      s.pixels = rgb_base + p.rgb;
      s.pitch = static_cast<int64_t>(p.rgb_pitch);
      s.height = static_cast<int32_t>(job.height);
      s.width = static_cast<int32_t>(job.width);
      s.box_top = r.box_top;
      s.box_left = r.box_left;
      s.box_height = r.box_height;
      s.box_width = r.box_width;
      s.resized_height = static_cast<int32_t>(r.resized_height);
      s.resized_width = static_cast<int32_t>(r.resized_width);
      s.window_top = static_cast<int32_t>(r.window_top);
      s.window_left = static_cast<int32_t>(r.window_left);
      s.flip = r.flip ? 1 : 0;
      // The resampling's taps lie in the whole pixels the box touches.
      const auto [left, right] = pixels_touched(r.box_left, r.box_width, y.width);
      const auto [top, bottom] = pixels_touched(r.box_top, r.box_height, y.height);
      y.left = left;
      y.top = top;
      y.region_width = right - left;
      y.region_height = bottom - top;
      max_region_width = std::max(max_region_width, y.region_width);
      max_region_height = std::max(max_region_height, y.region_height);
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
