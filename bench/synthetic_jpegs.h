// A folder of JPEG photographs' stand-ins for the loader benchmark where no
// image set is at hand: one sub-folder per class (ImageFolder's layout), each
// image a smooth colour field with noise, so that it compresses to about the
// size of a camera photo of the same dimensions rather than to nothing.
#pragma once

#include <cstdint>
#include <string>

namespace hearth::bench {

// Writes `count` JPEGs of width x height (quality 90) into `dir`, spread over
// `classes` sub-folders, on every core; image i is the same whatever the
// number of cores. Throws std::runtime_error naming a file it could not write.
void write_synthetic_jpegs(const std::string& dir, int64_t count, int width, int height, int classes);

}  // namespace hearth::bench
