// libFuzzer target: safetensors headers at scale. The input does not hold the
// file; it picks how to build one: how many entries (up to 131,072, about
// 10 MB of header, inside the per-input timeout under the sanitizers), how
// many dimensions a shape has (up to a million), how many tensors are empty,
// whether a name repeats and whether the data falls short. Loading must end
// in a clean IoError or succeed, and take time linear in the header: at most
// kSecondsPerMiB per MiB of it (quadratic parsing took minutes here).
#include <chrono>
#include <cstring>
#include <string>

#include "fuzz/fuzz_support.h"
#include "hearth/io/safetensors.h"

namespace {

constexpr double kSecondsPerMiB = 2.0;

uint32_t take_u32(const uint8_t*& data, size_t& size) {
  uint32_t v = 0;
  const size_t n = size < 4 ? size : 4;
  std::memcpy(&v, data, n);
  data += n;
  size -= n;
  return v;
}

std::string build(const uint8_t* data, size_t size) {
  const uint32_t entries = take_u32(data, size) % (1u << 17);
  const uint32_t rank = take_u32(data, size) % (1u << 20);
  const uint32_t empty_every = take_u32(data, size) % 64;  // 0: none empty
  const uint32_t flags = take_u32(data, size);
  const bool repeat_a_name = flags & 1;
  const bool short_data = flags & 2;
  std::string header = "{", payload;
  for (uint32_t i = 0; i < entries; ++i) {
    const bool empty = empty_every != 0 && i % empty_every == 0;
    const uint32_t id = repeat_a_name && i == entries - 1 && i > 0 ? 0 : i;
    std::string shape;
    if (i == 0 && rank > 0) {
      shape = "1";
      for (uint32_t d = 1; d < rank; ++d) shape += ",1";
    } else {
      shape = empty ? "0" : "1";
    }
    const size_t begin = payload.size(), end = begin + (empty ? 0 : 1);
    header += (i ? ",\"t" : "\"t") + std::to_string(id) + R"(":{"dtype":"U8","shape":[)" + shape +
              R"(],"data_offsets":[)" + std::to_string(begin) + "," + std::to_string(end) + "]}";
    if (!empty) payload += 'x';
  }
  header += "}";
  if (short_data && !payload.empty()) payload.pop_back();
  std::string file(8, '\0');
  const uint64_t len = header.size();
  std::memcpy(file.data(), &len, 8);
  return file + header + payload;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes = build(data, size);
  const std::string path =
      hearth::fuzz::write_input("scale.safetensors", reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  const auto t0 = std::chrono::steady_clock::now();
  const std::string problem = hearth::fuzz::check_clean_failure(path, [&] { hearth::io::SafetensorsFile file(path); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double bound = 1.0 + kSecondsPerMiB * static_cast<double>(bytes.size()) / (1 << 20);
  if (problem.empty() && seconds > bound)
    return hearth::fuzz::abort_on_problem("loading " + std::to_string(bytes.size()) + " bytes took " +
                                          std::to_string(seconds) + " s, more than " + std::to_string(bound));
  return hearth::fuzz::abort_on_problem(problem);
}
