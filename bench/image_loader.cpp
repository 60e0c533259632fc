// The image input pipeline alone, no model: images/s of decoding and
// augmenting through the DataLoader, as cv_example's training set reads them
// (RandomResizedCrop(size, scale 0.5..1) of the uint8 image, RandomHorizontalFlip,
// Normalize), for each worker count given.
//
//   bench_image_loader [flags] <image folder> [image_size=224] [batches=8] [batch_size=32] [workers=1,2]
//   bench_image_loader [flags] --stages <image folder> [image_size=224] [batch_size=32]
//       each stage alone on this thread: on the CPU path, before and after
//       decoding only the crop's region and collating sample by sample into
//       reused memory (decode, crop+resize, flip, normalise, collate); with
//       --device, the device path's worker stage (read, header, plan) and its
//       device stage (decode and finish a batch)
// flags, before the folder:
//   --synthesize N <new folder>  writes N 500x375 JPEGs there first
//   --plain-collate              batches in fresh memory, as a custom collate gets them
//   --device cuda                batches go to that device: each worker count is run with the images
//                                decoded on the CPU (then copied there) and decoded on the device
//                                (HEARTH_IMAGE_DECODER=cpu and gpu), both complete on the device
//   --bf16                       with --device: bfloat16 NHWC images, as a bf16-mixed channels_last model takes them
//   --eval                       with --device: Resize + CenterCrop, the evaluation pipeline
//   --gpu-only                   with --device: the device-decoding column only
//   --seconds S                  stop a run after S seconds (and fewer images than asked)
//
// HEARTH_IMAGE_FAST_DECODE=0 decodes every image whole. The first pass over the files is not
// timed, so the page cache holds them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/image_loader_device.h"
#include "bench/synthetic_jpegs.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "hearth/core/exception_report.h"
#include "hearth/core/switches.h"
#include "hearth/data/batch_assembler.h"
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
  hearth::validate_switches_or_exit("image_loader");  // a bad HEARTH_* value: one line, status 2
  return hearth::run_reporting_exceptions("bench_image_loader", [&] { return run(argc, argv); });
}

static int run(int argc, char** argv) {
  bool plain_collate = false;
  hearth::bench::DeviceLoaderOptions device_options;
  std::optional<std::string> device_spec;  // resolved once the flags are read (after any --synthesize)
  // Flags first, then the positional arguments.
  while (argc >= 2 && std::string(argv[1]).rfind("--", 0) == 0 && std::string(argv[1]) != "--stages") {
    const std::string flag = argv[1];
    int used = 1;
    if (flag == "--synthesize" && argc >= 4) {
      // ImageNet's photographs average about 500x375.
      const int64_t n = std::atoll(argv[2]);
      hearth::bench::write_synthetic_jpegs(argv[3], n, 500, 375, 10);
      std::printf("wrote %lld synthetic 500x375 JPEGs to %s\n", static_cast<long long>(n), argv[3]);
      used = 2;  // the folder stays: it is the positional argument
    } else if (flag == "--plain-collate") {
      plain_collate = true;
    } else if (flag == "--device" && argc >= 3) {
      device_spec = argv[2];
      used = 2;
    } else if (flag == "--bf16") {
      device_options.bf16_channels_last = true;
    } else if (flag == "--eval") {
      device_options.eval = true;
    } else if (flag == "--gpu-only") {
      device_options.device_decoding_only = true;
    } else if (flag == "--seconds" && argc >= 3) {
      device_options.max_seconds = std::atof(argv[2]);
      used = 2;
    } else {
      std::cerr << "bench_image_loader: unknown flag or missing value: " << flag << "\n";
      return 2;
    }
    argv += used;
    argc -= used;
  }
  const std::optional<Device> device = device_spec ? std::optional<Device>(resolve_device(*device_spec)) : std::nullopt;
  if (argc >= 3 && std::string(argv[1]) == "--stages") {
    const int64_t size = argc > 3 ? std::atoll(argv[3]) : 224, batch_size = argc > 4 ? std::atoll(argv[4]) : 32;
    if (!device) return run_stages(argv[2], size, batch_size);
    device_options.dir = argv[2];
    device_options.device = *device;
    device_options.image_size = size;
    device_options.batch_size = batch_size;
    return hearth::bench::device_decoding_stages(device_options);
  }
  if (argc < 2) {
    std::cerr << "usage: bench_image_loader [--synthesize N DIR] [--plain-collate] [--device D [--bf16] [--eval]] "
                 "[--seconds S] <image folder> [image_size=224] [batches=8] [batch_size=32] [workers=1,2]\n";
    return 2;
  }
  const std::string dir = argv[1];
  const int64_t size = argc > 2 ? std::atoll(argv[2]) : 224;
  const int64_t batches = argc > 3 ? std::atoll(argv[3]) : 8;
  const int64_t batch_size = argc > 4 ? std::atoll(argv[4]) : 32;
  std::vector<int64_t> workers;
  std::stringstream list(argc > 5 ? argv[5] : "1,2");
  for (std::string w; std::getline(list, w, ',');) workers.push_back(std::atoll(w.c_str()));
  if (device) {
    device_options.dir = dir;
    device_options.device = *device;
    device_options.image_size = size;
    device_options.batches = batches;
    device_options.batch_size = batch_size;
    device_options.workers = workers;
    return hearth::bench::compare_device_decoding(device_options);
  }

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
    if (plain_collate)
      options.collate = [](std::vector<data::Example> s) { return data::default_collate(std::move(s)); };
    data::DataLoader loader(dataset, options);
    int64_t images = 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto out_of_time = [&] {
      return device_options.max_seconds > 0 &&
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > device_options.max_seconds;
    };
    for (int64_t epoch = 0; images < batches * batch_size && !out_of_time(); ++epoch) {
      loader.set_epoch(epoch);
      for (data::Batch& b : loader) {
        images += b.at(data::field::kLabels).numel();
        if (images >= batches * batch_size || out_of_time()) break;
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-12lld %10lld %12.1f\n", static_cast<long long>(w), static_cast<long long>(images),
                static_cast<double>(images) / s);
  }
  return 0;
}

// One image at a time through every stage, as a worker runs them, each stage
// timed alone; ms per image. Before: the whole image decoded, then cropped and
// resized; the batch's samples kept until the last is built, then stacked
// into fresh memory. After: only the crop's region decoded (at a reduced
// scale where it allows), each sample copied into a reused batch block as
// soon as it is built.
enum Stage { kDecode, kResize, kFlip, kNormalize, kCollate, kStages };

static void profile_pass(bool after, const std::vector<data::EncodedImage>& images, int64_t size, int64_t batch_size,
                         int round, const std::shared_ptr<data::BatchBufferPool>& pool, double* seconds) {
  const data::RandomResizedCrop crop(size, {0.5, 1.0});
  const data::RandomHorizontalFlip flip;
  const data::Normalize normalize(data::kImageNetMean, data::kImageNetStd);
  using clock = std::chrono::steady_clock;
  auto timed = [&](Stage stage, auto&& fn) {
    const auto t0 = clock::now();
    auto out = fn();
    seconds[stage] += std::chrono::duration<double>(clock::now() - t0).count();
    return out;
  };
  const auto n = static_cast<int64_t>(images.size());
  std::vector<data::Example> held;
  std::optional<data::BatchAssembler> assembler;
  for (int64_t i = 0; i + batch_size <= n; ++i) {
    const data::EncodedImage& image = images[static_cast<size_t>(i)];
    data::SampleRng rng(1, round, i);
    Tensor resized;
    if (after) {
      const auto [h, w] = image.size();
      const data::CropBox box = crop.sample_box(h, w, rng);
      data::DecodedRegion region = timed(kDecode, [&] { return image.decode_region({box, size, size}); });
      resized = timed(kResize, [&] { return data::resize_bilinear(region.pixels, region.box, size, size); });
    } else {
      Tensor whole = timed(kDecode, [&] { return image.decode(); });
      const data::CropBox box = crop.sample_box(whole.size(0), whole.size(1), rng);
      resized = timed(kResize, [&] { return data::resize_bilinear(whole, box, size, size); });
    }
    Tensor flipped = timed(kFlip, [&] { return flip(resized, rng); });
    resized = Tensor();
    Tensor normalized = timed(kNormalize, [&] { return normalize(flipped, rng); });
    flipped = Tensor();
    Tensor label = Tensor::empty({}, DType::int64);
    *label.data<int64_t>() = 0;
    data::Example sample{{data::field::kPixelValues, normalized}, {data::field::kLabels, label}};
    normalized = Tensor();
    if (after) {
      if (!assembler) assembler.emplace(batch_size, [&](const Shape& s, DType d) { return pool->empty(s, d); });
      timed(kCollate, [&] {
        assembler->add(sample);
        return 0;
      });
      if (assembler->added() == batch_size) {
        timed(kCollate, [&] { return assembler->finish(); });
        assembler.reset();
      }
    } else {
      held.push_back(std::move(sample));
      if (static_cast<int64_t>(held.size()) == batch_size) {
        timed(kCollate, [&] { return data::default_collate(std::move(held)); });
        held.clear();
      }
    }
  }
}

static int run_stages(const std::string& dir, int64_t size, int64_t batch_size) {
  data::ImageFolder folder(dir);
  std::vector<data::EncodedImage> images;
  for (const data::ImageFile& f : folder.files()) images.emplace_back(data::read_file_bytes(f.path), f.path);
  const auto n = static_cast<int64_t>(images.size());
  HEARTH_CHECK(n >= batch_size, ValueError, "[bench] --stages needs at least one batch of images (", batch_size,
               "), found ", n);
  auto pool = data::BatchBufferPool::create(8);
  double before[kStages] = {}, after[kStages] = {};
  const int rounds = 3;
  for (int round = 0; round < rounds; ++round) {  // alternating, so drift affects both alike
    profile_pass(false, images, size, batch_size, round, pool, before);
    profile_pass(true, images, size, batch_size, round, pool, after);
  }
  const double count = static_cast<double>(rounds * (n / batch_size) * batch_size);
  std::printf("%lld images in %s, RandomResizedCrop(%lld, scale 0.5-1), batches of %lld, one thread\n",
              static_cast<long long>(n), dir.c_str(), static_cast<long long>(size), static_cast<long long>(batch_size));
  const char* names[kStages] = {"decode", "crop+resize", "flip", "normalise", "collate"};
  std::printf("%-12s %14s %14s %14s %14s\n", "stage", "before ms/img", "after ms/img", "before img/s", "after img/s");
  double total_before = 0, total_after = 0;
  for (int k = 0; k < kStages; ++k) {
    total_before += before[k];
    total_after += after[k];
    std::printf("%-12s %14.3f %14.3f %14.1f %14.1f\n", names[k], 1e3 * before[k] / count, 1e3 * after[k] / count,
                count / before[k], count / after[k]);
  }
  std::printf("%-12s %14.3f %14.3f %14.1f %14.1f\n", "all", 1e3 * total_before / count, 1e3 * total_after / count,
              count / total_before, count / total_after);
  return 0;
}
