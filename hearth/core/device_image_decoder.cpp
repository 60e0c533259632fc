#include "hearth/core/device_image_decoder.h"

#include <map>
#include <mutex>
#include <utility>

namespace hearth {
namespace {

struct Registry {
  std::mutex mu;
  std::map<uint8_t, DeviceImageDecoderFactory> factories;            // by kind id
  std::map<std::pair<uint8_t, int>, DeviceImageDecoderChoice> made;  // by (kind id, index)
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: decoders may outlive static destruction order
  return *r;
}

}  // namespace

void forget_device_image_decoders(DeviceKind kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto it = r.made.begin(); it != r.made.end();) it = it->first.first == kind.id ? r.made.erase(it) : ++it;
}

void register_device_image_decoder(DeviceKind kind, DeviceImageDecoderFactory factory) {
  forget_device_image_decoders(kind);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (factory)
    r.factories[kind.id] = std::move(factory);
  else
    r.factories.erase(kind.id);
}

DeviceImageDecoderChoice device_image_decoder(const Device& device) {
  Registry& r = registry();
  std::unique_lock<std::mutex> lock(r.mu);
  const auto key = std::make_pair(device.kind.id, device.index);
  if (auto it = r.made.find(key); it != r.made.end()) return it->second;
  auto f = r.factories.find(device.kind.id);
  if (f == r.factories.end())
    return {nullptr, "this build has no image decoder for " + device_kind_name(device.kind) + " devices"};
  // Made under the lock: two loaders asking at once get the same decoder.
  DeviceImageDecoderChoice choice = f->second(device.index);
  if (!choice.decoder && choice.unavailable_reason.empty())
    choice.unavailable_reason = "the " + device_kind_name(device.kind) + " image decoder gave no reason";
  r.made[key] = choice;
  return choice;
}

}  // namespace hearth
