// The part of nvJPEG's C API that hearth calls, declared here from NVIDIA's
// documentation: the build machines have no nvjpeg.h, and the library is
// opened at run time (nvjpeg_library.h), so only these types and the
// function pointer types of the calls it makes are needed. Values are the
// documented ones; opaque handles are pointers to undefined structs.
#pragma once

#include <cstddef>

struct CUstream_st;  // cudaStream_t is CUstream_st*, in the CUDA runtime's headers

namespace hearth::cuda::nvjpeg {

using Stream = CUstream_st*;

struct HandleStruct;
struct JpegStateStruct;
struct JpegStreamStruct;
using Handle = HandleStruct*;
using JpegState = JpegStateStruct*;
using JpegStream = JpegStreamStruct*;

enum Status : int {
  kSuccess = 0,
  kNotInitialized = 1,
  kInvalidParameter = 2,
  kBadJpeg = 3,
  kJpegNotSupported = 4,
  kAllocatorFailure = 5,
  kExecutionFailed = 6,
  kArchMismatch = 7,
  kInternalError = 8,
  kImplementationNotSupported = 9,
  kIncompleteBitstream = 10,
};

enum Backend : int {
  kBackendDefault = 0,
  kBackendHybrid = 1,     // Huffman decoding on the CPU
  kBackendGpuHybrid = 2,  // Huffman decoding on the GPU
  kBackendHardware = 3,   // the GPU's JPEG engines (A100, H100, ...): baseline JPEGs
};

enum OutputFormat : int {
  kOutputYuv = 1,             // NVJPEG_OUTPUT_YUV: the Y, Cb and Cr planes as decoded, in channel[0..2]
  kOutputRgbInterleaved = 5,  // NVJPEG_OUTPUT_RGBI: R, G, B bytes per pixel in channel[0]
};

// nvjpegChromaSubsampling_t: the chroma planes' sampling against the luma's.
enum ChromaSubsampling : int {
  kCss444 = 0,
  kCss422 = 1,  // half width
  kCss420 = 2,  // half width, half height
  kCss440 = 3,  // half height
  kCss411 = 4,  // quarter width
  kCss410 = 5,  // quarter width, half height
  kCssGray = 6,
  kCss410V = 7,
  kCssUnknown = -1,
};

enum LibraryProperty : int { kMajorVersion = 0, kMinorVersion = 1, kPatchLevel = 2 };

// nvjpegCreateEx flags.
inline constexpr unsigned kFlagsDefault = 0;

inline constexpr int kMaxComponents = 4;

// nvjpegImage_t: where a decoded image goes (device memory), per component.
struct Image {
  unsigned char* channel[kMaxComponents];
  size_t pitch[kMaxComponents];
};

// nvjpegDevAllocator_t and nvjpegPinnedAllocator_t: the library's memory
// comes from these (cudaMalloc and cudaHostAlloc alike; 0 is success).
struct DevAllocator {
  int (*dev_malloc)(void** ptr, size_t size);
  int (*dev_free)(void* ptr);
};
struct PinnedAllocator {
  int (*pinned_malloc)(void** ptr, size_t size, unsigned flags);
  int (*pinned_free)(void* ptr);
};

using GetPropertyFn = Status (*)(LibraryProperty type, int* value);
using CreateExFn = Status (*)(Backend backend, DevAllocator* dev_allocator, PinnedAllocator* pinned_allocator,
                              unsigned flags, Handle* handle);
using DestroyFn = Status (*)(Handle handle);
using GetHardwareDecoderInfoFn = Status (*)(Handle handle, unsigned* num_engines, unsigned* num_cores_per_engine);
using JpegStateCreateFn = Status (*)(Handle handle, JpegState* state);
using JpegStateDestroyFn = Status (*)(JpegState state);
using JpegStreamCreateFn = Status (*)(Handle handle, JpegStream* stream);
using JpegStreamDestroyFn = Status (*)(JpegStream stream);
using JpegStreamParseHeaderFn = Status (*)(Handle handle, const unsigned char* data, size_t length, JpegStream stream);
using GetImageInfoFn = Status (*)(Handle handle, const unsigned char* data, size_t length, int* components,
                                  ChromaSubsampling* subsampling, int* widths, int* heights);
using DecodeBatchedSupportedFn = Status (*)(Handle handle, JpegStream stream, int* is_supported);  // 0: supported
using DecodeBatchedInitializeFn = Status (*)(Handle handle, JpegState state, int batch_size, int max_cpu_threads,
                                             OutputFormat output_format);
using DecodeBatchedFn = Status (*)(Handle handle, JpegState state, const unsigned char* const* data,
                                   const size_t* lengths, Image* destinations, Stream stream);

// The documented name of a status, for messages.
const char* status_name(int status);

}  // namespace hearth::cuda::nvjpeg
