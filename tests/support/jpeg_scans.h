// A progressive JPEG made hostile: its last scan repeated many times before
// the end marker. libjpeg only warns about the repeated progression, so each
// copy is decoded as another pass over the whole image; thousands of copies
// of a small scan make a small file that decodes for minutes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hearth::testing {

// Where the last start-of-scan marker (FF DA) of `jpeg` begins, or npos.
inline size_t last_scan_offset(const std::string& jpeg) {
  for (size_t i = jpeg.size(); i-- > 1;)
    if (static_cast<uint8_t>(jpeg[i - 1]) == 0xFF && static_cast<uint8_t>(jpeg[i]) == 0xDA) return i - 1;
  return std::string::npos;
}

// `jpeg` with its last scan (from its marker to the end-of-image marker)
// present `copies` more times. Returns `jpeg` unchanged when it has no scan
// or does not end with the end-of-image marker.
inline std::string with_repeated_last_scan(const std::string& jpeg, size_t copies) {
  const size_t sos = last_scan_offset(jpeg);
  const bool ends_with_eoi = jpeg.size() >= 2 && static_cast<uint8_t>(jpeg[jpeg.size() - 2]) == 0xFF &&
                             static_cast<uint8_t>(jpeg.back()) == 0xD9;
  if (sos == std::string::npos || !ends_with_eoi) return jpeg;
  const std::string scan = jpeg.substr(sos, jpeg.size() - 2 - sos);
  std::string out = jpeg.substr(0, jpeg.size() - 2);
  out.reserve(out.size() + copies * scan.size() + 2);
  for (size_t i = 0; i < copies; ++i) out += scan;
  return out + "\xFF\xD9";
}

}  // namespace hearth::testing
