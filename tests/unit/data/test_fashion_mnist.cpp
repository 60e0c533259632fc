#include <filesystem>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/fashion_mnist.h"
#include "tests/support/idx_files.h"
#include "tests/support/temp_dir.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;
using hearth::testing::idx_bytes;
using hearth::testing::TempDir;
using hearth::testing::write_gzip;

// A split of n images where image i's pixels are all (i * 50 + k) % 256 for
// pixel k, and label i % 10.
void write_split(const std::string& dir, const std::string& prefix, uint32_t n, bool gzip, int bad_label = -1) {
  std::string pixels, labels;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t k = 0; k < 28 * 28; ++k) pixels += static_cast<char>((i * 50 + k) % 256);
    labels += static_cast<char>(static_cast<int>(i) == bad_label ? 10 : i % 10);
  }
  std::string images = idx_bytes(0x08, {n, 28, 28}, pixels), label_file = idx_bytes(0x08, {n}, labels);
  std::string ip = dir + "/" + prefix + "-images-idx3-ubyte", lp = dir + "/" + prefix + "-labels-idx1-ubyte";
  if (gzip) {
    write_gzip(ip + ".gz", images);
    write_gzip(lp + ".gz", label_file);
  } else {
    std::ofstream(ip, std::ios::binary) << images;
    std::ofstream(lp, std::ios::binary) << label_file;
  }
}

TEST(FashionMnist, ReadsASplitFromAGivenDirectory) {
  TempDir dir;
  write_split(dir.path(), "train", 12, /*gzip=*/false);
  write_split(dir.path(), "t10k", 3, /*gzip=*/true);
  FashionMnist train(FashionMnist::Split::train, dir.path());
  FashionMnist test(FashionMnist::Split::test, dir.path());
  EXPECT_EQ(train.size(), 12);
  EXPECT_EQ(test.size(), 3);
  EXPECT_EQ(train.directory(), dir.path());
  EXPECT_EQ(train.images().shape(), (Shape{12, 28, 28}));
  EXPECT_EQ(train.labels().dtype(), DType::int64);

  Example ex = train.get(11);
  const Tensor& img = ex.at(field::kPixelValues);
  EXPECT_EQ(img.dtype(), DType::float32);
  EXPECT_EQ(img.shape(), (Shape{1, 28, 28}));
  std::vector<float> px = img.to_vector<float>();
  EXPECT_EQ(px[0], static_cast<float>((11 * 50) % 256) / 255.0f);
  EXPECT_EQ(px[5], static_cast<float>((11 * 50 + 5) % 256) / 255.0f);
  for (float p : px) {
    EXPECT_GE(p, 0.0f);
    EXPECT_LE(p, 1.0f);
  }
  EXPECT_EQ(ex.at(field::kLabels).dtype(), DType::int64);
  EXPECT_EQ(ex.at(field::kLabels).shape(), Shape{});
  EXPECT_EQ(ex.at(field::kLabels).item<int64_t>(), 1);
  EXPECT_THROW(train.get(12), ValueError);
  EXPECT_EQ(FashionMnist::class_names().size(), 10u);
  EXPECT_EQ(FashionMnist::class_names()[9], "Ankle boot");
}

TEST(FashionMnist, FindsTorchvisionsLayoutInsideDataDir) {
  TempDir dir;
  fs::create_directories(dir.file("FashionMNIST/raw"));
  write_split(dir.file("FashionMNIST/raw"), "t10k", 2, /*gzip=*/false);
  FashionMnist test(FashionMnist::Split::test, dir.path());
  EXPECT_EQ(test.size(), 2);
  EXPECT_EQ(test.directory(), dir.file("FashionMNIST/raw"));
}

TEST(FashionMnist, MissingFilesSayWhereItLookedAndHowToGetThem) {
  TempDir dir;
  write_split(dir.path(), "train", 2, false);  // the test split is absent
  try {
    FashionMnist(FashionMnist::Split::test, dir.path());
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("t10k-images-idx3-ubyte"), std::string::npos) << msg;
    EXPECT_NE(msg.find(dir.path()), std::string::npos) << msg;
    EXPECT_NE(msg.find("sudo apt-get install dataset-fashion-mnist"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--data_dir"), std::string::npos) << msg;
  }
}

TEST(FashionMnist, RejectsInconsistentFiles) {
  TempDir bad_label, mismatch;
  write_split(bad_label.path(), "train", 4, false, /*bad_label=*/2);
  EXPECT_THROW(FashionMnist(FashionMnist::Split::train, bad_label.path()), IoError);
  write_split(mismatch.path(), "train", 4, false);
  std::ofstream(mismatch.file("train-labels-idx1-ubyte"), std::ios::binary) << idx_bytes(0x08, {3}, "\x01\x02\x03");
  try {
    FashionMnist(FashionMnist::Split::train, mismatch.path());
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("has 3 labels but"), std::string::npos) << e.what();
  }
}

TEST(FashionMnist, RealTestSetWhenInstalled) {
  std::string dir = FashionMnist::default_dirs().front();
  if (!fs::exists(dir + "/t10k-images-idx3-ubyte.gz") && !fs::exists(dir + "/t10k-images-idx3-ubyte"))
    GTEST_SKIP() << "Fashion-MNIST is not installed in " << dir << " (sudo apt-get install dataset-fashion-mnist)";
  FashionMnist test(FashionMnist::Split::test);
  ASSERT_EQ(test.size(), 10000);
  std::vector<int64_t> histogram(10, 0);
  for (int64_t label : test.labels().to_vector<int64_t>()) histogram[static_cast<size_t>(label)]++;
  for (int64_t c = 0; c < 10; ++c) EXPECT_EQ(histogram[static_cast<size_t>(c)], 1000) << "class " << c;
  Example first = test.get(0);
  EXPECT_EQ(first.at(field::kLabels).item<int64_t>(), 9) << "the first test image is an ankle boot";
  std::vector<float> px = first.at(field::kPixelValues).to_vector<float>();
  float hi = 0.0f;
  for (float p : px) hi = std::max(hi, p);
  EXPECT_EQ(hi, 1.0f);
}

}  // namespace
}  // namespace hearth::data
