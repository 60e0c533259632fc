#include "hearth/data/image_folder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <set>

#include <sys/stat.h>

#include "hearth/core/errors.h"
#include "hearth/data/image_io.h"
#include "hearth/data/sampler.h"

namespace hearth::data {
namespace fs = std::filesystem;

// The files found bad, shared by a folder and its splits, so each is
// reported once however many data sets and worker threads meet it.
class ImageFolder::BadFiles {
 public:
  explicit BadFiles(std::ostream* warnings) : warnings_(warnings) {}

  bool contains(const std::string& path) const {
    std::lock_guard<std::mutex> lock(mu_);
    return paths_.count(path) != 0;
  }

  void report(const std::string& path, std::string why) {
    // IoErrors from image_io start "[image] <path>: "; the path is printed once.
    const std::string prefix = "[image] " + path + ": ";
    if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
    std::lock_guard<std::mutex> lock(mu_);
    if (!paths_.insert(path).second || warnings_ == nullptr) return;
    // A folder of 100,000 empty files printed 100,000 lines: the first few
    // are named, the rest counted.
    if (paths_.size() <= kNamedSkips) {
      *warnings_ << "[ImageFolder] skipping " << path << ": " << why << std::endl;
    } else if (paths_.size() == kNamedSkips + 1) {
      *warnings_ << "[ImageFolder] skipping more files: they are counted, not named" << std::endl;
    }
  }

  // After a folder is read: how many were skipped in all, when not all were named.
  void summarize(const std::string& root) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (warnings_ == nullptr || paths_.size() <= kNamedSkips) return;
    *warnings_ << "[ImageFolder] " << root << ": skipped " << paths_.size() << " files in all (the first "
               << kNamedSkips << " named above)" << std::endl;
  }

  std::vector<std::string> paths() const {
    std::lock_guard<std::mutex> lock(mu_);
    return {paths_.begin(), paths_.end()};
  }

 private:
  static constexpr size_t kNamedSkips = 10;
  mutable std::mutex mu_;
  std::set<std::string> paths_;
  std::ostream* warnings_;
};

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool has_extension(const fs::path& p, const std::vector<std::string>& extensions) {
  const std::string name = lower(p.filename().string());
  for (const std::string& ext : extensions) {
    const std::string e = lower(ext);
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string label_from_file_name(const std::string& file_name) {
  const size_t dot = file_name.rfind('.');
  if (dot == std::string::npos || dot == 0) return "";
  const std::string stem = file_name.substr(0, dot);
  size_t i = stem.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(stem[i - 1]))) --i;
  // At least one digit, preceded by '_', preceded by a non-empty label.
  if (i == stem.size() || i < 2 || stem[i - 1] != '_') return "";
  return stem.substr(0, i - 1);
}

ImageFolder::ImageFolder(const std::string& root, ImageFolderOptions options)
    : root_(root), bad_(std::make_shared<BadFiles>(options.warnings)) {
  std::error_code ec;
  HEARTH_CHECK(fs::is_directory(root, ec), IoError, "[ImageFolder] ", root,
               ": not a directory (expected a folder of class sub-folders, or of images named <label>_<n>.jpg)");
  std::vector<fs::path> subdirs;
  for (const fs::directory_entry& e : fs::directory_iterator(root)) {
    std::error_code entry_ec;
    if (e.is_directory(entry_ec)) subdirs.push_back(e.path());
    if (entry_ec && entry_ec != std::errc::no_such_file_or_directory)
      bad_->report(e.path().string(), "cannot be read: " + entry_ec.message());  // e.g. a symlink loop
  }
  std::sort(subdirs.begin(), subdirs.end());
  flat_ = subdirs.empty();

  // (path, class name) of every candidate, before probing.
  std::vector<std::pair<std::string, std::string>> found;
  if (flat_) {
    for (const fs::directory_entry& e : fs::directory_iterator(root)) {
      std::error_code entry_ec;
      if (!e.is_regular_file(entry_ec) || !has_extension(e.path(), options.extensions)) continue;
      std::string label = label_from_file_name(e.path().filename().string());
      if (label.empty())
        bad_->report(e.path().string(), "its name is not <label>_<number>.<extension>, so it has no label");
      else
        found.emplace_back(e.path().string(), label);
    }
  } else {
    for (const fs::path& dir : subdirs) {
      classes_.push_back(dir.filename().string());
      // Symlinked folders are followed, each real folder once: a symlink loop
      // is skipped with a message, like a corrupt image.
      std::set<std::pair<dev_t, ino_t>> entered;
      auto first_visit = [&](const fs::path& p) {
        struct stat st {};
        return ::stat(p.c_str(), &st) != 0 || entered.insert({st.st_dev, st.st_ino}).second;
      };
      first_visit(dir);
      std::error_code walk_ec;
      fs::recursive_directory_iterator it(dir, fs::directory_options::follow_directory_symlink, walk_ec), end;
      for (; !walk_ec && it != end; it.increment(walk_ec)) {
        const fs::directory_entry& e = *it;
        std::error_code entry_ec;
        const bool is_dir = e.is_directory(entry_ec);
        if (entry_ec) {
          if (entry_ec != std::errc::no_such_file_or_directory)
            bad_->report(e.path().string(), "cannot be read: " + entry_ec.message());
          continue;
        }
        if (is_dir) {
          if (!first_visit(e.path())) {
            it.disable_recursion_pending();
            bad_->report(e.path().string(), "a symlink loop back to a folder already read");
          }
          continue;
        }
        if (e.is_regular_file(entry_ec) && has_extension(e.path(), options.extensions))
          found.emplace_back(e.path().string(), classes_.back());
      }
      if (walk_ec) bad_->report(dir.string(), "cannot be read completely: " + walk_ec.message());
    }
  }
  std::sort(found.begin(), found.end());

  std::vector<std::pair<std::string, std::string>> good;
  for (const auto& [path, label] : found) {
    try {
      probe_image_file(path);
      good.emplace_back(path, label);
    } catch (const IoError& e) {
      bad_->report(path, e.what());
    }
  }
  if (flat_) {
    std::set<std::string> names;
    for (const auto& [path, label] : good) names.insert(label);
    classes_.assign(names.begin(), names.end());
  }
  bad_->summarize(root);
  HEARTH_CHECK(!good.empty(), ValueError, "[ImageFolder] ", root, ": found no usable image (", layout(),
               " layout; extensions ", joined(options.extensions), ")");
  std::vector<int64_t> per_class(classes_.size(), 0);
  for (const auto& [path, label] : good) {
    auto it = std::lower_bound(classes_.begin(), classes_.end(), label);
    const int64_t index = it - classes_.begin();
    files_.push_back({path, index});
    ++per_class[static_cast<size_t>(index)];
  }
  std::vector<std::string> empty;
  for (size_t c = 0; c < classes_.size(); ++c)
    if (per_class[c] == 0) empty.push_back(classes_[c]);
  HEARTH_CHECK(empty.empty(), ValueError, "[ImageFolder] ", root, ": found no usable image for the classes ",
               joined(empty), " (extensions ", joined(options.extensions), ")");
}

ImageFolder::ImageFolder(std::string root, std::vector<std::string> classes, std::vector<ImageFile> files, bool flat,
                         std::shared_ptr<BadFiles> bad)
    : root_(std::move(root)),
      classes_(std::move(classes)),
      files_(std::move(files)),
      flat_(flat),
      bad_(std::move(bad)) {}

Example ImageFolder::get(int64_t index) const {
  return get_with_image_fn(index, 0, [](const EncodedImage& image) { return image.decode(); });
}

Example ImageFolder::get_with_image_fn(int64_t index, int64_t, const EncodedImageFn& make_image) const {
  check_index("ImageFolder", index, size());
  const int64_t n = size();
  for (int64_t k = 0; k < n; ++k) {
    const ImageFile& file = files_[static_cast<size_t>((index + k) % n)];
    if (bad_->contains(file.path)) continue;
    Tensor pixels;
    try {
      pixels = make_image(EncodedImage(read_file_bytes(file.path), file.path));
    } catch (const IoError& e) {
      bad_->report(file.path, e.what());
      continue;
    }
    Tensor label = Tensor::empty({}, DType::int64);
    *label.data<int64_t>() = file.label;
    return Example{{field::kPixelValues, pixels}, {field::kLabels, label}};
  }
  HEARTH_THROW(IoError, "[ImageFolder] none of the ", n, " images of ", root_,
               " in this data set could be decoded (each was reported above)");
}

std::pair<std::shared_ptr<ImageFolder>, std::shared_ptr<ImageFolder>> ImageFolder::split(double train_fraction,
                                                                                         uint64_t seed) const {
  HEARTH_CHECK(train_fraction >= 0.0 && train_fraction <= 1.0, ValueError,
               "[ImageFolder] split: train_fraction must be in [0, 1], got ", train_fraction);
  const int64_t n = size();
  const auto cut = static_cast<int64_t>(std::floor(train_fraction * static_cast<double>(n)));
  HEARTH_CHECK(cut >= 1 && cut < n, ValueError, "[ImageFolder] split: a train fraction of ", train_fraction, " of ", n,
               " images leaves one side empty (", cut, " train, ", n - cut, " eval)");
  std::vector<int64_t> order = shuffled_indices(n, seed, 0);
  std::vector<ImageFile> train, eval;
  for (int64_t i = 0; i < n; ++i)
    (i < cut ? train : eval).push_back(files_[static_cast<size_t>(order[static_cast<size_t>(i)])]);
  return {std::shared_ptr<ImageFolder>(new ImageFolder(root_, classes_, std::move(train), flat_, bad_)),
          std::shared_ptr<ImageFolder>(new ImageFolder(root_, classes_, std::move(eval), flat_, bad_))};
}

std::vector<std::string> ImageFolder::skipped_files() const { return bad_->paths(); }

}  // namespace hearth::data
