// nvJPEG on one GPU: batched decoding of JPEG files into device memory, each
// image's Y, Cb and Cr planes as the file holds them (the colour conversion
// is ycbcr_to_rgb.h's, libjpeg's arithmetic for the whole batch at once).
//
// Two decoders, as the GPU allows: its JPEG engines (NVJPEG_BACKEND_HARDWARE,
// on A100, H100 and later), which take baseline JPEGs of the common chroma
// subsamplings, and the GPU-hybrid decoder (Huffman decoding on the GPU),
// which takes the rest. Each batch is split by nvjpegDecodeBatchedSupported:
// the engines get what they support, the hybrid decoder the others and
// anything the engines fail on; an image neither decodes is reported back,
// for the caller to make another way. HEARTH_NVJPEG_BACKEND=hardware or
// hybrid uses one decoder only (tests and benchmarks compare them), and
// HEARTH_NVJPEG_HARDWARE_SHARE below 1 sends that share of a batch to the
// engines and the rest to the hybrid decoder at the same time.
//
// The library handles are shared (nvJPEG's handle is thread-safe); each
// caller thread takes a Session, its own decoding states and parse stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hearth/backends/cuda/image/nvjpeg_library.h"

namespace hearth::cuda {

class NvjpegDecoder {
 public:
  // nvJPEG for `device`, or null with *error saying why it cannot be used.
  static std::unique_ptr<NvjpegDecoder> open(int device, std::string* error);
  ~NvjpegDecoder();
  NvjpegDecoder(const NvjpegDecoder&) = delete;
  NvjpegDecoder& operator=(const NvjpegDecoder&) = delete;

  // "nvJPEG 13.0.2: the GPU's JPEG engines (7), GPU-hybrid for the rest".
  std::string description() const;
  bool has_hardware() const { return hardware_ != nullptr; }
  bool has_hybrid() const { return hybrid_ != nullptr; }

  // What the header of one file says, as the decoders read it: which
  // decoder takes it and the sizes of its three planes.
  struct Inspection {
    enum class Route : uint8_t { none, engines, hybrid };
    Route route = Route::none;  // none: neither decoder takes it, or it is not 3-plane YCbCr
    int widths[3] = {0, 0, 0}, heights[3] = {0, 0, 0};  // Y, Cb, Cr
    int h_factor = 1, v_factor = 1;  // image pixels per chroma sample across and down
  };

  // One caller's decoding state; not thread-safe, reusable batch after batch.
  class Session {
   public:
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Reads each file's header (data[i], sizes[i]; null data: route none).
    std::vector<Inspection> inspect(const std::vector<const uint8_t*>& data, const std::vector<size_t>& sizes);

    // Decodes the files inspect() routed into destinations[i] (device
    // memory: channel[0..2] the Y, Cb and Cr planes, each as large as
    // inspect() said) with work queued on `stream`. Returns, per image,
    // whether it was decoded; the caller must make the others another way.
    std::vector<char> decode(const std::vector<const uint8_t*>& data, const std::vector<size_t>& sizes,
                             const std::vector<Inspection>& inspections, const std::vector<nvjpeg::Image>& destinations,
                             cudaStream_t stream);

   private:
    friend class NvjpegDecoder;
    struct Backend;
    explicit Session(const NvjpegDecoder& decoder);
    // Decodes the images `which` with one backend in one batched call; false
    // (and nothing promised about their pixels) when the call fails.
    bool decode_group(Backend& b, const std::vector<size_t>& which, const std::vector<const uint8_t*>& data,
                      const std::vector<size_t>& sizes, const std::vector<nvjpeg::Image>& destinations,
                      cudaStream_t stream);

    const NvjpegDecoder& decoder_;
    std::unique_ptr<Backend> hardware_, hybrid_;
  };
  std::unique_ptr<Session> new_session() const;

 private:
  NvjpegDecoder() = default;

  int device_ = 0;
  std::unique_ptr<nvjpeg::Library> lib_;
  nvjpeg::Handle hardware_ = nullptr;  // the JPEG engines, where the GPU has them
  nvjpeg::Handle hybrid_ = nullptr;    // GPU-hybrid (or the library's default)
  unsigned engines_ = 0, cores_per_engine_ = 0;
  double hardware_share_ = 1.0;  // HEARTH_NVJPEG_HARDWARE_SHARE
};

}  // namespace hearth::cuda
