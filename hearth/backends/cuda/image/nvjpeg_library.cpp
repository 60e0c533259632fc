#include "hearth/backends/cuda/image/nvjpeg_library.h"

#include <dlfcn.h>

#include "hearth/backends/cuda/cuda_switches.h"

namespace hearth::cuda::nvjpeg {
namespace {

// Newest first: the CUDA 13 library, then 12's (same calls), then whatever
// the unversioned development link points at.
const char* const kSonames[] = {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so"};

// Looks `name` up; on failure records the first missing name.
template <typename Fn>
bool find(void* lib, const char* name, Fn* out, std::string* missing) {
  *out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (*out == nullptr && missing->empty()) *missing = name;
  return *out != nullptr;
}

}  // namespace

const char* status_name(int status) {
  switch (status) {
    case kSuccess: return "NVJPEG_STATUS_SUCCESS";
    case kNotInitialized: return "NVJPEG_STATUS_NOT_INITIALIZED";
    case kInvalidParameter: return "NVJPEG_STATUS_INVALID_PARAMETER";
    case kBadJpeg: return "NVJPEG_STATUS_BAD_JPEG";
    case kJpegNotSupported: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
    case kAllocatorFailure: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
    case kExecutionFailed: return "NVJPEG_STATUS_EXECUTION_FAILED";
    case kArchMismatch: return "NVJPEG_STATUS_ARCH_MISMATCH";
    case kInternalError: return "NVJPEG_STATUS_INTERNAL_ERROR";
    case kImplementationNotSupported: return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
    case kIncompleteBitstream: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
    default: return "an unknown nvJPEG status";
  }
}

Library::~Library() {
  if (handle != nullptr) dlclose(handle);
}

std::vector<std::string> nvjpeg_candidates(const std::vector<std::string>& extra_dirs) {
  const std::string chosen = switches::nvjpeg_library().get();
  if (!chosen.empty()) return {chosen};
  std::vector<std::string> out(std::begin(kSonames), std::end(kSonames));
  for (const std::string& dir : extra_dirs)
    if (!dir.empty())
      for (const char* so : kSonames) out.push_back(dir + "/" + so);
  return out;
}

LoadResult load_nvjpeg(const std::vector<std::string>& extra_dirs) {
  const std::vector<std::string> candidates = nvjpeg_candidates(extra_dirs);
  std::string first_error;
  void* lib = nullptr;
  std::string opened;
  for (const std::string& name : candidates) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      opened = name;
      break;
    }
    if (first_error.empty()) {
      const char* why = dlerror();
      first_error = why != nullptr ? why : name + ": cannot be opened";
    }
  }
  if (lib == nullptr) {
    std::string tried;
    for (const std::string& name : candidates) tried += (tried.empty() ? "" : ", ") + name;
    const bool chosen = switches::nvjpeg_library().is_set();
    return {nullptr, "nvJPEG could not be loaded (tried " + tried + "; " + first_error + "); " +
                         (chosen ? "HEARTH_NVJPEG_LIBRARY names a file that cannot be opened"
                                 : "it comes with the CUDA toolkit and pip's nvidia-nvjpeg package: put its folder on "
                                   "LD_LIBRARY_PATH, or name the file in HEARTH_NVJPEG_LIBRARY")};
  }
  auto l = std::make_unique<Library>();
  l->handle = lib;
  l->path = opened;
  std::string missing;
  find(lib, "nvjpegGetProperty", &l->get_property, &missing);
  find(lib, "nvjpegCreateEx", &l->create_ex, &missing);
  find(lib, "nvjpegDestroy", &l->destroy, &missing);
  find(lib, "nvjpegJpegStateCreate", &l->jpeg_state_create, &missing);
  find(lib, "nvjpegJpegStateDestroy", &l->jpeg_state_destroy, &missing);
  find(lib, "nvjpegJpegStreamCreate", &l->jpeg_stream_create, &missing);
  find(lib, "nvjpegJpegStreamDestroy", &l->jpeg_stream_destroy, &missing);
  find(lib, "nvjpegJpegStreamParseHeader", &l->jpeg_stream_parse_header, &missing);
  find(lib, "nvjpegGetImageInfo", &l->get_image_info, &missing);
  find(lib, "nvjpegDecodeBatchedSupported", &l->decode_batched_supported, &missing);
  find(lib, "nvjpegDecodeBatchedInitialize", &l->decode_batched_initialize, &missing);
  find(lib, "nvjpegDecodeBatched", &l->decode_batched, &missing);
  if (!missing.empty())
    return {nullptr, "nvJPEG at " + opened + " lacks " + missing +
                         " (a library older than CUDA 11, or not nvJPEG); install CUDA 12 or 13's nvJPEG"};
  // Optional: only for the log line.
  std::string optional_missing;
  find(lib, "nvjpegGetHardwareDecoderInfo", &l->get_hardware_decoder_info, &optional_missing);
  l->get_property(kMajorVersion, &l->major);
  l->get_property(kMinorVersion, &l->minor);
  l->get_property(kPatchLevel, &l->patch);
  return {std::move(l), {}};
}

}  // namespace hearth::cuda::nvjpeg
