// libFuzzer target: the progressive-JPEG path with a time bound. The first two
// bytes of the input are a count, the rest a JPEG (the seeds are progressive
// ones); the JPEG's last scan is repeated that many more times (up to 65,535)
// before it is decoded, whole and as a region. Decoding must end in a clean
// IoError or succeed, within kSeconds: every scan is a pass over the image,
// so without a scan limit a few kilobytes decoded for minutes.
#include "tests/support/jpeg_scans.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "fuzz/fuzz_support.h"
#include "hearth/data/encoded_image.h"
#include "hearth/data/image_io.h"

namespace {

constexpr double kSeconds = 5.0;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t copies = data[0] | (size_t{data[1]} << 8);
  const std::string jpeg(reinterpret_cast<const char*>(data + 2), size - 2);
  const std::string bytes = hearth::testing::with_repeated_last_scan(jpeg, copies);
  const std::string path =
      hearth::fuzz::write_input("scans.jpg", reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  const auto t0 = std::chrono::steady_clock::now();
  std::string problem = hearth::fuzz::check_clean_failure(path, [&] { (void)hearth::data::read_image(path).numel(); });
  if (problem.empty()) {
    problem = hearth::fuzz::check_clean_failure(path, [&] {
      hearth::data::EncodedImage image(hearth::data::read_file_bytes(path), path);
      const auto [h, w] = image.size();
      const hearth::data::CropBox half{h / 2, 0, h - h / 2, w};
      (void)image.decode_region({half, std::max<int64_t>(half.height / 2, 1), std::max<int64_t>(w / 2, 1)})
          .pixels.numel();
    });
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (problem.empty() && seconds > kSeconds)
    problem = "decoding " + std::to_string(bytes.size()) + " bytes (" + std::to_string(copies) +
              " repeated scans) took " + std::to_string(seconds) + " s, more than " + std::to_string(kSeconds);
  return hearth::fuzz::abort_on_problem(problem);
}
