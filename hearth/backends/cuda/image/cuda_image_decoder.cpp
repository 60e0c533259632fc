// The CUDA backend's image decoder (hearth/core/device_image_decoder.h):
// nvJPEG decodes a batch's files into device memory, the images it does not
// take are made on the host and copied up, and one kernel resizes, crops,
// flips and normalises all of them into the batch (image_resample.h).
//
// Each call runs in the calling thread (a loader worker) on a stream of its
// own, with buffers of its own taken from a pool of per-call states, and
// returns once the batch is complete on the device, so the training step
// can use it from the device's stream without waiting on anything.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/image/batch_memory.h"
#include "hearth/backends/cuda/image/block_cache.h"
#include "hearth/backends/cuda/image/image_resample.h"
#include "hearth/backends/cuda/image/nvjpeg_decoder.h"
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

// What one call works with: nvJPEG's states, a stream, the decoded images,
// and the staging of the kernel's arguments and of images made on the host.
struct CallState {
  std::unique_ptr<NvjpegDecoder::Session> session;
  cudaStream_t stream = nullptr;
  // Waited on by sleeping, not spinning: a dozen workers spinning while the
  // device decodes would take the cores the training thread needs.
  cudaEvent_t finished = nullptr;
  GrowingBuffer decoded{BlockKind::device};
  GrowingBuffer staging_host{BlockKind::pinned_host};
  GrowingBuffer staging_device{BlockKind::device};

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
      : device_(device), nvjpeg_(std::move(nvjpeg)), memory_(BatchMemory::create(device)) {}

  std::string description() const override { return nvjpeg_->description(); }

  Tensor decode_batch(const std::vector<EncodedImageJob>& images, const ImageBatchFormat& format,
                      const HostImageFallback& fallback) override;

 private:
  // A call's state, taken from the pool and returned to it (after its stream
  // has finished, so its staging may be written again).
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

  int device_;
  std::unique_ptr<NvjpegDecoder> nvjpeg_;
  std::shared_ptr<BatchMemory> memory_;
  std::mutex mu_;
  std::vector<std::unique_ptr<CallState>> idle_;
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
  Lease lease(*this);
  CallState& call = *lease;

  // Where each decoded image goes: rows padded to 64 bytes, images to 256.
  std::vector<size_t> offset(n, 0), pitch(n, 0);
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const EncodedImageJob& job = images[i];
    if (job.data == nullptr || job.height < 1 || job.width < 1) continue;
    pitch[i] = round_up(static_cast<size_t>(job.width) * 3, 64);
    offset[i] = total;
    total += round_up(pitch[i] * static_cast<size_t>(job.height), 256);
  }
  uint8_t* decoded_base = total > 0 ? call.decoded.reserve(total) : nullptr;
  std::vector<const uint8_t*> data(n, nullptr);
  std::vector<size_t> sizes(n, 0);
  std::vector<nvjpeg::Image> destinations(n);
  for (size_t i = 0; i < n; ++i) {
    destinations[i] = nvjpeg::Image{};
    if (pitch[i] == 0) continue;
    data[i] = images[i].data;
    sizes[i] = images[i].size;
    destinations[i].channel[0] = decoded_base + offset[i];
    destinations[i].pitch[0] = pitch[i];
  }
  const std::vector<char> ok = call.session->decode(data, sizes, destinations, call.stream);

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

  // The kernel's arguments and the host-made images, in one copy.
  const size_t sources_bytes = round_up(n * sizeof(ResampleSource), 256);
  const size_t staged = sources_bytes + ready_count * 3 * plane * sizeof(float);
  uint8_t* host = call.staging_host.reserve(staged);
  uint8_t* dev = call.staging_device.reserve(staged);
  auto* sources = reinterpret_cast<ResampleSource*>(host);
  size_t ready_at = sources_bytes;
  for (size_t i = 0; i < n; ++i) {
    ResampleSource s{};
    if (ok[i]) {
      const EncodedImageJob& job = images[i];
      const ImageResampling& r = job.resampling;
      s.pixels = decoded_base + offset[i];
      s.pitch = static_cast<int64_t>(pitch[i]);
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
    } else {
      std::memcpy(host + ready_at, ready[i].data_ptr(), 3 * plane * sizeof(float));
      s.ready = reinterpret_cast<const float*>(dev + ready_at);
      ready_at += 3 * plane * sizeof(float);
    }
    sources[i] = s;
  }
  HEARTH_CUDA_CHECK(cudaMemcpyAsync(dev, host, staged, cudaMemcpyHostToDevice, call.stream));

  const Shape shape{static_cast<int64_t>(n), 3, format.height, format.width};
  const size_t nbytes = n * 3 * plane * (format.dtype == DType::bfloat16 ? 2 : 4);
  std::shared_ptr<Storage> storage = memory_->take(nbytes, call.stream);
  launch_resample_batch(reinterpret_cast<const ResampleSource*>(dev), static_cast<int64_t>(n), format,
                        storage->data(), call.stream);
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
