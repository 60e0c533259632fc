// The GPU image pipeline (nvJPEG, then one resampling kernel per batch),
// through the DataLoader as cv_example uses it, against the CPU pipeline
// (PIL's reference path) on the same files, seeds and epochs:
//   - JPEGs whose every decoder gives the same pixels (8x8 blocks of one
//     grey, 4:4:4 or 4:2:0, quality 100): the kernel must match the CPU
//     path's resize, crop, flip and normalisation to float rounding;
//   - blocks of colour: the channels stay in order (within the decoders'
//     one-step colour conversion differences);
//   - photograph-like JPEGs (bench/synthetic_jpegs): within the documented
//     decoder differences (IDCT, chroma upsampling), printed;
//   - files the device does not take (PNG, grey, progressive): the CPU
//     path's values exactly;
//   - the GPU's JPEG engines against the GPU-hybrid decoder, when both are
//     present; and a few Trainer steps on GPU-decoded bfloat16 NHWC batches.
// Each test skips on a machine without a GPU or without nvJPEG.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/synthetic_jpegs.h"
#include "hearth/core/device_image_decoder.h"
#include "hearth/data/dataloader.h"
#include "hearth/data/image_decoder_choice.h"
#include "hearth/data/image_folder.h"
#include "hearth/data/image_transforms.h"
#include "hearth/data/transforms.h"
#include "hearth/nn/models/resnet.h"
#include "hearth/nn/module.h"
#include "hearth/train/trainer.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/support/jpeg_writer.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"

namespace hearth::gpu_testing {
namespace {

namespace fs = std::filesystem;
using namespace hearth::data;
using hearth::testing::encode_jpeg;
using hearth::testing::encode_jpeg_pixels;
using hearth::testing::JpegOptions;
using hearth::testing::ScopedEnv;
using hearth::testing::TempDir;

#define REQUIRE_CUDA_IMAGE_DECODER()                                                              \
  do {                                                                                            \
    HEARTH_REQUIRE_CUDA();                                                                        \
    const DeviceImageDecoderChoice c_ = device_image_decoder(cuda0());                            \
    if (!c_.decoder) GTEST_SKIP() << "no image decoder on cuda:0: " << c_.unavailable_reason;     \
  } while (0)

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

// Blocks of one colour (grey: R = G = B) as large as a chroma block covers
// (16x16 pixels, 32 wide for 4:1:1) and aligned with them, so each 8x8 block
// of every component is constant: any correct decoder gives back exactly
// the same planes.
std::vector<uint8_t> blocky_jpeg(int width, int height, bool grey, const JpegOptions& o, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(16, 240);
  const int block_w = std::max(16, 8 * o.h_samp), block_h = std::max(16, 8 * o.v_samp);
  const int bw = (width + block_w - 1) / block_w, bh = (height + block_h - 1) / block_h;
  std::vector<uint8_t> colours(static_cast<size_t>(bw) * bh * 3);
  for (size_t b = 0; b < colours.size(); b += 3) {
    const int v = value(rng);
    colours[b] = static_cast<uint8_t>(v);
    colours[b + 1] = static_cast<uint8_t>(grey ? v : value(rng));
    colours[b + 2] = static_cast<uint8_t>(grey ? v : value(rng));
  }
  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < 3; ++c)
        rgb[(static_cast<size_t>(y) * width + x) * 3 + c] =
            colours[(static_cast<size_t>(y / block_h) * bw + x / block_w) * 3 + c];
  return encode_jpeg_pixels(rgb, width, height, o);
}

// cv_example's pipelines.
TransformPtr train_transform(int64_t size) {
  return std::make_shared<Compose>(std::vector<TransformPtr>{
      std::make_shared<RandomResizedCrop>(size, std::pair<double, double>{0.5, 1.0}),
      std::make_shared<RandomHorizontalFlip>(), std::make_shared<Normalize>(kImageNetMean, kImageNetStd)});
}

TransformPtr eval_transform(int64_t resize, int64_t crop) {
  return std::make_shared<Compose>(std::vector<TransformPtr>{
      std::make_shared<Resize>(resize), std::make_shared<CenterCrop>(crop),
      std::make_shared<Normalize>(kImageNetMean, kImageNetStd)});
}

std::shared_ptr<TransformDataset> train_set(const std::string& root, int64_t size) {
  return std::make_shared<TransformDataset>(std::make_shared<ImageFolder>(root), train_transform(size), 5);
}

std::shared_ptr<TransformDataset> eval_set(const std::string& root, int64_t resize, int64_t crop) {
  return std::make_shared<TransformDataset>(std::make_shared<ImageFolder>(root), eval_transform(resize, crop), 5);
}

struct Epoch {
  std::vector<std::vector<float>> pixels;  // per batch, NCHW float32
  std::vector<std::vector<int64_t>> labels;
  int64_t height = 0, width = 0;
  bool on_device = false;
};

Epoch run_epoch(std::shared_ptr<const Dataset> ds, Device device, DType dtype, MemoryFormat fmt, int64_t epoch) {
  DataLoaderOptions o;
  o.batch_size = 8;
  o.shuffle = true;
  o.seed = 2;
  o.num_workers = 2;
  o.pin_memory = !device.is_cpu();
  o.device = device;
  o.image_dtype = dtype;
  o.image_memory_format = fmt;
  DataLoader loader(std::move(ds), o);
  Epoch e;
  e.on_device = loader.finishes_images_on_device();
  loader.set_epoch(epoch);
  while (auto b = loader.next()) {
    const Tensor& px = b->at(field::kPixelValues);
    EXPECT_EQ(px.dtype(), e.on_device ? dtype : DType::float32);
    if (e.on_device) {
      EXPECT_TRUE(px.is_contiguous(fmt)) << "layout " << memory_format_name(fmt);
    }
    e.height = px.size(2);
    e.width = px.size(3);
    e.pixels.push_back(px.to(DType::float32).cpu().to_vector<float>());
    e.labels.push_back(b->at(field::kLabels).to_vector<int64_t>());
  }
  return e;
}

// The GPU epoch against the CPU epoch, in 8-bit levels (the normalised
// difference times the channel's standard deviation times 255).
struct Levels {
  double mean = 0, max = 0;
};
Levels compare(const Epoch& gpu, const Epoch& cpu) {
  EXPECT_TRUE(gpu.on_device) << "the GPU run did not decode on the GPU";
  EXPECT_EQ(gpu.labels, cpu.labels);
  Levels l;
  double total = 0;
  size_t count = 0;
  const size_t plane = static_cast<size_t>(cpu.height * cpu.width);
  for (size_t b = 0; b < std::min(gpu.pixels.size(), cpu.pixels.size()); ++b) {
    EXPECT_EQ(gpu.pixels[b].size(), cpu.pixels[b].size());
    for (size_t i = 0; i < std::min(gpu.pixels[b].size(), cpu.pixels[b].size()); ++i) {
      const double levels =
          std::abs(static_cast<double>(gpu.pixels[b][i]) - cpu.pixels[b][i]) * kImageNetStd[(i / plane) % 3] * 255.0;
      total += levels;
      l.max = std::max(l.max, levels);
      ++count;
    }
  }
  l.mean = count > 0 ? total / static_cast<double>(count) : 0.0;
  return l;
}

class ImageDecodingCuda : public ::testing::Test {
 protected:
  // Whole decodes on the CPU path: its reduced-scale decoding is a
  // difference of its own (documented), not the GPU's.
  ScopedEnv whole_{"HEARTH_IMAGE_FAST_DECODE", "0"};
  ScopedEnv gpu_{"HEARTH_IMAGE_DECODER", "auto"};
  TempDir dir_;
};

TEST_F(ImageDecodingCuda, WhereDecodersAgreeTheKernelIsTheCpuPathToFloatRounding) {
  REQUIRE_CUDA_IMAGE_DECODER();
  const int sizes[][2] = {{500, 375}, {333, 250}, {640, 480}, {120, 90}, {375, 500}, {96, 300}};
  int k = 0;
  for (const auto& [w, h] : sizes)
    for (const JpegOptions& o : {JpegOptions{2, 2, false, false, 100}, JpegOptions{1, 1, false, false, 100}}) {
      write_file(dir_.path() + "/c" + std::to_string(k % 2) + "/i" + std::to_string(k) + ".jpg",
                 blocky_jpeg(w, h, /*grey=*/true, o, static_cast<uint32_t>(k)));
      ++k;
    }
  const std::vector<std::pair<std::string, std::function<std::shared_ptr<TransformDataset>()>>> pipelines = {
      {"RandomResizedCrop(224)", [&] { return train_set(dir_.path(), 224); }},
      {"Resize(256), CenterCrop(224)", [&] { return eval_set(dir_.path(), 256, 224); }},
      {"Resize(64), CenterCrop(100) (padded)", [&] { return eval_set(dir_.path(), 64, 100); }},
      // Downscales beyond the resampling's table of taps: weights per pixel.
      {"Resize(8), CenterCrop(8) (taps per pixel)", [&] { return eval_set(dir_.path(), 8, 8); }}};
  for (const auto& [name, make] : pipelines)
    for (int64_t epoch : {0, 1}) {
      const Epoch cpu = run_epoch(make(), Device(), DType::float32, MemoryFormat::contiguous, epoch);
      const Levels f32 = compare(run_epoch(make(), cuda0(), DType::float32, MemoryFormat::contiguous, epoch), cpu);
      EXPECT_LT(f32.max, 1e-3) << name << ", float32 NCHW: max " << f32.max << " levels";
      const Levels bf16 =
          compare(run_epoch(make(), cuda0(), DType::bfloat16, MemoryFormat::channels_last, epoch), cpu);
      // bfloat16 keeps 8 significant bits: half a unit of its last place.
      EXPECT_LT(bf16.max, 0.6) << name << ", bfloat16 NHWC: max " << bf16.max << " levels";
      std::printf("[ image pipeline ] %-40s epoch %lld: float32 max %.2g levels, bfloat16 NHWC max %.2g\n", name.c_str(),
                  static_cast<long long>(epoch), f32.max, bf16.max);
    }
}

// Constant 8x8 blocks in every plane decode to the same planes in any
// decoder; the colour conversion then makes libjpeg's pixels exactly (its
// chroma upsampling filters and fixed-point arithmetic), at every
// subsampling, odd sizes and chroma planes of one or two columns included.
TEST_F(ImageDecodingCuda, ColourBlocksAreTheCpuPathsToFloatRounding) {
  REQUIRE_CUDA_IMAGE_DECODER();
  struct Sampling {
    const char* name;
    int h, v;
  };
  for (const Sampling& sampling : {Sampling{"4:4:4", 1, 1}, Sampling{"4:2:0", 2, 2}, Sampling{"4:2:2", 2, 1},
                                   Sampling{"4:4:0", 1, 2}, Sampling{"4:1:1", 4, 1}}) {
    TempDir dir;
    const int sizes[][2] = {{320, 240}, {333, 251}, {161, 97}, {4, 300}, {3, 37}, {240, 320}};
    int k = 0;
    for (const auto& [w, h] : sizes) {
      write_file(dir.path() + "/c" + std::to_string(k % 2) + "/i" + std::to_string(k) + ".jpg",
                 blocky_jpeg(w, h, /*grey=*/false, {sampling.h, sampling.v, false, false, 100},
                             static_cast<uint32_t>(k + 7 * sampling.h + 3 * sampling.v)));
      ++k;
    }
    for (const auto& make : {std::function<std::shared_ptr<TransformDataset>()>([&] { return train_set(dir.path(), 64); }),
                             std::function<std::shared_ptr<TransformDataset>()>(
                                 [&] { return eval_set(dir.path(), 72, 64); })}) {
      const Epoch cpu = run_epoch(make(), Device(), DType::float32, MemoryFormat::contiguous, 0);
      const Levels l = compare(run_epoch(make(), cuda0(), DType::float32, MemoryFormat::contiguous, 0), cpu);
      std::printf("[ image pipeline ] colour blocks %s: mean %.2g, max %.2g levels\n", sampling.name, l.mean, l.max);
      EXPECT_LT(l.max, 1e-3) << sampling.name;
    }
  }
}

TEST_F(ImageDecodingCuda, PhotographsAgreeWithinTheDecodersDifferences) {
  REQUIRE_CUDA_IMAGE_DECODER();
  hearth::bench::write_synthetic_jpegs(dir_.path(), 48, 500, 375, 4);
  for (int64_t epoch : {0, 1}) {
    const Epoch cpu = run_epoch(train_set(dir_.path(), 224), Device(), DType::float32, MemoryFormat::contiguous, epoch);
    const Levels train = compare(
        run_epoch(train_set(dir_.path(), 224), cuda0(), DType::float32, MemoryFormat::contiguous, epoch), cpu);
    const Epoch cpu_eval =
        run_epoch(eval_set(dir_.path(), 256, 224), Device(), DType::float32, MemoryFormat::contiguous, epoch);
    const Levels eval = compare(
        run_epoch(eval_set(dir_.path(), 256, 224), cuda0(), DType::float32, MemoryFormat::contiguous, epoch), cpu_eval);
    std::printf("[ image pipeline ] 500x375 photographs, epoch %lld: train mean %.3f max %.2f levels, eval mean %.3f "
                "max %.2f levels (%s)\n",
                static_cast<long long>(epoch), train.mean, train.max, eval.mean, eval.max,
                device_image_decoder(cuda0()).decoder->description().c_str());
    // nvJPEG's IDCT and chroma upsampling are not libjpeg's: a fraction of a
    // level on average after resizing, a few levels at sharp colour edges.
    EXPECT_LT(train.mean, 1.5);
    EXPECT_LT(eval.mean, 1.5);
    EXPECT_LT(train.max, 48);
    EXPECT_LT(eval.max, 48);
  }
}

// The host's share of a batch is decoded by the CPU path's own decoder (the
// region, and the reduced scale, it would decode) and resampled by the
// device's kernel: every image sent to the host comes out as the CPU path's
// to float rounding, photographs and reduced scales included, where the
// engines differ from libjpeg by their IDCT.
TEST_F(ImageDecodingCuda, ImagesDecodedOnTheHostAreTheCpuPathsToFloatRounding) {
  REQUIRE_CUDA_IMAGE_DECODER();
  TempDir large;
  hearth::bench::write_synthetic_jpegs(dir_.path(), 24, 500, 375, 3);
  hearth::bench::write_synthetic_jpegs(large.path(), 12, 1000, 750, 2);  // crops of 2x the output: half scale
  ScopedEnv all("HEARTH_IMAGE_HOST_DECODING", "1");
  ScopedEnv threads("HEARTH_IMAGE_HOST_THREADS", "3");
  for (const char* fast : {"0", "1"})
    for (const std::string& root : {dir_.path(), large.path()}) {
      ScopedEnv decode_fast("HEARTH_IMAGE_FAST_DECODE", fast);
      forget_device_image_decoders(cuda0().kind);
      const std::vector<std::pair<std::string, std::function<std::shared_ptr<TransformDataset>()>>> pipelines = {
          {"RandomResizedCrop(224)", [&] { return train_set(root, 224); }},
          {"Resize(256), CenterCrop(224)", [&] { return eval_set(root, 256, 224); }}};
      for (const auto& [name, make] : pipelines) {
        const Epoch cpu = run_epoch(make(), Device(), DType::float32, MemoryFormat::contiguous, 1);
        const Levels l = compare(run_epoch(make(), cuda0(), DType::float32, MemoryFormat::contiguous, 1), cpu);
        std::printf("[ image pipeline ] decoded on the host, %s, %s, fast decode %s: max %.2g levels\n",
                    root == dir_.path() ? "500x375" : "1000x750", name.c_str(), fast, l.max);
        EXPECT_LT(l.max, 1e-3) << name << ", fast decode " << fast;
      }
    }
  // Half of each batch on the host: the batch is whole, within the engines'
  // differences from the CPU path.
  {
    ScopedEnv half("HEARTH_IMAGE_HOST_DECODING", "0.5");
    forget_device_image_decoders(cuda0().kind);
    const Epoch cpu = run_epoch(train_set(dir_.path(), 224), Device(), DType::float32, MemoryFormat::contiguous, 0);
    const Levels l =
        compare(run_epoch(train_set(dir_.path(), 224), cuda0(), DType::bfloat16, MemoryFormat::channels_last, 0), cpu);
    EXPECT_LT(l.mean, 1.5);
    EXPECT_LT(l.max, 48);
  }
  forget_device_image_decoders(cuda0().kind);
}

TEST_F(ImageDecodingCuda, FilesTheDeviceDoesNotTakeAreTheCpuPathsExactly) {
  REQUIRE_CUDA_IMAGE_DECODER();
  write_file(dir_.path() + "/a/grey.jpg", encode_jpeg(300, 200, {1, 1, true}, 3));
  write_file(dir_.path() + "/a/progressive.jpg", encode_jpeg(260, 300, {2, 2, false, true}, 4));
  write_file(dir_.path() + "/b/progressive2.jpg", encode_jpeg(410, 280, {2, 1, false, true}, 5));
  write_file(dir_.path() + "/b/grey2.jpg", encode_jpeg(200, 200, {1, 1, true}, 6));
  for (int64_t epoch : {0, 1}) {
    const Epoch cpu = run_epoch(train_set(dir_.path(), 64), Device(), DType::float32, MemoryFormat::contiguous, epoch);
    const Levels l = compare(
        run_epoch(train_set(dir_.path(), 64), cuda0(), DType::float32, MemoryFormat::channels_last, epoch), cpu);
    EXPECT_EQ(l.max, 0.0) << "made on the host by the CPU path, copied as they are";
  }
}

TEST_F(ImageDecodingCuda, HardwareEnginesAndHybridDecoderAgree) {
  REQUIRE_CUDA_IMAGE_DECODER();
  hearth::bench::write_synthetic_jpegs(dir_.path(), 32, 500, 375, 2);
  const Epoch cpu = run_epoch(train_set(dir_.path(), 224), Device(), DType::float32, MemoryFormat::contiguous, 0);
  std::vector<Epoch> runs;
  for (const char* backend : {"hardware", "hybrid"}) {
    ScopedEnv only("HEARTH_NVJPEG_BACKEND", backend);
    forget_device_image_decoders(cuda0().kind);
    const DeviceImageDecoderChoice c = device_image_decoder(cuda0());
    if (!c.decoder) {
      forget_device_image_decoders(cuda0().kind);
      GTEST_SKIP() << "no " << backend << " decoder here: " << c.unavailable_reason;
    }
    runs.push_back(run_epoch(train_set(dir_.path(), 224), cuda0(), DType::float32, MemoryFormat::contiguous, 0));
    const Levels l = compare(runs.back(), cpu);
    std::printf("[ image pipeline ] %s (%s): mean %.3f, max %.2f levels from the CPU path\n", backend,
                c.decoder->description().c_str(), l.mean, l.max);
    EXPECT_LT(l.mean, 1.5) << backend;
  }
  forget_device_image_decoders(cuda0().kind);
  const Levels between = compare(runs[0], runs[1]);
  std::printf("[ image pipeline ] hardware against hybrid: mean %.3f, max %.2f levels\n", between.mean, between.max);
  EXPECT_LT(between.mean, 1.5);
}

TEST_F(ImageDecodingCuda, WithoutNvjpegTheCpuDecodesAndOneLineSaysWhy) {
  HEARTH_REQUIRE_CUDA();
  hearth::bench::write_synthetic_jpegs(dir_.path(), 12, 200, 150, 2);
  std::ostringstream log;
  set_image_decoder_log(&log);
  {
    ScopedEnv missing("HEARTH_NVJPEG_LIBRARY", "/nowhere/libnvjpeg.so.13");
    forget_device_image_decoders(cuda0().kind);
    const Epoch fell_back = run_epoch(train_set(dir_.path(), 64), cuda0(), DType::float32, MemoryFormat::contiguous, 0);
    EXPECT_FALSE(fell_back.on_device);
    const Epoch cpu = run_epoch(train_set(dir_.path(), 64), Device(), DType::float32, MemoryFormat::contiguous, 0);
    EXPECT_EQ(fell_back.labels, cpu.labels);
    EXPECT_TRUE(fell_back.pixels == cpu.pixels) << "the CPU path's batches, unchanged";
  }
  forget_device_image_decoders(cuda0().kind);
  set_image_decoder_log(&std::cerr);
  const std::string said = log.str();
  EXPECT_NE(said.find("hearth: images are decoded on the CPU, not on cuda:0: nvJPEG could not be loaded (tried "
                      "/nowhere/libnvjpeg.so.13"),
            std::string::npos)
      << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
}

TEST_F(ImageDecodingCuda, TrainerStepsOnGpuDecodedBatches) {
  REQUIRE_CUDA_IMAGE_DECODER();
  hearth::bench::write_synthetic_jpegs(dir_.path(), 40, 500, 375, 4);
  auto folder = std::make_shared<ImageFolder>(dir_.path());
  auto [train_files, eval_files] = folder->split(0.8, 1);
  auto train = std::make_shared<TransformDataset>(train_files, train_transform(96), 1);
  auto eval = std::make_shared<TransformDataset>(eval_files, eval_transform(110, 96), 1);
  nn::models::ResNetConfig tiny;
  tiny.block = nn::models::ResNetBlock::basic;
  tiny.layers = {1, 1, 1, 1};
  tiny.base_width = 8;
  tiny.num_classes = 4;
  auto model = std::make_shared<nn::models::ResNet>(tiny);
  train::TrainingArguments args;
  args.output_dir = dir_.file("run");
  args.per_device_train_batch_size = 8;
  args.per_device_eval_batch_size = 8;
  args.max_steps = 6;
  args.dataloader_num_workers = 2;
  args.eval_strategy = "steps";
  args.eval_steps = 3;
  args.save_strategy = "no";
  args.report_to = {"none"};
  train::set_training_argument(args, "precision", "bf16-mixed", "precision");
  train::TrainerOptions topts;
  topts.console = nullptr;
  train::Trainer trainer(model, args, train, eval, {}, topts);
  nn::to_channels_last(*model);
  const train::TrainOutput out = trainer.train();
  EXPECT_EQ(out.global_step, 6);
  EXPECT_TRUE(std::isfinite(out.training_loss)) << out.training_loss;
  const train::Metrics m = trainer.evaluate();
  EXPECT_TRUE(m.count("eval_accuracy") == 1);
}

}  // namespace
}  // namespace hearth::gpu_testing
