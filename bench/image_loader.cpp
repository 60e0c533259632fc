// The image input pipeline alone, no model: images/s of decoding and
// augmenting through the DataLoader, as cv_example's training set reads them
// (RandomResizedCrop(size, scale 0.5..1) of the uint8 image, RandomHorizontalFlip,
// Normalize), for each worker count given.
//
//   bench_image_loader <image folder> [image_size=224] [batches=8] [batch_size=32] [workers=1,2]
//   bench_image_loader --synthesize N <new folder> [...]   writes N 500x375 JPEGs there first
//   bench_image_loader --stages <image folder> [image_size=224] [batch_size=32]
//       each stage alone on this thread, images/s: decode (whole, or only the
//       crop's region at the scale it allows), crop+resize, flip, normalise,
//       collate
//   --plain-collate (before the folder): batches in fresh memory, as a custom
//       collate gets them, instead of the loader's reused blocks
//
// HEARTH_IMAGE_FAST_DECODE=0 decodes every image whole (the path before
// region and reduced-scale decoding). The first pass over the files is not
// timed, so the page cache holds them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/synthetic_jpegs.h"
#include "hearth/core/exception_report.h"
#include "hearth/data/collate.h"
#include "hearth/data/dataloader.h"
#include "hearth/data/encoded_image.h"
#include "hearth/data/image_folder.h"
#include "hearth/data/image_io.h"
#include "hearth/data/image_transforms.h"

using namespace hearth;

static int run(int argc, char** argv);
static int run_stages(const std::string& dir, int64_t size, int64_t batch_size);

int main(int argc, char** argv) {
  return hearth::run_reporting_exceptions("bench_image_loader", [&] { return run(argc, argv); });
}

static int run(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "--synthesize") {
    // ImageNet's photographs average about 500x375.
    const int64_t n = std::atoll(argv[2]);
    hearth::bench::write_synthetic_jpegs(argv[3], n, 500, 375, 10);
    std::printf("wrote %lld synthetic 500x375 JPEGs to %s\n", static_cast<long long>(n), argv[3]);
    argv += 2;
    argc -= 2;
  }
  bool plain_collate = false;
  if (argc >= 2 && std::string(argv[1]) == "--plain-collate") {
    plain_collate = true;
    ++argv;
    --argc;
  }
  if (argc >= 3 && std::string(argv[1]) == "--stages")
    return run_stages(argv[2], argc > 3 ? std::atoll(argv[3]) : 224, argc > 4 ? std::atoll(argv[4]) : 32);
  if (argc < 2) {
    std::cerr << "usage: bench_image_loader [--synthesize N] <image folder> [image_size=224] [batches=8] "
                 "[batch_size=32] [workers=1,2]\n";
    return 2;
  }
  const std::string dir = argv[1];
  const int64_t size = argc > 2 ? std::atoll(argv[2]) : 224;
  const int64_t batches = argc > 3 ? std::atoll(argv[3]) : 8;
  const int64_t batch_size = argc > 4 ? std::atoll(argv[4]) : 32;
  std::vector<int64_t> workers;
  std::stringstream list(argc > 5 ? argv[5] : "1,2");
  for (std::string w; std::getline(list, w, ',');) workers.push_back(std::atoll(w.c_str()));

  auto folder = std::make_shared<data::ImageFolder>(dir);
  for (const data::ImageFile& f : folder->files()) (void)data::read_file_bytes(f.path);
  auto transform = std::make_shared<data::Compose>(std::vector<data::TransformPtr>{
      std::make_shared<data::RandomResizedCrop>(size, std::pair<double, double>{0.5, 1.0}),
      std::make_shared<data::RandomHorizontalFlip>(),
      std::make_shared<data::Normalize>(data::kImageNetMean, data::kImageNetStd)});
  auto dataset = std::make_shared<data::TransformDataset>(folder, transform, 0);

  std::printf("%lld images in %s, output %lldx%lld, batches of %lld\n", static_cast<long long>(folder->size()),
              dir.c_str(), static_cast<long long>(size), static_cast<long long>(size),
              static_cast<long long>(batch_size));
  std::printf("%-12s %10s %12s\n", "num_workers", "images", "images/s");
  for (int64_t w : workers) {
    data::DataLoaderOptions options{.batch_size = batch_size, .shuffle = true, .seed = 1, .num_workers = w};
    if (plain_collate) options.collate = [](std::vector<data::Example> s) { return data::default_collate(std::move(s)); };
    data::DataLoader loader(dataset, options);
    int64_t images = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t epoch = 0; images < batches * batch_size; ++epoch) {
      loader.set_epoch(epoch);
      for (data::Batch& b : loader) {
        images += b.at(data::field::kLabels).numel();
        if (images >= batches * batch_size) break;
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-12lld %10lld %12.1f\n", static_cast<long long>(w), static_cast<long long>(images),
                static_cast<double>(images) / s);
  }
  return 0;
}

// Seconds per call of `fn`, run over every image once.
template <typename Fn>
static double images_per_second(int64_t n, Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) fn(i);
  return static_cast<double>(n) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

static int run_stages(const std::string& dir, int64_t size, int64_t batch_size) {
  data::ImageFolder folder(dir);
  std::vector<std::vector<uint8_t>> files;
  for (const data::ImageFile& f : folder.files()) files.push_back(data::read_file_bytes(f.path));
  const auto n = static_cast<int64_t>(files.size());
  const data::RandomResizedCrop crop(size, {0.5, 1.0});
  const data::RandomHorizontalFlip flip;
  const data::Normalize normalize(data::kImageNetMean, data::kImageNetStd);
  std::vector<data::EncodedImage> encoded;
  for (int64_t i = 0; i < n; ++i) encoded.emplace_back(files[static_cast<size_t>(i)], folder.files()[static_cast<size_t>(i)].path);
  std::vector<Tensor> decoded(static_cast<size_t>(n)), cropped(static_cast<size_t>(n)), flipped(static_cast<size_t>(n));
  std::vector<data::CropBox> boxes(static_cast<size_t>(n));
  std::vector<data::DecodedRegion> regions(static_cast<size_t>(n));
  const auto u = [](int64_t i) { return static_cast<size_t>(i); };

  std::printf("%lld images in %s, RandomResizedCrop(%lld, scale 0.5-1), fast decode %s\n", static_cast<long long>(n),
              dir.c_str(), static_cast<long long>(size), data::fast_image_decode_enabled() ? "on" : "off");
  std::printf("%-34s %12s\n", "stage (one thread)", "images/s");
  const double whole = images_per_second(n, [&](int64_t i) { decoded[u(i)] = encoded[u(i)].decode(); });
  std::printf("%-34s %12.1f\n", "decode, whole image", whole);
  const double resize = images_per_second(n, [&](int64_t i) {
    data::SampleRng rng(1, 0, i);
    boxes[u(i)] = crop.sample_box(decoded[u(i)].size(0), decoded[u(i)].size(1), rng);
    cropped[u(i)] = data::resize_bilinear(decoded[u(i)], boxes[u(i)], size, size);
  });
  std::printf("%-34s %12.1f\n", "crop+resize, of the whole image", resize);
  const double region = images_per_second(n, [&](int64_t i) {
    regions[u(i)] = encoded[u(i)].decode_region({boxes[u(i)], size, size});
  });
  std::printf("%-34s %12.1f\n", "decode, crop region (fast path)", region);
  const double region_resize = images_per_second(n, [&](int64_t i) {
    cropped[u(i)] = data::resize_bilinear(regions[u(i)].pixels, regions[u(i)].box, size, size);
  });
  std::printf("%-34s %12.1f\n", "resize, of the region", region_resize);
  const double flips = images_per_second(n, [&](int64_t i) {
    data::SampleRng rng(1, 0, i);
    flipped[u(i)] = flip(cropped[u(i)], rng);
  });
  std::printf("%-34s %12.1f\n", "flip", flips);
  const double norm = images_per_second(n, [&](int64_t i) {
    data::SampleRng rng(1, 0, i);
    flipped[u(i)] = normalize(flipped[u(i)], rng);
  });
  std::printf("%-34s %12.1f\n", "normalise", norm);
  auto collate_all = [&](const data::BatchTensorFactory& make) {
    const int64_t batches = std::max<int64_t>(n / batch_size, 1);
    return images_per_second(batches, [&](int64_t b) {
      std::vector<data::Example> samples;
      for (int64_t k = 0; k < batch_size; ++k) {
        Tensor label = Tensor::empty({}, DType::int64);
        *label.data<int64_t>() = 0;
        samples.push_back({{data::field::kPixelValues, flipped[u((b * batch_size + k) % n)]}, {data::field::kLabels, label}});
      }
      (void)data::default_collate_into(std::move(samples), make);
    }) * static_cast<double>(batch_size);
  };
  std::printf("%-34s %12.1f\n", "collate, fresh memory",
              collate_all([](const Shape& s, DType d) { return Tensor::empty(s, d); }));
  auto pool = data::BatchBufferPool::create(8);
  std::printf("%-34s %12.1f\n", "collate, reused blocks",
              collate_all([&](const Shape& s, DType d) { return pool->empty(s, d); }));
  return 0;
}
