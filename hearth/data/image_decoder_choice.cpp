#include "hearth/data/image_decoder_choice.h"

#include <iostream>
#include <mutex>
#include <set>
#include <string>

#include "hearth/core/errors.h"
#include "hearth/core/switch_list.h"

namespace hearth::data {
namespace {

struct DecoderLog {
  std::mutex mu;
  std::ostream* out = &std::cerr;
  std::set<std::string> said;
};

DecoderLog& decoder_log() {
  static DecoderLog log;
  return log;
}

// Each line once per process: a loader is made for every evaluation, and
// every one of them would otherwise repeat it.
void say_once(const std::string& line) {
  DecoderLog& log = decoder_log();
  std::lock_guard<std::mutex> lock(log.mu);
  if (log.out == nullptr || !log.said.insert(line).second) return;
  *log.out << line << std::endl;
}

}  // namespace

ImageDecoderSetting image_decoder_setting() {
  const std::string v = switches::image_decoder().get();  // auto, cpu or gpu: the switch refuses anything else
  if (v == "cpu") return ImageDecoderSetting::cpu;
  if (v == "gpu") return ImageDecoderSetting::device;
  return ImageDecoderSetting::automatic;
}

std::shared_ptr<DeviceImageDecoder> choose_image_decoder(const Device& device) {
  const ImageDecoderSetting setting = image_decoder_setting();
  if (setting == ImageDecoderSetting::cpu) return nullptr;
  if (device.is_cpu()) {
    HEARTH_CHECK(setting != ImageDecoderSetting::device, DeviceError,
                 "[data] HEARTH_IMAGE_DECODER=gpu, but the batches are for the CPU: images are decoded on the device "
                 "the model trains on; train on an accelerator, or unset HEARTH_IMAGE_DECODER");
    return nullptr;
  }
  const DeviceImageDecoderChoice choice = device_image_decoder(device);
  if (!choice.decoder) {
    HEARTH_CHECK(setting != ImageDecoderSetting::device, DeviceError, "[data] HEARTH_IMAGE_DECODER=gpu, but ",
                 device.str(), " cannot decode images: ", choice.unavailable_reason,
                 " (unset HEARTH_IMAGE_DECODER to decode on the CPU)");
    say_once("hearth: images are decoded on the CPU, not on " + device.str() + ": " + choice.unavailable_reason +
             " (HEARTH_IMAGE_DECODER=cpu chooses the CPU without this note)");
    return nullptr;
  }
  say_once("hearth: images are decoded on " + device.str() + " by " + choice.decoder->description() +
           " (HEARTH_IMAGE_DECODER=cpu decodes them on the CPU)");
  return choice.decoder;
}

void set_image_decoder_log(std::ostream* out) {
  DecoderLog& log = decoder_log();
  std::lock_guard<std::mutex> lock(log.mu);
  log.out = out;
  log.said.clear();
}

}  // namespace hearth::data
