// Image classification data sets read from a directory, in either of the two
// common layouts:
//
//   class folders (torchvision's ImageFolder)   flat, label in the name (Oxford-IIIT Pets)
//     root/cat/001.jpg                            root/Abyssinian_1.jpg
//     root/cat/nested/002.png                     root/american_bulldog_12.jpg
//     root/dog/003.jpg                            root/Abyssinian_2.jpg
//
// A root with sub-folders uses the first layout (a class per sub-folder,
// images found recursively); a root without uses the second: the label is the
// file name without its trailing "_<number>.<ext>" (the pattern
// ^(.*)_\d+\.<ext>$ of Accelerate's cv_example), and files not named so are
// left out. Class names are sorted, the label is the index into them, and
// files are sorted by path, so the data set is the same on every machine.
//
// Samples are decoded lazily, in get(): {"pixel_values": uint8 [H, W, 3],
// "labels": int64 []}, so decoding runs in the DataLoader's worker threads.
// Apply transforms with TransformDataset (hearth/data/transforms.h): it hands
// the transform the file still encoded (get_with_image_fn), so a crop decodes
// only its region (hearth/data/encoded_image.h).
//
// Bad files never stop training. Files whose first bytes are not JPEG or PNG
// are left out when the folder is scanned; files that fail to decode later
// (corrupt, truncated) are replaced by the next good sample of the same data
// set (index + 1, + 2, ..., deterministically), so batches keep their size.
// Each bad file is reported once, by path, on the warning stream:
//   [ImageFolder] skipping <path>: <why>
#pragma once

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hearth/data/dataset.h"
#include "hearth/data/encoded_image.h"

namespace hearth::data {

struct ImageFile {
  std::string path;
  int64_t label = 0;
};

struct ImageFolderOptions {
  // Accepted file name endings, compared case-insensitively.
  std::vector<std::string> extensions = {".jpg", ".jpeg", ".png"};
  // Where skipped files are reported (nullptr: nowhere).
  std::ostream* warnings = &std::cerr;
};

// The label of a flat-layout file name ("american_bulldog_12.jpg" ->
// "american_bulldog"), or "" when the name does not end in "_<digits>.<ext>".
std::string label_from_file_name(const std::string& file_name);

class ImageFolder : public EncodedImageDataset {
 public:
  // Scans `root`. IoError when it is not a readable directory; ValueError when
  // it holds no usable image (naming the layouts and extensions looked for).
  explicit ImageFolder(const std::string& root, ImageFolderOptions options = {});

  int64_t size() const override { return static_cast<int64_t>(files_.size()); }
  Example get(int64_t index) const override;
  // The sample with pixel_values = make_image(the encoded file); a file for
  // which make_image throws IoError is bad and replaced, as in get().
  Example get_with_image_fn(int64_t index, int64_t epoch, const EncodedImageFn& make_image) const override;

  const std::string& root() const { return root_; }
  const std::vector<std::string>& classes() const { return classes_; }
  const std::vector<ImageFile>& files() const { return files_; }
  // "class folders" or "flat".
  const char* layout() const { return flat_ ? "flat" : "class folders"; }

  // Splits the files by a random permutation fixed by `seed`: the first
  // round-down(train_fraction * n) go to the first data set, the rest to the
  // second (Accelerate's cv_example splits 0.8 / 0.2 the same way). Both keep
  // this folder's class list and share its record of bad files.
  std::pair<std::shared_ptr<ImageFolder>, std::shared_ptr<ImageFolder>> split(double train_fraction,
                                                                              uint64_t seed) const;

  // The paths reported as bad so far (sorted).
  std::vector<std::string> skipped_files() const;

 private:
  class BadFiles;
  ImageFolder(std::string root, std::vector<std::string> classes, std::vector<ImageFile> files, bool flat,
              std::shared_ptr<BadFiles> bad);

  std::string root_;
  std::vector<std::string> classes_;
  std::vector<ImageFile> files_;
  bool flat_ = false;
  std::shared_ptr<BadFiles> bad_;
};

}  // namespace hearth::data
