#include "hearth/data/fashion_mnist.h"

#include <filesystem>

#include "hearth/core/errors.h"
#include "hearth/data/idx_reader.h"

namespace fs = std::filesystem;

namespace hearth::data {
namespace {

// The file for `stem` in `dir`, gzipped or not; empty when neither exists.
std::string find_file(const std::string& dir, const std::string& stem) {
  for (const std::string& name : {stem, stem + ".gz"}) {
    fs::path p = fs::path(dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

}  // namespace

const std::vector<std::string>& FashionMnist::class_names() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                 "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

std::vector<std::string> FashionMnist::default_dirs() { return {"/usr/share/datasets/fashion-mnist"}; }

FashionMnist::FashionMnist(Split split, const std::string& data_dir, int64_t max_samples) {
  const std::string prefix = split == Split::train ? "train" : "t10k";
  const std::string image_stem = prefix + "-images-idx3-ubyte";
  const std::string label_stem = prefix + "-labels-idx1-ubyte";

  std::vector<std::string> dirs;
  if (!data_dir.empty()) {
    dirs = {data_dir, (fs::path(data_dir) / "fashion-mnist").string(),
            (fs::path(data_dir) / "FashionMNIST" / "raw").string()};
  } else {
    dirs = default_dirs();
  }
  std::string image_path, label_path;
  for (const std::string& dir : dirs) {
    image_path = find_file(dir, image_stem);
    label_path = find_file(dir, label_stem);
    if (!image_path.empty() && !label_path.empty()) {
      directory_ = dir;
      break;
    }
  }
  if (directory_.empty()) {
    std::string searched;
    for (const std::string& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
    HEARTH_THROW(IoError, "[FashionMnist] cannot find ", image_stem, "(.gz) and ", label_stem,
                 "(.gz); searched: ", searched,
                 ". Install them with `sudo apt-get install dataset-fashion-mnist`, or download them and pass "
                 "--data_dir <directory>");
  }

  Tensor images = read_idx(image_path, max_samples);
  Tensor labels = read_idx(label_path, max_samples);
  HEARTH_CHECK(images.dtype() == DType::uint8 && images.dim() == 3 && images.size(1) == 28 && images.size(2) == 28,
               IoError, "[FashionMnist] ", image_path, ": expected unsigned-byte images of shape [N, 28, 28], found ",
               dtype_name(images.dtype()), " ", images.shape_string());
  HEARTH_CHECK(labels.dtype() == DType::uint8 && labels.dim() == 1, IoError, "[FashionMnist] ", label_path,
               ": expected unsigned-byte labels of shape [N], found ", dtype_name(labels.dtype()), " ",
               labels.shape_string());
  HEARTH_CHECK(labels.size(0) == images.size(0), IoError, "[FashionMnist] ", label_path, " has ", labels.size(0),
               " labels but ", image_path, " has ", images.size(0), " images");

  images_ = images;
  labels_ = Tensor::empty({labels.size(0)}, DType::int64);
  const uint8_t* src = labels.data<uint8_t>();
  int64_t* dst = labels_.data<int64_t>();
  for (int64_t i = 0; i < labels.size(0); ++i) {
    HEARTH_CHECK(src[i] < kNumClasses, IoError, "[FashionMnist] ", label_path, ": label ", static_cast<int>(src[i]),
                 " at index ", i, " is outside [0, ", kNumClasses, ")");
    dst[i] = src[i];
  }
}

Example FashionMnist::get(int64_t index) const {
  check_index("FashionMnist", index, size());
  constexpr int64_t kPixels = 28 * 28;
  Tensor image = Tensor::empty({1, 28, 28}, DType::float32);
  const uint8_t* src = images_.data<uint8_t>() + index * kPixels;
  float* dst = image.data<float>();
  for (int64_t i = 0; i < kPixels; ++i) dst[i] = static_cast<float>(src[i]) / 255.0f;  // divided, as torchvision does
  Tensor label = Tensor::empty({}, DType::int64);
  *label.data<int64_t>() = labels_.data<int64_t>()[index];
  return Example{{field::kPixelValues, image}, {field::kLabels, label}};
}

}  // namespace hearth::data
