// ImageFolder: both layouts, labels, the seeded split, lazy decoding in the
// DataLoader's workers, and skipping bad files with one report each.
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/dataloader.h"
#include "hearth/data/image_folder.h"
#include "hearth/data/image_io.h"
#include "hearth/data/image_transforms.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/data/image_fixtures.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;
using hearth::testing::pets_dir;
using hearth::testing::TempDir;

int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

TEST(ImageFolder, LabelsFromFlatFileNames) {
  EXPECT_EQ(label_from_file_name("american_bulldog_12.jpg"), "american_bulldog");
  EXPECT_EQ(label_from_file_name("Abyssinian_1.JPG"), "Abyssinian");
  EXPECT_EQ(label_from_file_name("a_b_3_4.png"), "a_b_3");
  EXPECT_EQ(label_from_file_name("cat.jpg"), "");
  EXPECT_EQ(label_from_file_name("cat_.jpg"), "");
  EXPECT_EQ(label_from_file_name("_12.jpg"), "");
  EXPECT_EQ(label_from_file_name("cat_x1.jpg"), "");
}

TEST(ImageFolder, FlatLayoutSortsClassesAndLeavesOutNothingButBadFiles) {
  std::ostringstream warnings;
  ImageFolder folder(pets_dir(), {.warnings = &warnings});
  EXPECT_STREQ(folder.layout(), "flat");
  EXPECT_EQ(folder.classes(), (std::vector<std::string>{"blue_triangle", "green_square", "red_circle"}));
  // 24 good files and the truncated one, which only decoding can find bad.
  ASSERT_EQ(folder.size(), 25);
  EXPECT_EQ(folder.files()[0].path, pets_dir() + "/blue_triangle_1.jpg");
  EXPECT_EQ(folder.files()[0].label, 0);
  EXPECT_EQ(folder.files().back().label, 2);
  EXPECT_EQ(warnings.str(), "");

  Example ex = folder.get(8);  // green_square_1.jpg
  EXPECT_EQ(ex.at(field::kPixelValues).shape(), (Shape{36, 40, 3}));
  EXPECT_EQ(ex.at(field::kPixelValues).dtype(), DType::uint8);
  EXPECT_EQ(ex.at(field::kLabels).dim(), 0);
  EXPECT_EQ(*ex.at(field::kLabels).data<int64_t>(), 1);
}

TEST(ImageFolder, CorruptFileIsReportedOnceAndReplacedByTheNextSample) {
  std::ostringstream warnings;
  ImageFolder folder(pets_dir(), {.warnings = &warnings});
  const int64_t corrupt = folder.size() - 1;  // red_circle_9.jpg sorts last
  ASSERT_EQ(fs::path(folder.files()[static_cast<size_t>(corrupt)].path).filename(), "red_circle_9.jpg");
  for (int i = 0; i < 3; ++i) {
    Example ex = folder.get(corrupt);  // wraps around to sample 0
    EXPECT_EQ(*ex.at(field::kLabels).data<int64_t>(), 0);
  }
  const std::string path = pets_dir() + "/red_circle_9.jpg";
  EXPECT_EQ(count_of(warnings.str(), "[ImageFolder] skipping " + path + ": truncated JPEG"), 1) << warnings.str();
  EXPECT_EQ(folder.skipped_files(), std::vector<std::string>{path});
}

TEST(ImageFolder, ClassFolderLayoutAndUnreadableFilesLeftOutAtTheScan) {
  TempDir dir;
  fs::create_directories(dir.file("dog/more"));
  fs::create_directories(dir.file("cat"));
  fs::copy_file(pets_dir() + "/red_circle_1.jpg", dir.file("dog/a.jpg"));
  fs::copy_file(pets_dir() + "/red_circle_2.png", dir.file("dog/more/b.PNG"));
  fs::copy_file(pets_dir() + "/green_square_1.jpg", dir.file("cat/c.jpeg"));
  dir.write("cat/notes.txt", "not an image, wrong extension: ignored silently");
  dir.write("cat/fake.jpg", "GIF89a.....");
  std::ostringstream warnings;
  ImageFolder folder(dir.path(), {.warnings = &warnings});
  EXPECT_STREQ(folder.layout(), "class folders");
  EXPECT_EQ(folder.classes(), (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(folder.size(), 3);
  EXPECT_EQ(folder.files()[0].label, 0);
  EXPECT_EQ(folder.files()[1].label, 1);
  EXPECT_EQ(folder.files()[2].path, dir.file("dog/more/b.PNG"));
  EXPECT_EQ(warnings.str(), "[ImageFolder] skipping " + dir.file("cat/fake.jpg") +
                                ": the file is a GIF image; only JPEG and PNG are supported\n");
}

TEST(ImageFolder, SymlinkLoopsAreSkippedWithOneMessageEach) {
  TempDir dir;
  fs::create_directories(dir.file("dog"));
  fs::create_directories(dir.file("cat"));
  fs::copy_file(pets_dir() + "/red_circle_1.jpg", dir.file("dog/a.jpg"));
  fs::copy_file(pets_dir() + "/green_square_1.jpg", dir.file("cat/c.jpg"));
  fs::create_directory_symlink(dir.file("dog"), dir.file("dog/again"));  // a folder loop
  fs::create_symlink(dir.file("cat/y.jpg"), dir.file("cat/x.jpg"));      // a file loop
  fs::create_symlink(dir.file("cat/x.jpg"), dir.file("cat/y.jpg"));
  std::ostringstream warnings;
  ImageFolder folder(dir.path(), {.warnings = &warnings});
  EXPECT_EQ(folder.size(), 2);
  EXPECT_EQ(count_of(warnings.str(), "[ImageFolder] skipping " + dir.file("dog/again") +
                                         ": a symlink loop back to a folder already read\n"),
            1)
      << warnings.str();
  EXPECT_EQ(count_of(warnings.str(), "[ImageFolder] skipping " + dir.file("cat/x.jpg") + ": cannot be read"), 1)
      << warnings.str();
}

TEST(ImageFolder, EmptyOrMissingFoldersFailWithThePath) {
  TempDir dir;
  fs::create_directories(dir.file("flat"));
  dir.write("flat/readme.md", "x");
  try {
    ImageFolder f(dir.file("flat"), {.warnings = nullptr});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("flat") + ": found no usable image (flat layout"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(ImageFolder(dir.file("nowhere")), IoError);
  fs::create_directories(dir.file("classes/empty"));
  fs::create_directories(dir.file("classes/full"));
  fs::copy_file(pets_dir() + "/red_circle_1.jpg", dir.file("classes/full/a.jpg"));
  try {
    ImageFolder f(dir.file("classes"), {.warnings = nullptr});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("no usable image for the classes empty"), std::string::npos) << e.what();
  }
}

TEST(ImageFolder, SplitIsASeededPermutation) {
  ImageFolder folder(pets_dir(), {.warnings = nullptr});
  auto [train, eval] = folder.split(0.8, 42);
  EXPECT_EQ(train->size(), 20);  // int(0.8 * 25)
  EXPECT_EQ(eval->size(), 5);
  EXPECT_EQ(train->classes(), folder.classes());
  std::set<std::string> all;
  for (const auto* part : {train.get(), eval.get()})
    for (const ImageFile& f : part->files()) all.insert(f.path);
  EXPECT_EQ(all.size(), 25u);

  auto again = folder.split(0.8, 42);
  auto other = folder.split(0.8, 43);
  std::vector<std::string> a, b, c;
  for (const ImageFile& f : eval->files()) a.push_back(f.path);
  for (const ImageFile& f : again.second->files()) b.push_back(f.path);
  for (const ImageFile& f : other.second->files()) c.push_back(f.path);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_THROW(folder.split(1.0, 0), ValueError);
  EXPECT_THROW(folder.split(1.5, 0), ValueError);
}

// Decoding and augmentation happen in the loader's worker threads; batches
// are the same with 0 and 2 workers, and the corrupt file is skipped.
// Records that TransformDataset handed it the file still encoded.
class CountingCrop : public Transform {
 public:
  Tensor operator()(const Tensor& x, SampleRng& rng) const override { return crop_(x, rng); }
  Tensor from_encoded(const EncodedImage& image, SampleRng& rng) const override {
    ++encoded_calls;
    return crop_.from_encoded(image, rng);
  }
  mutable int encoded_calls = 0;

 private:
  RandomResizedCrop crop_{24};  // regions under twice 24: decoded at full scale
};

TEST(ImageFolder, TransformsReceiveTheEncodedFileAndBadFilesAreStillReplaced) {
  std::ostringstream warnings;
  auto folder = std::make_shared<ImageFolder>(pets_dir(), ImageFolderOptions{.warnings = &warnings});
  auto crop = std::make_shared<CountingCrop>();
  TransformDataset data(folder, crop, /*seed=*/4);
  const int64_t corrupt = folder->size() - 1;  // red_circle_9.jpg, truncated
  Example ex = data.get_for_epoch(corrupt, 2);
  EXPECT_EQ(*ex.at(field::kLabels).data<int64_t>(), 0);  // replaced by sample 0
  EXPECT_EQ(crop->encoded_calls, 2);                     // the bad file, then sample 0
  // Sample 0 transformed with the draws of the corrupt sample's index, as
  // when the image was decoded before the transform.
  SampleRng rng(4, 2, corrupt);
  const Tensor expected = RandomResizedCrop(24)(read_image(folder->files()[0].path), rng);
  const Tensor& got = ex.at(field::kPixelValues);
  ASSERT_EQ(got.shape(), expected.shape());
  for (int64_t k = 0; k < got.numel(); ++k) ASSERT_EQ(got.data<float>()[k], expected.data<float>()[k]);
  EXPECT_EQ(count_of(warnings.str(), "truncated JPEG"), 1) << warnings.str();
}

TEST(ImageFolder, LoadsThroughTheDataLoaderWithWorkers) {
  std::ostringstream warnings;
  auto folder = std::make_shared<ImageFolder>(pets_dir(), ImageFolderOptions{.warnings = &warnings});
  auto transform = std::make_shared<Compose>(
      std::vector<TransformPtr>{std::make_shared<RandomResizedCrop>(16), std::make_shared<RandomHorizontalFlip>(),
                                std::make_shared<Normalize>(kImageNetMean, kImageNetStd)});
  auto data = std::make_shared<TransformDataset>(folder, transform, /*seed=*/9);
  auto run = [&](int64_t workers) {
    DataLoader loader(data, {.batch_size = 4, .shuffle = true, .seed = 1, .num_workers = workers});
    std::vector<Batch> out;
    for (Batch& b : loader) out.push_back(b);
    return out;
  };
  std::vector<Batch> serial = run(0), parallel = run(2);
  ASSERT_EQ(serial.size(), 7u);  // 25 samples in batches of 4
  ASSERT_EQ(parallel.size(), 7u);
  for (size_t i = 0; i < serial.size(); ++i) {
    const Tensor& a = serial[i].at(field::kPixelValues);
    const Tensor& b = parallel[i].at(field::kPixelValues);
    ASSERT_EQ(a.shape(), b.shape());
    for (int64_t k = 0; k < a.numel(); ++k) ASSERT_EQ(a.data<float>()[k], b.data<float>()[k]);
    const Tensor& la = serial[i].at(field::kLabels);
    for (int64_t k = 0; k < la.numel(); ++k)
      ASSERT_EQ(la.data<int64_t>()[k], parallel[i].at(field::kLabels).data<int64_t>()[k]);
  }
  EXPECT_EQ(serial[0].at(field::kPixelValues).shape(), (Shape{4, 3, 16, 16}));
  EXPECT_EQ(count_of(warnings.str(), "skipping"), 1) << warnings.str();
}

// 100,000 empty images printed 100,000 lines: the first ten are named, the
// rest counted in one line.
TEST(ImageFolder, ManyBadFilesAreCountedNotEachPrinted) {
  TempDir dir;
  fs::create_directories(dir.file("dog"));
  fs::create_directories(dir.file("cat"));
  fs::copy_file(pets_dir() + "/red_circle_1.jpg", dir.file("dog/a.jpg"));
  fs::copy_file(pets_dir() + "/green_square_1.jpg", dir.file("cat/c.jpg"));
  for (int i = 0; i < 500; ++i) dir.write("cat/empty" + std::to_string(i) + ".jpg", "");
  std::ostringstream warnings;
  ImageFolder folder(dir.path(), {.warnings = &warnings});
  EXPECT_EQ(folder.size(), 2);
  EXPECT_EQ(folder.skipped_files().size(), 500u);
  EXPECT_EQ(count_of(warnings.str(), "[ImageFolder] skipping " + dir.path()), 10) << warnings.str();
  EXPECT_EQ(count_of(warnings.str(), "\n"), 12) << warnings.str();
  EXPECT_NE(warnings.str().find("[ImageFolder] " + dir.path() + ": skipped 500 files in all"), std::string::npos)
      << warnings.str();
}

}  // namespace
}  // namespace hearth::data
