// Image batches finished on a device (hearth/data/device_image_batches.h),
// without a GPU: the test device kind "testdev" (host memory) gets an image
// decoder of this file's own that decodes with libjpeg and carries the plans
// out with the CPU path's functions, so every batch must equal the CPU
// pipeline's bit for bit. That proves what the loader does around any device
// decoder: the workers' plans draw the CPU path's crops and flips, images the
// device does not take (PNG, grey, progressive) or fails on (a truncated
// file) are made on the host exactly as the CPU path makes them, a file that
// does not decode is replaced with its label, and a device without a decoder
// (nvJPEG missing) falls back to the CPU path with one line on the log.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "hearth/core/device_image_decoder.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "hearth/data/dataloader.h"
#include "hearth/data/image_decoder_choice.h"
#include "hearth/data/image_folder.h"
#include "hearth/data/image_io.h"
#include "hearth/data/image_plan.h"
#include "hearth/data/image_transforms.h"
#include "hearth/data/transforms.h"
#include "tests/support/jpeg_writer.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_device.h"
#include "tests/unit/data/image_fixtures.h"

namespace hearth::data {
namespace {

namespace fs = std::filesystem;
using hearth::testing::encode_jpeg;
using hearth::testing::JpegOptions;
using hearth::testing::ScopedEnv;
using hearth::testing::TempDir;
using hearth::testing::test_device;

// Decodes on the host with libjpeg, carries each image's resampling out with
// the CPU path's functions, and writes the batch into test-device memory in
// the format asked for. Counts what it decoded and what it left to the host.
class HostImageDecoder final : public DeviceImageDecoder {
 public:
  std::string description() const override { return "the test's host decoder"; }

  Tensor decode_batch(const std::vector<EncodedImageJob>& jobs, const ImageBatchFormat& format,
                      const HostImageFallback& fallback, const HostImageDecode& /*decode_on_host*/) override {
    const auto n = static_cast<int64_t>(jobs.size());
    const int64_t plane = format.height * format.width;
    Tensor host = Tensor::empty({n, 3, format.height, format.width}, DType::float32);
    for (int64_t i = 0; i < n; ++i) {
      const EncodedImageJob& job = jobs[static_cast<size_t>(i)];
      Tensor image;
      if (job.data != nullptr) {
        try {
          image = resample(decode_image(job.data, job.size, "job"), job, format);
          decoded_.fetch_add(1);
        } catch (const IoError&) {
          // As a device decoder meets a damaged file: not decoded.
        }
      }
      if (!image.defined()) {
        image = fallback(static_cast<size_t>(i));
        made_on_host_.fetch_add(1);
      }
      std::memcpy(host.data<float>() + i * 3 * plane, image.contiguous().data<float>(), 3 * plane * sizeof(float));
    }
    // The device's memory, in the batch's dtype and layout.
    const Tensor laid_out = host.to(format.dtype).contiguous(format.memory_format);
    Tensor out = Tensor::empty(laid_out.shape(), format.dtype, test_device(), format.memory_format);
    device_runtime(test_device().kind).copy_from_host(out.data_ptr(), laid_out.data_ptr(), laid_out.nbytes(), 0);
    return out;
  }

  int64_t decoded() const { return decoded_.load(); }
  int64_t made_on_host() const { return made_on_host_.load(); }

 private:
  // The job's resampling as a plan, carried out on the host; normalised with
  // the batch format's float mean and reciprocal, as a device would.
  static Tensor resample(const Tensor& decoded, const EncodedImageJob& job, const ImageBatchFormat& format) {
    const ImageResampling& r = job.resampling;
    ImagePlan p = ImagePlan::for_image(job.height, job.width);
    p.box = {static_cast<int64_t>(r.box_top), static_cast<int64_t>(r.box_left), static_cast<int64_t>(r.box_height),
             static_cast<int64_t>(r.box_width)};
    p.resized_height = r.resized_height;
    p.resized_width = r.resized_width;
    p.window_top = r.window_top;
    p.window_left = r.window_left;
    p.out_height = format.height;
    p.out_width = format.width;
    p.flip = r.flip;
    Tensor x = apply_image_plan(decoded, p);
    float* v = x.data<float>();
    const int64_t plane = format.height * format.width;
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t k = 0; k < plane; ++k)
        v[c * plane + k] = (v[c * plane + k] - format.mean[static_cast<size_t>(c)]) * format.inv_std[static_cast<size_t>(c)];
    return x;
  }

  std::atomic<int64_t> decoded_{0}, made_on_host_{0};
};

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

// Two classes of colour JPEGs of several sizes and subsamplings, and the
// files a device does not take: a PNG, a grey JPEG, a progressive one, and a
// JPEG whose data ends early (the CPU path replaces it with the next sample).
void write_image_folder(const std::string& root) {
  const JpegOptions kinds[] = {{2, 2}, {2, 1}, {1, 1}};
  for (int i = 0; i < 14; ++i) {
    const int w = 90 + 13 * i, h = 70 + 11 * (i % 5);
    write_file(root + "/class" + std::to_string(i % 2) + "/img" + std::to_string(i) + ".jpg",
               encode_jpeg(w, h, kinds[i % 3], static_cast<uint32_t>(i + 1)));
  }
  write_file(root + "/class0/grey.jpg", encode_jpeg(100, 80, {1, 1, true}, 31));
  write_file(root + "/class1/progressive.jpg", encode_jpeg(120, 96, {2, 2, false, true}, 32));
  fs::copy_file(hearth::testing::pets_dir() + "/red_circle_2.png", root + "/class1/circle.png");
  std::vector<uint8_t> truncated = encode_jpeg(110, 90, {}, 33);
  truncated.resize(truncated.size() * 2 / 3);
  write_file(root + "/class0/truncated.jpg", truncated);
}

std::shared_ptr<TransformDataset> train_set(const std::string& root, std::ostream* warnings) {
  auto folder = std::make_shared<ImageFolder>(root, ImageFolderOptions{.warnings = warnings});
  auto tf = std::make_shared<Compose>(std::vector<TransformPtr>{
      std::make_shared<RandomResizedCrop>(48, std::pair<double, double>{0.3, 1.0}),
      std::make_shared<RandomHorizontalFlip>(), std::make_shared<Normalize>(kImageNetMean, kImageNetStd)});
  return std::make_shared<TransformDataset>(folder, tf, 11);
}

std::shared_ptr<TransformDataset> eval_set(const std::string& root, std::ostream* warnings) {
  auto folder = std::make_shared<ImageFolder>(root, ImageFolderOptions{.warnings = warnings});
  auto tf = std::make_shared<Compose>(std::vector<TransformPtr>{
      std::make_shared<Resize>(56), std::make_shared<CenterCrop>(48),
      std::make_shared<Normalize>(kImageNetMean, kImageNetStd)});
  return std::make_shared<TransformDataset>(folder, tf, 11);
}

struct EpochBatches {
  std::vector<std::vector<float>> pixels;
  std::vector<std::vector<int64_t>> labels;
  std::vector<std::string> pixel_devices;
};

EpochBatches run_epoch(std::shared_ptr<const Dataset> ds, DataLoaderOptions o, int64_t epoch, bool* on_device) {
  DataLoader loader(std::move(ds), o);
  if (on_device != nullptr) *on_device = loader.finishes_images_on_device();
  loader.set_epoch(epoch);
  EpochBatches r;
  while (auto b = loader.next()) {
    const Tensor& px = b->at(field::kPixelValues);
    r.pixel_devices.push_back(px.device().str());
    r.pixels.push_back(px.to(DType::float32).cpu().to_vector<float>());
    r.labels.push_back(b->at(field::kLabels).to_vector<int64_t>());
  }
  return r;
}

class DeviceImageBatchesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    write_image_folder(dir_.path());
    decoder_ = std::make_shared<HostImageDecoder>();
    register_device_image_decoder(test_device().kind, [d = decoder_](int) {
      return DeviceImageDecoderChoice{d, {}};
    });
    set_image_decoder_log(&log_);
  }
  void TearDown() override {
    register_device_image_decoder(test_device().kind, nullptr);
    set_image_decoder_log(&std::cerr);
  }

  DataLoaderOptions options(Device device, int64_t workers = 2) const {
    DataLoaderOptions o;
    o.batch_size = 5;
    o.shuffle = true;
    o.seed = 3;
    o.num_workers = workers;
    o.device = device;
    return o;
  }

  TempDir dir_;
  std::shared_ptr<HostImageDecoder> decoder_;
  std::ostringstream log_, warnings_;
  ScopedEnv whole_decodes_{"HEARTH_IMAGE_FAST_DECODE", "0"};  // the plan's documented difference, off
  ScopedEnv auto_decoder_{"HEARTH_IMAGE_DECODER", "auto"};
};

TEST_F(DeviceImageBatchesTest, BatchesEqualTheCpuPipelineBitForBit) {
  for (int64_t epoch : {0, 1}) {
    std::ostringstream cpu_warnings;
    bool on_device = false;
    const EpochBatches cpu = run_epoch(train_set(dir_.path(), &cpu_warnings), options(Device()), epoch, nullptr);
    const EpochBatches dev = run_epoch(train_set(dir_.path(), &warnings_), options(test_device()), epoch, &on_device);
    ASSERT_TRUE(on_device);
    EXPECT_EQ(dev.pixel_devices.front(), test_device().str());
    EXPECT_EQ(cpu.pixel_devices.front(), "cpu");
    ASSERT_EQ(dev.pixels.size(), cpu.pixels.size());
    for (size_t b = 0; b < cpu.pixels.size(); ++b) {
      EXPECT_EQ(dev.labels[b], cpu.labels[b]) << "epoch " << epoch << ", batch " << b;
      EXPECT_TRUE(dev.pixels[b] == cpu.pixels[b]) << "epoch " << epoch << ", batch " << b;
    }
    // The truncated file is reported once, as the CPU path reports it.
    EXPECT_NE(warnings_.str().find("truncated.jpg"), std::string::npos) << warnings_.str();
  }
  // 14 colour JPEGs a pass went to the device; the grey, progressive and
  // PNG files and the truncated one were made on the host.
  EXPECT_EQ(decoder_->decoded(), 2 * 14);
  EXPECT_EQ(decoder_->made_on_host(), 2 * 4);
}

TEST_F(DeviceImageBatchesTest, EvaluationResizeAndCenterCropToo) {
  const EpochBatches cpu = run_epoch(eval_set(dir_.path(), &warnings_), options(Device(), 0), 0, nullptr);
  bool on_device = false;
  const EpochBatches dev = run_epoch(eval_set(dir_.path(), &warnings_), options(test_device(), 0), 0, &on_device);
  ASSERT_TRUE(on_device);
  EXPECT_EQ(dev.labels, cpu.labels);
  EXPECT_TRUE(dev.pixels == cpu.pixels);
}

TEST_F(DeviceImageBatchesTest, Bfloat16AndChannelsLastAsAsked) {
  DataLoaderOptions o = options(test_device(), 0);
  o.image_dtype = DType::bfloat16;
  o.image_memory_format = MemoryFormat::channels_last;
  DataLoader loader(eval_set(dir_.path(), &warnings_), o);
  DataLoader reference(eval_set(dir_.path(), &warnings_), options(Device(), 0));
  std::optional<Batch> b = loader.next(), r = reference.next();
  const Tensor& px = b->at(field::kPixelValues);
  EXPECT_EQ(px.dtype(), DType::bfloat16);
  EXPECT_TRUE(px.is_contiguous(MemoryFormat::channels_last));
  // The CPU batch rounded to bfloat16 the way autocast rounds it.
  EXPECT_EQ(px.cpu().to(DType::float32).to_vector<float>(),
            r->at(field::kPixelValues).to(DType::bfloat16).to(DType::float32).to_vector<float>());
}

TEST_F(DeviceImageBatchesTest, OneLineSaysWhichDecoderOnceForAllLoaders) {
  for (int i = 0; i < 3; ++i) DataLoader loader(train_set(dir_.path(), &warnings_), options(test_device()));
  EXPECT_EQ(log_.str(), "hearth: images are decoded on " + test_device().str() +
                            " by the test's host decoder (HEARTH_IMAGE_DECODER=cpu decodes them on the CPU)\n");
}

TEST_F(DeviceImageBatchesTest, WithoutNvjpegTheCpuPathGivesTheSameBatchesAndOneLineSaysWhy) {
  register_device_image_decoder(test_device().kind, [](int) {
    return DeviceImageDecoderChoice{nullptr, "nvJPEG could not be loaded (tried libnvjpeg.so.13; not found)"};
  });
  bool on_device = true;
  const EpochBatches fell_back = run_epoch(train_set(dir_.path(), &warnings_), options(test_device()), 0, &on_device);
  EXPECT_FALSE(on_device);
  EXPECT_EQ(fell_back.pixel_devices.front(), "cpu") << "built on the host, as without an accelerator";
  DataLoader again(train_set(dir_.path(), &warnings_), options(test_device()));  // no second line
  EXPECT_EQ(log_.str(), "hearth: images are decoded on the CPU, not on " + test_device().str() +
                            ": nvJPEG could not be loaded (tried libnvjpeg.so.13; not found) "
                            "(HEARTH_IMAGE_DECODER=cpu chooses the CPU without this note)\n");
  const EpochBatches cpu = run_epoch(train_set(dir_.path(), &warnings_), options(Device()), 0, nullptr);
  EXPECT_EQ(fell_back.labels, cpu.labels);
  EXPECT_TRUE(fell_back.pixels == cpu.pixels);
}

TEST_F(DeviceImageBatchesTest, NoDecoderForTheKindIsSaidLikewise) {
  register_device_image_decoder(test_device().kind, nullptr);
  DataLoader loader(train_set(dir_.path(), &warnings_), options(test_device()));
  EXPECT_FALSE(loader.finishes_images_on_device());
  EXPECT_NE(log_.str().find("this build has no image decoder for testdev devices"), std::string::npos) << log_.str();
}

TEST_F(DeviceImageBatchesTest, TheVariableChooses) {
  {
    ScopedEnv cpu("HEARTH_IMAGE_DECODER", "cpu");
    DataLoader loader(train_set(dir_.path(), &warnings_), options(test_device()));
    EXPECT_FALSE(loader.finishes_images_on_device());
    EXPECT_EQ(log_.str(), "") << "the CPU by request: nothing to say";
  }
  {
    ScopedEnv gpu("HEARTH_IMAGE_DECODER", "gpu");
    DataLoader loader(train_set(dir_.path(), &warnings_), options(test_device()));
    EXPECT_TRUE(loader.finishes_images_on_device());
    // Batches for the CPU cannot be decoded on a device.
    EXPECT_THROW(DataLoader(train_set(dir_.path(), &warnings_), options(Device())), DeviceError);
    register_device_image_decoder(test_device().kind, [](int) {
      return DeviceImageDecoderChoice{nullptr, "nvJPEG could not be loaded"};
    });
    try {
      DataLoader refused(train_set(dir_.path(), &warnings_), options(test_device()));
      ADD_FAILURE() << "HEARTH_IMAGE_DECODER=gpu without a decoder must fail";
    } catch (const DeviceError& e) {
      EXPECT_NE(std::string(e.what()).find("nvJPEG could not be loaded"), std::string::npos) << e.what();
    }
  }
  ScopedEnv typo("HEARTH_IMAGE_DECODER", "nvjpeg");
  EXPECT_THROW(DataLoader(train_set(dir_.path(), &warnings_), options(test_device())), ValueError);
}

TEST_F(DeviceImageBatchesTest, PipelinesThatCannotBePlannedAndCustomCollatesStayOnTheHost) {
  auto folder = std::make_shared<ImageFolder>(dir_.path(), ImageFolderOptions{.warnings = &warnings_});
  auto random_crop = std::make_shared<Compose>(
      std::vector<TransformPtr>{std::make_shared<Resize>(40), std::make_shared<RandomCrop>(32)});
  DataLoader unplanned(std::make_shared<TransformDataset>(folder, random_crop, 1), options(test_device()));
  EXPECT_FALSE(unplanned.finishes_images_on_device());
  DataLoaderOptions custom = options(test_device());
  custom.collate = [](std::vector<Example> s) { return default_collate(std::move(s)); };
  DataLoader collated(train_set(dir_.path(), &warnings_), custom);
  EXPECT_FALSE(collated.finishes_images_on_device());
  EXPECT_EQ(log_.str(), "") << "neither asked for a device decoder";
}

}  // namespace
}  // namespace hearth::data
