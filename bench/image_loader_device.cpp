#include "bench/image_loader_device.h"

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "hearth/core/device_image_decoder.h"
#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "hearth/data/dataloader.h"
#include "hearth/data/image_folder.h"
#include "hearth/data/image_io.h"
#include "hearth/data/image_plan.h"
#include "hearth/data/image_transforms.h"
#include "hearth/data/transforms.h"

namespace hearth::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::shared_ptr<data::TransformDataset> make_dataset(const DeviceLoaderOptions& o) {
  auto folder = std::make_shared<data::ImageFolder>(o.dir);
  for (const data::ImageFile& f : folder->files()) (void)data::read_file_bytes(f.path);  // into the page cache
  auto normalize = std::make_shared<data::Normalize>(data::kImageNetMean, data::kImageNetStd);
  data::TransformPtr tf;
  if (o.eval)
    tf = std::make_shared<data::Compose>(std::vector<data::TransformPtr>{
        std::make_shared<data::Resize>(o.image_size * 256 / 224), std::make_shared<data::CenterCrop>(o.image_size),
        normalize});
  else
    tf = std::make_shared<data::Compose>(std::vector<data::TransformPtr>{
        std::make_shared<data::RandomResizedCrop>(o.image_size, std::pair<double, double>{0.5, 1.0}),
        std::make_shared<data::RandomHorizontalFlip>(), normalize});
  return std::make_shared<data::TransformDataset>(folder, tf, 0);
}

// images/s of one loader run, batches complete on the device.
double measure(const std::shared_ptr<data::TransformDataset>& ds, const DeviceLoaderOptions& o, int64_t workers,
               bool on_device, int64_t* images_out) {
  ::setenv("HEARTH_IMAGE_DECODER", on_device ? "gpu" : "cpu", 1);
  data::DataLoaderOptions lo;
  lo.batch_size = o.batch_size;
  lo.shuffle = true;
  lo.seed = 1;
  lo.num_workers = workers;
  lo.pin_memory = true;
  lo.device = o.device;
  lo.image_dtype = o.bf16_channels_last ? DType::bfloat16 : DType::float32;
  lo.image_memory_format = o.bf16_channels_last ? MemoryFormat::channels_last : MemoryFormat::contiguous;
  data::DataLoader loader(ds, lo);
  HEARTH_CHECK(loader.finishes_images_on_device() == on_device, ValueError, "[bench] the loader ",
               on_device ? "does not decode on " : "decodes on ", o.device.str());
  DeviceRuntime& rt = device_runtime(o.device.kind);
  const int64_t want = o.batches * o.batch_size;
  int64_t images = 0;
  Tensor last;
  const auto t0 = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  for (int64_t epoch = 0; images < want; ++epoch) {
    loader.set_epoch(epoch);
    for (data::Batch& b : loader) {
      Tensor px = b.at(data::field::kPixelValues);
      // Built on the host: to the device as the Trainer takes it there.
      if (!on_device) {
        px = px.to(o.device);
        if (o.bf16_channels_last) px = px.to(DType::bfloat16).contiguous(MemoryFormat::channels_last);
      }
      last = px;
      images += b.at(data::field::kLabels).numel();
      if (images >= want || (o.max_seconds > 0 && seconds() > o.max_seconds)) break;
    }
    if (o.max_seconds > 0 && seconds() > o.max_seconds) break;
  }
  rt.synchronize(o.device.index);
  *images_out = images;
  return static_cast<double>(images) / seconds();
}

}  // namespace

int compare_device_decoding(const DeviceLoaderOptions& o) {
  check_device_usable(o.device);
  auto ds = make_dataset(o);
  const DeviceImageDecoderChoice decoder = device_image_decoder(o.device);
  HEARTH_CHECK(decoder.decoder != nullptr, DeviceError, "[bench] ", o.device.str(), " has no image decoder: ",
               decoder.unavailable_reason);
  std::printf("%lld images in %s; %s, %lldx%lld, batches of %lld, %s on %s\n",
              static_cast<long long>(ds->size()), o.dir.c_str(),
              o.eval ? "Resize + CenterCrop + normalise" : "RandomResizedCrop(scale 0.5-1) + flip + normalise",
              static_cast<long long>(o.image_size), static_cast<long long>(o.image_size),
              static_cast<long long>(o.batch_size), o.bf16_channels_last ? "bfloat16 NHWC" : "float32 NCHW",
              o.device.str().c_str());
  std::printf("device decoder: %s\n", decoder.decoder->description().c_str());
  std::printf("%-12s %16s %16s %8s\n", "num_workers", "cpu decode img/s", "gpu decode img/s", "gpu/cpu");
  for (int64_t w : o.workers) {
    int64_t n_cpu = 0, n_gpu = 0;
    const double cpu = o.device_decoding_only ? 0.0 : measure(ds, o, w, false, &n_cpu);
    const double gpu = measure(ds, o, w, true, &n_gpu);
    std::printf("%-12lld %16.1f %16.1f %8.2f\n", static_cast<long long>(w), cpu, gpu, cpu > 0 ? gpu / cpu : 0.0);
    std::fflush(stdout);
  }
  ::unsetenv("HEARTH_IMAGE_DECODER");
  return 0;
}

int device_decoding_stages(const DeviceLoaderOptions& o) {
  check_device_usable(o.device);
  auto ds = make_dataset(o);
  const DeviceImageDecoderChoice choice = device_image_decoder(o.device);
  HEARTH_CHECK(choice.decoder != nullptr, DeviceError, "[bench] ", o.device.str(), " has no image decoder: ",
               choice.unavailable_reason);
  const int64_t n = ds->size() / o.batch_size * o.batch_size;
  HEARTH_CHECK(n > 0, ValueError, "[bench] --stages needs at least one batch of images (", o.batch_size, ")");
  const DType dtype = o.bf16_channels_last ? DType::bfloat16 : DType::float32;
  const MemoryFormat fmt = o.bf16_channels_last ? MemoryFormat::channels_last : MemoryFormat::contiguous;
  double plan_s = 0, device_s = 0;
  const int rounds = 3;
  for (int round = 0; round < rounds + 1; ++round) {  // round 0 warms up (buffers, plans, page cache)
    for (int64_t first = 0; first < n; first += o.batch_size) {
      std::vector<data::PlannedSample> samples;
      auto t0 = Clock::now();
      for (int64_t i = first; i < first + o.batch_size; ++i) samples.push_back(ds->get_planned(i, round));
      auto t1 = Clock::now();
      std::vector<EncodedImageJob> jobs(samples.size());
      for (size_t k = 0; k < samples.size(); ++k) {
        const data::PlannedSample& s = samples[k];
        if (s.image.is_plain_color_jpeg()) {
          jobs[k].data = s.image.bytes().data();
          jobs[k].size = s.image.bytes().size();
        }
        jobs[k].height = s.plan.image_height;
        jobs[k].width = s.plan.image_width;
        jobs[k].resampling = s.plan.resampling();
      }
      const Tensor batch = choice.decoder->decode_batch(
          jobs, data::image_batch_format(samples[0].plan, dtype, fmt),
          [&](size_t slot) { return ds->make_on_host(samples[slot]).at(data::field::kPixelValues); }, {});
      auto t2 = Clock::now();
      if (round > 0) {
        plan_s += std::chrono::duration<double>(t1 - t0).count();
        device_s += std::chrono::duration<double>(t2 - t1).count();
      }
    }
  }
  const double count = static_cast<double>(rounds * n);
  std::printf("%lld images in %s, batches of %lld on %s, one thread (%s)\n", static_cast<long long>(n), o.dir.c_str(),
              static_cast<long long>(o.batch_size), o.device.str().c_str(), choice.decoder->description().c_str());
  std::printf("%-34s %10s %12s\n", "stage", "ms/img", "images/s");
  std::printf("%-34s %10.4f %12.1f\n", "read file + header + plan (worker)", 1e3 * plan_s / count, count / plan_s);
  std::printf("%-34s %10.4f %12.1f\n", "decode + resample batch (device)", 1e3 * device_s / count, count / device_s);
  std::printf("%-34s %10.4f %12.1f\n", "both, one after the other", 1e3 * (plan_s + device_s) / count,
              count / (plan_s + device_s));
  return 0;
}

}  // namespace hearth::bench
