// Fashion-MNIST (Zalando): 28x28 grey images of clothing in 10 classes, 60000
// for training and 10000 for testing, as four IDX files.
#pragma once

#include <string>
#include <vector>

#include "hearth/data/dataset.h"

namespace hearth::data {

class FashionMnist : public Dataset {
 public:
  enum class Split { train, test };

  // Looks in `data_dir` when given (also its fashion-mnist/ and
  // FashionMNIST/raw/ subfolders, torchvision's layout), else in the default
  // directories. The files may be gzipped or not: train-images-idx3-ubyte(.gz),
  // train-labels-idx1-ubyte(.gz), t10k-images-idx3-ubyte(.gz),
  // t10k-labels-idx1-ubyte(.gz). Missing files raise IoError naming the
  // directories searched and how to get the data. With max_samples >= 0 only
  // the first max_samples images and labels are read (and decompressed).
  explicit FashionMnist(Split split, const std::string& data_dir = "", int64_t max_samples = -1);

  int64_t size() const override { return labels_.size(0); }
  // {"pixel_values": float32 [1, 28, 28] in [0, 1], "labels": int64 []}.
  Example get(int64_t index) const override;

  // The whole split: uint8 [N, 28, 28] and int64 [N].
  const Tensor& images() const { return images_; }
  const Tensor& labels() const { return labels_; }
  // The directory the files were read from.
  const std::string& directory() const { return directory_; }

  static constexpr int64_t kNumClasses = 10;
  static const std::vector<std::string>& class_names();  // "T-shirt/top", "Trouser", ...
  // Where Debian's dataset-fashion-mnist package installs the files.
  static std::vector<std::string> default_dirs();

 private:
  Tensor images_;
  Tensor labels_;
  std::string directory_;
};

}  // namespace hearth::data
