// nvJPEG opened at run time, the way the CUDA runtime's driver is
// (runtime.cu): hearth is built on machines without nvJPEG, and runs where it
// may or may not be installed, so the library is never linked. load_nvjpeg()
// tries libnvjpeg.so.13, .so.12, then .so (by the loader's search path, then
// in the folders given, such as the one cuBLASLt was loaded from, where the
// CUDA toolkit and pip's nvidia packages keep nvJPEG too), or only the file
// HEARTH_NVJPEG_LIBRARY names; and looks up every function hearth calls. It
// fails with one sentence saying what was tried and what to do.
//
// Plain C++ without CUDA's headers: built in every build, so its behaviour
// without the library is tested where CI runs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hearth/backends/cuda/image/nvjpeg_api.h"

namespace hearth::cuda::nvjpeg {

// The functions of one opened nvJPEG, all present (get_hardware_decoder_info
// may be null: older libraries lack it). Closes the library when destroyed.
struct Library {
  ~Library();
  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  void* handle = nullptr;  // from dlopen
  std::string path;        // the file opened, as dlopen was given it
  int major = 0, minor = 0, patch = 0;

  GetPropertyFn get_property = nullptr;
  CreateExFn create_ex = nullptr;
  DestroyFn destroy = nullptr;
  GetHardwareDecoderInfoFn get_hardware_decoder_info = nullptr;
  JpegStateCreateFn jpeg_state_create = nullptr;
  JpegStateDestroyFn jpeg_state_destroy = nullptr;
  JpegStreamCreateFn jpeg_stream_create = nullptr;
  JpegStreamDestroyFn jpeg_stream_destroy = nullptr;
  JpegStreamParseHeaderFn jpeg_stream_parse_header = nullptr;
  GetImageInfoFn get_image_info = nullptr;
  DecodeBatchedSupportedFn decode_batched_supported = nullptr;
  DecodeBatchedInitializeFn decode_batched_initialize = nullptr;
  DecodeBatchedFn decode_batched = nullptr;
};

struct LoadResult {
  std::unique_ptr<Library> library;  // null on failure
  std::string error;                 // why, when library is null
};

// The file names tried, in order: HEARTH_NVJPEG_LIBRARY's alone when it is
// set, else the sonames, then each of them in each of `extra_dirs`.
std::vector<std::string> nvjpeg_candidates(const std::vector<std::string>& extra_dirs);

LoadResult load_nvjpeg(const std::vector<std::string>& extra_dirs = {});

}  // namespace hearth::cuda::nvjpeg
