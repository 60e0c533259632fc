// Decoding and transforming batches of images on a device, as a service a
// backend offers for its device kind (the way it offers its DeviceRuntime).
//
// The data layer hands a device decoder the encoded files of a batch and, per
// image, what to make of it (a box resized, a window of the result, a flip);
// the decoder returns the finished batch in the device's memory: [N, 3, H, W]
// normalised, float32 or bfloat16, contiguous or channels_last. An image the
// device cannot decode (a format it does not take, a decoding error) is made
// on the host by a function the caller passes, so a batch always comes back
// whole. Nothing here names a backend: CUDA registers its decoder (nvJPEG and
// one resampling kernel) from hearth/backends/cuda/image/, and a kind without
// one simply has none, which the data layer reports and decodes on the CPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/dtype.h"
#include "hearth/core/memory_format.h"
#include "hearth/core/tensor.h"

namespace hearth {

// What to make of one image, in its full-size pixels: the box that is resized
// (resize_bilinear's antialiased filter; the edges may fall between pixels),
// the size it is resized to, the top-left corner of the output window in the
// resized image (zeros where the window leaves it, as CenterCrop pads), and a
// horizontal flip of the output.
struct ImageResampling {
  double box_top = 0, box_left = 0, box_height = 0, box_width = 0;
  int64_t resized_height = 0, resized_width = 0;
  int64_t window_top = 0, window_left = 0;
  bool flip = false;
};

// The batch the images go into: [N, 3, height, width], each value
// (pixel / 255 - mean[c]) * inv_std[c], where pixel is the resized value.
struct ImageBatchFormat {
  int64_t height = 0, width = 0;
  std::array<float, 3> mean{0.f, 0.f, 0.f};
  std::array<float, 3> inv_std{1.f, 1.f, 1.f};
  DType dtype = DType::float32;  // float32 or bfloat16
  MemoryFormat memory_format = MemoryFormat::contiguous;
};

// One image of a batch: its encoded file (host memory the caller keeps alive
// during the call), its size as the file's header gives it, and what to make
// of it. No file (data null): the caller wants the image made on the host.
struct EncodedImageJob {
  const uint8_t* data = nullptr;
  size_t size = 0;
  int64_t height = 0, width = 0;
  ImageResampling resampling;
};

// Image `slot` of the batch made on the host, float32 [3, height, width]
// already normalised: called for the images the device could not decode.
using HostImageFallback = std::function<Tensor(size_t slot)>;

// Image `slot` decoded on the host as the CPU path decodes it (the region its
// box touches, at a reduced scale where the CPU path would reduce), for the
// device to resample: uint8 [h, w, 3] and the resampling's box in those
// pixels. Pixels undefined when the file does not decode; the fallback then
// makes the image (or its replacement). Called from several threads at once,
// for different slots.
struct HostDecodedImage {
  Tensor pixels;
  double box_top = 0, box_left = 0, box_height = 0, box_width = 0;
};
using HostImageDecode = std::function<HostDecodedImage(size_t slot)>;

class DeviceImageDecoder {
 public:
  virtual ~DeviceImageDecoder() = default;
  // What decodes, in words for a log line.
  virtual std::string description() const = 0;
  // The finished batch on the decoder's device: its work is complete when
  // this returns, so the tensor can be used from any stream or thread. Safe
  // to call from several threads at once (each call gets its own state).
  // `decode_on_host` (may be empty) lets the decoder have part of the batch
  // decoded on the host while the device decodes the rest.
  virtual Tensor decode_batch(const std::vector<EncodedImageJob>& images, const ImageBatchFormat& format,
                              const HostImageFallback& fallback, const HostImageDecode& decode_on_host) = 0;
};

// A device's decoder, or in words why it has none.
struct DeviceImageDecoderChoice {
  std::shared_ptr<DeviceImageDecoder> decoder;
  std::string unavailable_reason;
};
using DeviceImageDecoderFactory = std::function<DeviceImageDecoderChoice(int device_index)>;

// Called from a backend's static initialiser (or a test). A later call for the
// same kind replaces the factory and forgets the decoders it made; an empty
// factory removes it.
void register_device_image_decoder(DeviceKind kind, DeviceImageDecoderFactory factory);

// The decoder for `device`, made once per device and kept; or the reason:
// the factory's, or that no decoder is registered for the device's kind.
DeviceImageDecoderChoice device_image_decoder(const Device& device);

// Forgets the decoders made for `kind`, so the next request makes them again
// (a test that changes the variables a decoder reads when it is made).
void forget_device_image_decoders(DeviceKind kind);

}  // namespace hearth
