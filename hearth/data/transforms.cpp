#include "hearth/data/transforms.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "hearth/core/dtype_visit.h"
#include "hearth/core/errors.h"
#include "hearth/core/generator.h"
#include "hearth/data/encoded_image.h"
#include "hearth/data/image_plan.h"

namespace hearth::data {

// ---- SampleRng ----------------------------------------------------------------

// Counter (low word) = epoch << 32 | block, counter (high word) = sample index,
// key = seed advanced by the stream. The sample index stays below 2^63, so these
// counters never reach the shuffle's (hearth/data/sampler.cpp).
SampleRng::SampleRng(uint64_t seed, int64_t epoch, int64_t index, uint64_t stream)
    : seed_(seed), epoch_(static_cast<uint64_t>(epoch)), index_(static_cast<uint64_t>(index)), stream_(stream) {}

SampleRng SampleRng::fork(uint32_t k) const {
  return SampleRng(seed_, static_cast<int64_t>(epoch_), static_cast<int64_t>(index_),
                   stream_ * 0x100000001B3ULL + k + 1);
}

uint32_t SampleRng::next_u32() {
  if (used_ == 4) {
    uint64_t key = seed_ + stream_ * 0x9E3779B97F4A7C15ULL;
    buf_ = philox4x32(epoch_ << 32 | (block_ & 0xFFFFFFFFULL), index_, key);
    ++block_;
    used_ = 0;
  }
  return buf_[used_++];
}

uint64_t SampleRng::next_u64() {
  uint64_t hi = next_u32();
  return hi << 32 | next_u32();
}

double SampleRng::uniform() {
  uint32_t hi = next_u32();
  return uints_to_unit_double(hi, next_u32());
}

int64_t SampleRng::randint(int64_t n) {
  HEARTH_CHECK(n >= 1, ValueError, "[SampleRng] randint needs n >= 1, got ", n);
  return static_cast<int64_t>((static_cast<unsigned __int128>(next_u64()) * static_cast<uint64_t>(n)) >> 64);
}

// ---- shared checks ------------------------------------------------------------

namespace {

Tensor host_contiguous(const Tensor& x, const char* who, int64_t min_dim, const char* layout) {
  HEARTH_CHECK(x.defined(), ValueError, "[", who, "] got an undefined tensor");
  HEARTH_CHECK(x.device().is_cpu(), DeviceError, "[", who, "] transforms run on CPU tensors, got one on ",
               x.device().str());
  HEARTH_CHECK(x.dim() >= min_dim, ShapeError, "[", who, "] expects a tensor laid out ", layout, ", got shape ",
               x.shape_string());
  return x.is_contiguous() ? x : x.detach().contiguous();
}

}  // namespace

Tensor Transform::from_encoded(const EncodedImage& image, SampleRng& rng) const { return (*this)(image.decode(), rng); }

// ---- Normalize ---------------------------------------------------------------

Normalize::Normalize(std::vector<double> mean, std::vector<double> std) : mean_(std::move(mean)), std_(std::move(std)) {
  HEARTH_CHECK(!mean_.empty() && !std_.empty(), ValueError, "[Normalize] mean and std need at least one value");
  for (double s : std_) HEARTH_CHECK(s != 0.0, ValueError, "[Normalize] std must be nonzero, got ", s);
}

Tensor Normalize::operator()(const Tensor& input, SampleRng&) const {
  Tensor x = host_contiguous(input, "Normalize", 3, "[..., C, H, W]");
  HEARTH_CHECK(x.is_floating_point(), TypeError, "[Normalize] expects a floating tensor, got ", dtype_name(x.dtype()),
               " (convert it with .to(DType::float32) first)");
  int64_t channels = x.size(-3);
  for (const std::vector<double>* v : {&mean_, &std_})
    HEARTH_CHECK(v->size() == 1 || static_cast<int64_t>(v->size()) == channels, ShapeError, "[Normalize] has ",
                 mean_.size(), " means and ", std_.size(), " stds but the input has ", channels, " channels (shape ",
                 x.shape_string(), "); give one value per channel or one for all");
  int64_t plane = x.size(-1) * x.size(-2);
  int64_t images = channels == 0 || plane == 0 ? 0 : x.numel() / (channels * plane);
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      using C = compute_t<T>;
      const T* src = static_cast<const T*>(x.data_ptr());
      T* dst = static_cast<T*>(out.data_ptr());
      for (int64_t n = 0; n < images; ++n) {
        for (int64_t c = 0; c < channels; ++c) {
          C m = static_cast<C>(mean_[mean_.size() == 1 ? 0 : c]);
          C inv = static_cast<C>(1.0 / std_[std_.size() == 1 ? 0 : c]);
          int64_t base = (n * channels + c) * plane;
          for (int64_t i = 0; i < plane; ++i) dst[base + i] = T((static_cast<C>(src[base + i]) - m) * inv);
        }
      }
    }
  });
  return out;
}

// ---- RandomCrop ----------------------------------------------------------------

RandomCrop::RandomCrop(int64_t height, int64_t width, int64_t padding)
    : height_(height), width_(width), padding_(padding) {
  HEARTH_CHECK(height >= 1 && width >= 1, ValueError, "[RandomCrop] crop size must be positive, got ", height, "x",
               width);
  HEARTH_CHECK(padding >= 0, ValueError, "[RandomCrop] padding must be >= 0, got ", padding);
}

Tensor RandomCrop::operator()(const Tensor& input, SampleRng& rng) const {
  Tensor x = host_contiguous(input, "RandomCrop", 2, "[..., H, W]");
  int64_t h = x.size(-2), w = x.size(-1);
  int64_t ph = h + 2 * padding_, pw = w + 2 * padding_;
  HEARTH_CHECK(ph >= height_ && pw >= width_, ShapeError, "[RandomCrop] cannot cut ", height_, "x", width_,
               " from an image of ", h, "x", w, " padded by ", padding_, " (", ph, "x", pw, ")");
  int64_t top = rng.randint(ph - height_ + 1) - padding_;
  int64_t left = rng.randint(pw - width_ + 1) - padding_;

  Shape shape = x.shape();
  shape[shape.size() - 2] = height_;
  shape[shape.size() - 1] = width_;
  Tensor out = Tensor::empty(shape, x.dtype());
  if (out.numel() == 0) return out;
  const size_t elem = x.element_size();
  const int64_t planes = out.numel() / (height_ * width_);
  // Source columns [left, left + width) clipped to [0, w).
  const int64_t c0 = std::max<int64_t>(0, -left), c1 = std::min<int64_t>(width_, w - left);
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  std::memset(dst, 0, out.nbytes());
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t y = 0; y < height_; ++y) {
      int64_t sy = top + y;
      if (sy < 0 || sy >= h || c1 <= c0) continue;
      const char* row = src + ((p * h + sy) * w + left + c0) * static_cast<int64_t>(elem);
      std::memcpy(dst + ((p * height_ + y) * width_ + c0) * static_cast<int64_t>(elem), row,
                  static_cast<size_t>(c1 - c0) * elem);
    }
  }
  return out;
}

// ---- RandomHorizontalFlip ------------------------------------------------------------

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  HEARTH_CHECK(p >= 0.0 && p <= 1.0, ValueError, "[RandomHorizontalFlip] p must be in [0, 1], got ", p);
}

Tensor RandomHorizontalFlip::operator()(const Tensor& input, SampleRng& rng) const {
  // Draw whether or not it flips, so the stream position does not depend on p.
  bool flip = rng.uniform() < p_;
  Tensor x = host_contiguous(input, "RandomHorizontalFlip", 2, "[..., H, W]");
  if (!flip) return x;
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  if (out.numel() == 0) return out;
  const size_t elem = x.element_size();
  const int64_t w = x.size(-1), rows = x.numel() / w;
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  // Rows reversed element by element, typed by the element's size so the
  // copy is a plain loop rather than a memcpy call per element.
  auto reverse_rows = [&](auto tag) {
    using T = decltype(tag);
    const T* s = reinterpret_cast<const T*>(src);
    T* d = reinterpret_cast<T*>(dst);
    for (int64_t r = 0; r < rows; ++r) std::reverse_copy(s + r * w, s + (r + 1) * w, d + r * w);
  };
  switch (elem) {
    case 1:
      reverse_rows(uint8_t{});
      break;
    case 2:
      reverse_rows(uint16_t{});
      break;
    case 4:
      reverse_rows(uint32_t{});
      break;
    case 8:
      reverse_rows(uint64_t{});
      break;
    default:
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < w; ++c)
          std::memcpy(dst + (r * w + c) * static_cast<int64_t>(elem),
                      src + (r * w + w - 1 - c) * static_cast<int64_t>(elem), elem);
  }
  return out;
}

// ---- Compose ---------------------------------------------------------------------

Compose::Compose(std::vector<TransformPtr> transforms) : transforms_(std::move(transforms)) {
  for (size_t i = 0; i < transforms_.size(); ++i)
    HEARTH_CHECK(transforms_[i] != nullptr, ValueError, "[Compose] transform ", i, " is null");
}

Tensor Compose::operator()(const Tensor& x, SampleRng& rng) const {
  Tensor y = x;
  for (size_t i = 0; i < transforms_.size(); ++i) {
    SampleRng sub = rng.fork(static_cast<uint32_t>(i));
    y = (*transforms_[i])(y, sub);
  }
  return y;
}

Tensor Compose::from_encoded(const EncodedImage& image, SampleRng& rng) const {
  if (transforms_.empty()) return image.decode();
  SampleRng first = rng.fork(0);
  Tensor y = transforms_[0]->from_encoded(image, first);
  for (size_t i = 1; i < transforms_.size(); ++i) {
    SampleRng sub = rng.fork(static_cast<uint32_t>(i));
    y = (*transforms_[i])(y, sub);
  }
  return y;
}

// ---- TransformDataset ---------------------------------------------------------------

TransformDataset::TransformDataset(std::shared_ptr<const Dataset> base, TransformPtr transform, uint64_t seed,
                                   std::string field)
    : base_(std::move(base)), transform_(std::move(transform)), seed_(seed), field_(std::move(field)) {
  HEARTH_CHECK(base_ != nullptr, ValueError, "[TransformDataset] base dataset is null");
  HEARTH_CHECK(transform_ != nullptr, ValueError, "[TransformDataset] transform is null");
  // Whether a pipeline plans depends only on its transforms and their order,
  // so one trial on any size says it for every sample.
  if (dynamic_cast<const EncodedImageDataset*>(base_.get()) != nullptr && field_ == field::kPixelValues) {
    ImagePlan trial = ImagePlan::for_image(64, 64);
    SampleRng rng(seed_, 0, 0);
    plans_images_ = transform_->plan(trial, rng);
  }
}

Example TransformDataset::get_for_epoch(int64_t index, int64_t epoch) const {
  const auto* encoded = dynamic_cast<const EncodedImageDataset*>(base_.get());
  if (encoded != nullptr && field_ == field::kPixelValues) {
    // A fresh generator for each try: a file that fails to decode is replaced
    // by the next one, transformed with the draws this sample would have used.
    return encoded->get_with_image_fn(index, epoch, [&](const EncodedImage& image) {
      SampleRng rng(seed_, epoch, index);
      return transform_->from_encoded(image, rng);
    });
  }
  Example ex = base_->get_for_epoch(index, epoch);
  SampleRng rng(seed_, epoch, index);
  ex[field_] = (*transform_)(ex.at(field_), rng);
  return ex;
}

PlannedSample TransformDataset::get_planned(int64_t index, int64_t epoch) const {
  HEARTH_CHECK(plans_images_, ValueError,
               "[TransformDataset] get_planned: this data set's images are not handed out encoded, or a transform "
               "cannot be said as a plan (check plans_images() first)");
  const auto& encoded = static_cast<const EncodedImageDataset&>(*base_);
  std::optional<PlannedSample> planned;
  // The header's size is all a plan needs; a file whose header cannot be
  // read throws IoError here and is replaced, as when decoding.
  Example ex = encoded.get_with_image_fn(index, epoch, [&](const EncodedImage& image) {
    const auto [h, w] = image.size();
    ImagePlan plan = ImagePlan::for_image(h, w);
    SampleRng rng(seed_, epoch, index);
    transform_->plan(plan, rng);
    planned = PlannedSample{{}, image, plan, index, epoch};
    return Tensor();
  });
  for (const auto& [name, t] : ex)
    if (name != field_) planned->fields[name] = t;
  return std::move(*planned);
}

Example TransformDataset::make_on_host(const PlannedSample& sample) const {
  try {
    SampleRng rng(seed_, sample.epoch, sample.index);
    Example ex = sample.fields;
    ex[field_] = transform_->from_encoded(sample.image, rng);
    return ex;
  } catch (const IoError&) {
    // The file does not decode after all: the CPU path from the start, which
    // reports it and takes the next good sample with this sample's draws.
    return get_for_epoch(sample.index, sample.epoch);
  }
}

const PlannedImageDataset* as_planned_image_dataset(const Dataset& dataset) {
  const auto* planned = dynamic_cast<const PlannedImageDataset*>(&dataset);
  return planned != nullptr && planned->plans_images() ? planned : nullptr;
}

}  // namespace hearth::data
