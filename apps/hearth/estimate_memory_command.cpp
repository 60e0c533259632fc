// `hearth estimate-memory`: the device memory a reference model's training
// step needs at a batch size and precision, from a measured step on the CPU
// scaled by batch (apps/common/memory_estimate.h says how). Compare with the
// "peak mem" column of `hearth bench` on the accelerator.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "apps/common/memory_estimate.h"
#include "apps/common/user_config.h"
#include "apps/hearth/bench_workloads.h"
#include "apps/hearth/commands.h"
#include "apps/hearth/tasks.h"
#include "hearth/core/errors.h"

namespace hearth::cli {
namespace {

struct EstimateOptions {
  std::string model;
  int64_t batch_size = 0;
  std::string precision = "fp32";
  int64_t image_size = 224, seq_len = 128;
};

std::string size_text(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024));
  return buf;
}

void row(const char* label, double bytes, const std::string& note = "") {
  std::printf("  %-22s %12s   %s\n", label, size_text(bytes).c_str(), note.c_str());
}

int run_estimate(const EstimateOptions& o) {
  const auto& models = bench_model_names();
  if (std::find(models.begin(), models.end(), o.model) == models.end())
    throw UsageError("--model: expected " + quoted_choices(models) + ", got \"" + o.model + "\"");
  const auto& precisions = user_config_precisions();
  if (std::find(precisions.begin(), precisions.end(), o.precision) == precisions.end())
    throw UsageError("--precision: expected " + quoted_choices(precisions) + ", got \"" + o.precision + "\"");
  const int64_t batch = o.batch_size > 0 ? o.batch_size : reference_batch_size(o.model);
  std::cout << "hearth estimate-memory: measuring one training step of " << o.model
            << " on the CPU at batches 2 and 4...\n";
  std::cout.flush();
  std::unique_ptr<Workload> w = make_workload(o.model, {2, o.image_size, o.seq_len}, Device(), "fp32");
  w->set_training(true);
  MemoryEstimate e = estimate_training_memory(w->memory_probe(), batch, o.precision);

  const bool bert = o.model == "bert-base";
  std::printf("%s, batch %lld, %s, %s%s\n", o.model.c_str(), static_cast<long long>(batch), o.precision.c_str(),
              bert ? "AdamW" : "SGD (momentum 0.9)",
              bert ? (", sequence length " + std::to_string(o.seq_len)).c_str()
                   : (", images " + std::to_string(o.image_size) + "x" + std::to_string(o.image_size)).c_str());
  row("parameters", static_cast<double>(e.parameters), std::to_string(w->parameters()) + " x 4 bytes (fp32)");
  row("gradients", static_cast<double>(e.gradients), "fp32");
  row("optimizer state", static_cast<double>(e.optimizer_state), bert ? "two moments" : "momentum buffer");
  if (e.weight_copies)
    row("weight copies", static_cast<double>(e.weight_copies), "2-byte weights for the forward pass");
  row("input batch", static_cast<double>(e.inputs));
  row("activations", static_cast<double>(e.activations),
      size_text(e.activations_per_sample) + " per sample, saved by the forward pass for backward");
  row("backward temporaries", static_cast<double>(e.temporaries), "the backward pass's buffers at its peak");
  row("total (peak)", static_cast<double>(e.total), "expected high-water mark of a training step");
  std::printf(
      "method: forward+backward measured on the CPU at batches %lld and %lld, fitted linearly in the batch%s;\n"
      "  not counted: allocator caching, cuDNN/cuBLAS workspaces, the CUDA context.\n",
      static_cast<long long>(e.small.batch), static_cast<long long>(e.large.batch),
      o.precision == "fp32" ? "" : "; mixed precision halves activations and temporaries");
  std::printf(
      "compare on the GPU: hearth bench --model %s --batch-size %lld --phase train --precision %s%s "
      "(column \"peak mem\")\n",
      o.model.c_str(), static_cast<long long>(batch),
      // bench runs bf16 for both 2-byte precisions: their memory is the same.
      o.precision == "fp16-mixed" ? "bf16-mixed" : o.precision.c_str(),
      bert ? (" --seq-len " + std::to_string(o.seq_len)).c_str()
           : (" --image-size " + std::to_string(o.image_size)).c_str());
  return 0;
}

}  // namespace

void add_estimate_memory_command(CLI::App& app) {
  auto* sub = app.add_subcommand("estimate-memory",
                                 "Estimate the memory a training step of resnet50, vgg16 or bert-base needs");
  auto o = std::make_shared<EstimateOptions>();
  sub->add_option("--model", o->model, "resnet50, vgg16 or bert-base")->required();
  sub->add_option("--batch-size,--batch_size", o->batch_size, "per-device batch (default: the model's reference batch)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  sub->add_option("--precision", o->precision, "fp32, bf16-mixed or fp16-mixed")->capture_default_str();
  sub->add_option("--image-size", o->image_size, "image side for the CNNs")
      ->check(CLI::Range(int64_t{32}, int64_t{4096}))
      ->capture_default_str();
  sub->add_option("--seq-len", o->seq_len, "tokens per sequence for BERT")
      ->check(CLI::Range(int64_t{1}, int64_t{512}))
      ->capture_default_str();
  on_run(sub, [o] { return run_estimate(*o); });
}

}  // namespace hearth::cli
