#include "hearth/backends/cuda/image/nvjpeg_decoder.h"

#include <cublasLt.h>
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "hearth/backends/cuda/cuda_switches.h"
#include "hearth/backends/cuda/image/block_cache.h"
#include "hearth/core/errors.h"

namespace hearth::cuda {
namespace {

using nvjpeg::Status;

// nvJPEG's memory, through the caches that never free mid-run (block_cache.h).
// nvJPEG frees a buffer as cudaFree would, with its work on the caller's
// stream possibly still running: the block is reused only after that stream
// has finished (the decoder's caller releases it then).
int device_malloc(void** p, size_t n) {
  *p = take_block(BlockKind::device, n);
  return *p != nullptr ? 0 : 1;
}
int device_free(void* p) {
  give_block_after_sync(BlockKind::device, p);
  return 0;
}
int pinned_malloc(void** p, size_t n, unsigned) {
  *p = take_block(BlockKind::pinned_host, n);
  return *p != nullptr ? 0 : 1;
}
int pinned_free(void* p) {
  give_block_after_sync(BlockKind::pinned_host, p);
  return 0;
}
nvjpeg::DevAllocator g_device_allocator{device_malloc, device_free};
nvjpeg::PinnedAllocator g_pinned_allocator{pinned_malloc, pinned_free};

// Where cuBLASLt was loaded from: the CUDA toolkit's library folder, or pip's
// nvidia package folder, both of which hold nvJPEG too.
std::string cublaslt_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cublasLtGetVersion), &info) == 0 || info.dli_fname == nullptr) return {};
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

// HEARTH_NVJPEG_HARDWARE_SHARE: the share of each batch's images the engines
// take when both decoders are there (default 1: all they support). Below 1
// the rest go to the hybrid decoder at the same time, on the GPU's cores,
// which adds throughput where the engines are the limit and takes compute
// from whatever else runs on the GPU.
double hardware_share() {
  return switches::nvjpeg_hardware_share().get();  // from 0 to 1, default 1
}

enum class BackendChoice { automatic, hardware, hybrid };

BackendChoice backend_choice() {
  const std::string v = switches::nvjpeg_backend().get();  // auto, hardware or hybrid
  if (v == "hardware") return BackendChoice::hardware;
  if (v == "hybrid") return BackendChoice::hybrid;
  return BackendChoice::automatic;
}

}  // namespace

// ---- the library handles --------------------------------------------------------

std::unique_ptr<NvjpegDecoder> NvjpegDecoder::open(int device, std::string* error) {
  nvjpeg::LoadResult loaded = nvjpeg::load_nvjpeg({cublaslt_folder()});
  if (!loaded.library) {
    *error = loaded.error;
    return nullptr;
  }
  std::unique_ptr<NvjpegDecoder> d(new NvjpegDecoder);
  d->device_ = device;
  d->lib_ = std::move(loaded.library);
  const nvjpeg::Library& lib = *d->lib_;
  // Handles belong to the device current when they are made.
  if (cudaSetDevice(device) != cudaSuccess) {
    (void)cudaGetLastError();
    *error = "nvJPEG: cuda:" + std::to_string(device) + " cannot be made current";
    return nullptr;
  }
  // The planes come out as decoded, so nvJPEG's chroma flags do not matter.
  auto create = [&](nvjpeg::Backend backend, nvjpeg::Handle* h) {
    const Status st = lib.create_ex(backend, &g_device_allocator, &g_pinned_allocator, nvjpeg::kFlagsDefault, h);
    if (st != nvjpeg::kSuccess) *h = nullptr;
    return st;
  };
  const BackendChoice choice = backend_choice();
  d->hardware_share_ = hardware_share();
  if (choice != BackendChoice::hybrid) {
    // Fails on GPUs without JPEG engines: the hybrid decoder does it all then.
    if (create(nvjpeg::kBackendHardware, &d->hardware_) == nvjpeg::kSuccess && lib.get_hardware_decoder_info != nullptr)
      lib.get_hardware_decoder_info(d->hardware_, &d->engines_, &d->cores_per_engine_);
  }
  if (choice != BackendChoice::hardware) {
    if (create(nvjpeg::kBackendGpuHybrid, &d->hybrid_) != nvjpeg::kSuccess) create(nvjpeg::kBackendDefault, &d->hybrid_);
  }
  if (d->hardware_ == nullptr && d->hybrid_ == nullptr) {
    *error = "nvJPEG " + std::to_string(lib.major) + "." + std::to_string(lib.minor) + " (" + lib.path +
             ") could not create a decoder on cuda:" + std::to_string(device) +
             (choice == BackendChoice::hardware ? " with HEARTH_NVJPEG_BACKEND=hardware (this GPU has no JPEG engines?)"
                                                : "");
    return nullptr;
  }
  return d;
}

NvjpegDecoder::~NvjpegDecoder() {
  if (lib_ == nullptr) return;
  if (hardware_ != nullptr) lib_->destroy(hardware_);
  if (hybrid_ != nullptr) lib_->destroy(hybrid_);
}

std::string NvjpegDecoder::description() const {
  std::ostringstream os;
  os << "nvJPEG " << lib_->major << "." << lib_->minor << "." << lib_->patch << ": ";
  if (hardware_ != nullptr) {
    os << "the GPU's JPEG engines";
    if (engines_ > 0) os << " (" << engines_ << ")";
    if (hybrid_ != nullptr && hardware_share_ < 1.0)
      os << " for " << static_cast<int>(hardware_share_ * 100 + 0.5) << "% of the images, GPU-hybrid decoding for the rest";
    else
      os << (hybrid_ != nullptr ? ", GPU-hybrid decoding for the images they do not take" : " only");
  } else {
    os << "GPU-hybrid decoding (no JPEG engines in use)";
  }
  os << "; colour converted as libjpeg does";
  return os.str();
}

// ---- sessions -------------------------------------------------------------------------

// One backend's state in a session: its decoding state, a parse stream, and
// the batch size its state was last initialised for (nvJPEG wants it
// initialised again whenever that changes, or after a failed call).
struct NvjpegDecoder::Session::Backend {
  const nvjpeg::Library* lib = nullptr;
  nvjpeg::Handle handle = nullptr;
  nvjpeg::JpegState state = nullptr;
  nvjpeg::JpegStream parsed = nullptr;
  int initialized_for = -1;

  Backend(const nvjpeg::Library& l, nvjpeg::Handle h) : lib(&l), handle(h) {
    if (lib->jpeg_state_create(handle, &state) != nvjpeg::kSuccess) state = nullptr;
    if (lib->jpeg_stream_create(handle, &parsed) != nvjpeg::kSuccess) parsed = nullptr;
  }
  ~Backend() {
    if (parsed != nullptr) lib->jpeg_stream_destroy(parsed);
    if (state != nullptr) lib->jpeg_state_destroy(state);
  }
  bool usable() const { return state != nullptr && parsed != nullptr; }
  // Whether this backend's batched decoder takes the file.
  bool supports(const uint8_t* data, size_t size) const {
    if (lib->jpeg_stream_parse_header(handle, data, size, parsed) != nvjpeg::kSuccess) return false;
    int unsupported = 1;
    return lib->decode_batched_supported(handle, parsed, &unsupported) == nvjpeg::kSuccess && unsupported == 0;
  }
};

NvjpegDecoder::Session::Session(const NvjpegDecoder& decoder) : decoder_(decoder) {
  if (decoder.hardware_ != nullptr) {
    hardware_ = std::make_unique<Backend>(*decoder.lib_, decoder.hardware_);
    if (!hardware_->usable()) hardware_.reset();
  }
  if (decoder.hybrid_ != nullptr) {
    hybrid_ = std::make_unique<Backend>(*decoder.lib_, decoder.hybrid_);
    if (!hybrid_->usable()) hybrid_.reset();
  }
}

NvjpegDecoder::Session::~Session() = default;

std::unique_ptr<NvjpegDecoder::Session> NvjpegDecoder::new_session() const {
  return std::unique_ptr<Session>(new Session(*this));
}

bool NvjpegDecoder::Session::decode_group(Backend& b, const std::vector<size_t>& which,
                                          const std::vector<const uint8_t*>& data, const std::vector<size_t>& sizes,
                                          const std::vector<nvjpeg::Image>& destinations, cudaStream_t stream) {
  if (which.empty()) return true;
  const int n = static_cast<int>(which.size());
  if (b.initialized_for != n) {
    if (b.lib->decode_batched_initialize(b.handle, b.state, n, 1, nvjpeg::kOutputYuv) != nvjpeg::kSuccess) {
      b.initialized_for = -1;
      return false;
    }
    b.initialized_for = n;
  }
  std::vector<const unsigned char*> files(which.size());
  std::vector<size_t> lengths(which.size());
  std::vector<nvjpeg::Image> out(which.size());
  for (size_t k = 0; k < which.size(); ++k) {
    files[k] = data[which[k]];
    lengths[k] = sizes[which[k]];
    out[k] = destinations[which[k]];
  }
  const Status st = b.lib->decode_batched(b.handle, b.state, files.data(), lengths.data(), out.data(), stream);
  if (st != nvjpeg::kSuccess) {
    b.initialized_for = -1;  // nvJPEG asks for a fresh initialisation after a failure
    return false;
  }
  return true;
}

namespace {

// Image pixels per chroma sample, across and down, of the subsamplings the
// colour conversion takes; false for the others.
bool chroma_factors(nvjpeg::ChromaSubsampling css, int* h, int* v) {
  switch (css) {
    case nvjpeg::kCss444: *h = 1, *v = 1; return true;
    case nvjpeg::kCss422: *h = 2, *v = 1; return true;
    case nvjpeg::kCss420: *h = 2, *v = 2; return true;
    case nvjpeg::kCss440: *h = 1, *v = 2; return true;
    case nvjpeg::kCss411: *h = 4, *v = 1; return true;
    case nvjpeg::kCss410: *h = 4, *v = 2; return true;
    default: return false;
  }
}

}  // namespace

std::vector<NvjpegDecoder::Inspection> NvjpegDecoder::Session::inspect(const std::vector<const uint8_t*>& data,
                                                                       const std::vector<size_t>& sizes) {
  using Route = Inspection::Route;
  const size_t n = data.size();
  std::vector<Inspection> out(n);
  const nvjpeg::Library& lib = *decoder_.lib_;
  const nvjpeg::Handle any = decoder_.hardware_ != nullptr ? decoder_.hardware_ : decoder_.hybrid_;
  std::vector<size_t> on_engines;
  for (size_t i = 0; i < n; ++i) {
    if (data[i] == nullptr) continue;
    Inspection& in = out[i];
    int components = 0, widths[nvjpeg::kMaxComponents] = {}, heights[nvjpeg::kMaxComponents] = {};
    nvjpeg::ChromaSubsampling subsampling = nvjpeg::kCssUnknown;
    if (lib.get_image_info(any, data[i], sizes[i], &components, &subsampling, widths, heights) != nvjpeg::kSuccess ||
        components != 3 || !chroma_factors(subsampling, &in.h_factor, &in.v_factor))
      continue;
    bool sane = true;
    for (int c = 0; c < 3; ++c) {
      in.widths[c] = widths[c];
      in.heights[c] = heights[c];
      sane = sane && widths[c] >= 1 && heights[c] >= 1;
    }
    // The chroma planes as libjpeg sizes them: the image's size divided by
    // the factors, rounded up.
    sane = sane && widths[1] == widths[2] && heights[1] == heights[2] &&
           widths[1] == (widths[0] + in.h_factor - 1) / in.h_factor &&
           heights[1] == (heights[0] + in.v_factor - 1) / in.v_factor;
    if (!sane) continue;
    if (hardware_ && hardware_->supports(data[i], sizes[i])) {
      in.route = Route::engines;
      on_engines.push_back(i);
    } else if (hybrid_) {
      in.route = Route::hybrid;
    }
  }
  if (hybrid_ && decoder_.hardware_share_ < 1.0) {
    const auto keep = static_cast<size_t>(decoder_.hardware_share_ * static_cast<double>(on_engines.size()) + 0.5);
    for (size_t k = keep; k < on_engines.size(); ++k) out[on_engines[k]].route = Route::hybrid;
  }
  return out;
}

std::vector<char> NvjpegDecoder::Session::decode(const std::vector<const uint8_t*>& data,
                                                 const std::vector<size_t>& sizes,
                                                 const std::vector<Inspection>& inspections,
                                                 const std::vector<nvjpeg::Image>& destinations, cudaStream_t stream) {
  using Route = Inspection::Route;
  const size_t n = data.size();
  std::vector<char> decoded(n, 0);
  std::vector<size_t> on_engines, on_hybrid;
  for (size_t i = 0; i < n; ++i) {
    if (inspections[i].route == Route::engines && hardware_) on_engines.push_back(i);
    if (inspections[i].route == Route::hybrid && hybrid_) on_hybrid.push_back(i);
  }
  if (hardware_ && !on_engines.empty()) {
    if (decode_group(*hardware_, on_engines, data, sizes, destinations, stream)) {
      for (size_t i : on_engines) decoded[i] = 1;
    } else if (hybrid_) {
      on_hybrid.insert(on_hybrid.end(), on_engines.begin(), on_engines.end());
    }
  }
  if (hybrid_ && !on_hybrid.empty()) {
    if (decode_group(*hybrid_, on_hybrid, data, sizes, destinations, stream)) {
      for (size_t i : on_hybrid) decoded[i] = 1;
    } else {
      // One file spoils a batched call: find it by decoding them one by one.
      for (size_t i : on_hybrid) decoded[i] = decode_group(*hybrid_, {i}, data, sizes, destinations, stream) ? 1 : 0;
    }
  }
  return decoded;
}

}  // namespace hearth::cuda
