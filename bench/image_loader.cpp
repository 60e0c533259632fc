// The image input pipeline alone, no model: images/s of decoding and
// augmenting through the DataLoader, as cv_example's training set reads them
// (RandomResizedCrop(size, scale 0.5..1) of the uint8 image, RandomHorizontalFlip,
// Normalize), for each worker count given.
//
//   bench_image_loader <image folder> [image_size=224] [batches=8] [batch_size=32] [workers=1,2]
//   bench_image_loader --synthesize N <new folder> [...]   writes N 500x375 JPEGs there first
//
// The first pass over the files is not timed, so the page cache holds them.
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
#include "hearth/data/dataloader.h"
#include "hearth/data/image_folder.h"
#include "hearth/data/image_io.h"
#include "hearth/data/image_transforms.h"

using namespace hearth;

static int run(int argc, char** argv);

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
    data::DataLoader loader(dataset, {.batch_size = batch_size, .shuffle = true, .seed = 1, .num_workers = w});
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
