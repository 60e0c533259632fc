// `hearth bench`: training and evaluation throughput of the reference models
// on synthetic data, a table on stdout and a JSON file; with --compare-cpu the
// GPU's speedup over the CPU per model and phase, also drawn as an SVG chart.
//
// Each timed step ends with a device synchronisation, so a step's time is its
// whole time on the device; samples/s comes from the mean step, the table also
// shows the median. Peak memory is the allocator's peak over the model's run
// (weights, optimizer state and activations). "first step" is the wall time
// from building the model to the end of its first step (plans, autotuning).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include <nlohmann/json.hpp>

#include "apps/hearth/bench_chart.h"
#include "apps/hearth/bench_workloads.h"
#include "apps/hearth/commands.h"
#include "hearth/core/device_runtime.h"
#include "hearth/io/atomic_file.h"
#include "hearth/train/device_select.h"

namespace hearth::cli {
namespace {

struct BenchOptions {
  std::string model = "all";
  int64_t batch_size = 0;
  std::string precision = "fp32";
  std::string phase = "both";
  bool cpu = false;
  std::string device = "auto";
  int warmup = 5, iters = 20;
  int cpu_warmup = 1, cpu_iters = 3;
  bool compare_cpu = false;
  int64_t image_size = 224, seq_len = 128;
  std::string output_dir = ".";
};

struct Result {
  std::string model, phase, precision, device;
  int64_t batch = 0, parameters = 0;
  double median_ms = 0, mean_ms = 0, samples_per_s = 0, first_step_s = 0;
  size_t peak_bytes = 0;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void sync(Device d) {
  if (!d.is_cpu()) device_runtime(d.kind).synchronize(d.index);
}

std::vector<Result> bench_model(const std::string& model, const BenchOptions& o, Device device, int warmup, int iters) {
  std::vector<Result> out;
  DeviceRuntime& rt = device_runtime(device.kind);
  sync(device);
  rt.empty_cache(device.index);
  rt.reset_peak_memory_stats(device.index);
  const auto built = Clock::now();
  std::unique_ptr<Workload> w = make_workload(model, {o.batch_size, o.image_size, o.seq_len}, device);
  std::vector<std::string> phases;
  if (o.phase != "eval") phases.push_back("train");
  if (o.phase != "train") phases.push_back("eval");
  for (const std::string& phase : phases) {
    const bool train = phase == "train";
    w->set_training(train);
    auto step = [&] { train ? w->train_step() : w->eval_step(); };
    Result r{model, phase, o.precision, device.str(), w->batch_size, w->parameters()};
    const auto first = Clock::now();
    step();
    sync(device);
    r.first_step_s = seconds_since(phase == phases.front() ? built : first);
    for (int i = 1; i < warmup; ++i) step();
    sync(device);
    std::vector<double> ms;
    for (int i = 0; i < iters; ++i) {
      const auto t = Clock::now();
      step();
      sync(device);
      ms.push_back(seconds_since(t) * 1e3);
    }
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    r.median_ms = sorted[sorted.size() / 2];
    r.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
    r.samples_per_s = static_cast<double>(r.batch) * 1e3 / r.mean_ms;
    r.peak_bytes = rt.memory_stats(device.index).peak_active;
    out.push_back(r);
    std::fprintf(stderr, "bench: %s %s on %s: %.1f samples/s\n", model.c_str(), phase.c_str(), r.device.c_str(),
                 r.samples_per_s);
  }
  return out;
}

std::string gib(size_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1024.0 * 1024 * 1024));
  return buf;
}

void print_table(const std::vector<Result>& rs) {
  std::printf("%-10s %-6s %-10s %-7s %6s %10s %11s %10s %11s\n", "model", "phase", "precision", "device", "batch",
              "ms/step", "samples/s", "peak mem", "first step");
  for (const Result& r : rs)
    std::printf("%-10s %-6s %-10s %-7s %6lld %10.2f %11.1f %10s %10.2fs\n", r.model.c_str(), r.phase.c_str(),
                r.precision.c_str(), r.device.c_str(), static_cast<long long>(r.batch), r.median_ms, r.samples_per_s,
                r.device == "cpu" ? "-" : gib(r.peak_bytes).c_str(), r.first_step_s);
}

nlohmann::json to_json(const Result& r) {
  return {{"model", r.model},
          {"phase", r.phase},
          {"precision", r.precision},
          {"device", r.device},
          {"batch_size", r.batch},
          {"parameters", r.parameters},
          {"median_ms", r.median_ms},
          {"mean_ms", r.mean_ms},
          {"samples_per_s", r.samples_per_s},
          {"peak_bytes", r.peak_bytes},
          {"first_step_s", r.first_step_s}};
}

int run_bench(const BenchOptions& o) {
  std::vector<std::string> models;
  if (o.model == "all")
    models = bench_model_names();
  else
    models = {o.model};
  if (o.precision != "fp32")
    throw UsageError("--precision " + o.precision + ": mixed precision is not built into this hearth; use fp32");
  const train::DeviceChoice choice = train::select_device(o.device, o.cpu);
  std::filesystem::create_directories(o.output_dir);
  std::printf("hearth bench on %s\n", choice.description.c_str());
  std::vector<Result> results, cpu_results;
  const bool on_cpu = choice.device.is_cpu();
  for (const std::string& m : models) {
    auto r = bench_model(m, o, choice.device, on_cpu ? o.cpu_warmup : o.warmup, on_cpu ? o.cpu_iters : o.iters);
    results.insert(results.end(), r.begin(), r.end());
    if (o.compare_cpu && !on_cpu) {
      auto c = bench_model(m, o, Device(), o.cpu_warmup, o.cpu_iters);
      cpu_results.insert(cpu_results.end(), c.begin(), c.end());
    }
  }
  print_table(results);
  nlohmann::json j = {{"device", choice.description}, {"results", nlohmann::json::array()}};
  for (const Result& r : results) j["results"].push_back(to_json(r));
  if (!cpu_results.empty()) {
    std::printf("\nspeedup of %s over the CPU (samples/s ratio)\n", choice.device.str().c_str());
    std::printf("%-10s %-6s %12s %12s %9s\n", "model", "phase", "gpu", "cpu", "speedup");
    std::vector<SpeedupBar> bars;
    for (size_t i = 0; i < results.size() && i < cpu_results.size(); ++i) {
      const double s = results[i].samples_per_s / cpu_results[i].samples_per_s;
      std::printf("%-10s %-6s %12.1f %12.1f %8.1fx\n", results[i].model.c_str(), results[i].phase.c_str(),
                  results[i].samples_per_s, cpu_results[i].samples_per_s, s);
      bars.push_back({results[i].model + " " + results[i].phase, s});
      j["cpu_results"].push_back(to_json(cpu_results[i]));
    }
    const std::string svg = o.output_dir + "/bench_speedup.svg";
    io::write_file_atomic(svg, speedup_chart_svg(bars, "hearth on " + choice.description + ": speedup over the CPU"));
    std::printf("chart: %s\n", svg.c_str());
  }
  const std::string path = o.output_dir + "/bench_results.json";
  io::write_file_atomic(path, j.dump(1) + "\n");
  std::printf("results: %s\n", path.c_str());
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Time training and evaluation steps of the reference models");
  std::vector<std::string> model_choices = bench_model_names();
  model_choices.push_back("all");
  sub->add_option("--model", o->model, "resnet50, vgg16, bert-base or all")
      ->check(CLI::IsMember(model_choices))
      ->capture_default_str();
  sub->add_option("--batch-size,--batch_size", o->batch_size,
                  "samples per step (default: the reference benchmark's, 128 for resnet50, 64 otherwise)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--precision", o->precision, "fp32 or bf16-mixed")
      ->check(CLI::IsMember({"fp32", "bf16-mixed"}))
      ->capture_default_str();
  sub->add_option("--phase", o->phase, "train, eval or both")
      ->check(CLI::IsMember({"train", "eval", "both"}))
      ->capture_default_str();
  sub->add_flag("--cpu", o->cpu, "run on the CPU even where an accelerator is present");
  sub->add_option("--device", o->device, "auto, cpu or an accelerator such as cuda:0")->capture_default_str();
  sub->add_option("--iters", o->iters, "timed steps on an accelerator")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--warmup", o->warmup, "untimed steps first (the first builds plans)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--cpu-iters", o->cpu_iters, "timed steps on the CPU")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--cpu-warmup", o->cpu_warmup, "untimed steps on the CPU")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_flag("--compare-cpu", o->compare_cpu, "also run on the CPU and print the speedup, with an SVG chart");
  sub->add_option("--image-size", o->image_size, "image side for the CNNs")
      ->check(CLI::Range(32, 4096))
      ->capture_default_str();
  sub->add_option("--seq-len", o->seq_len, "tokens per sequence for BERT")
      ->check(CLI::Range(1, 512))
      ->capture_default_str();
  sub->add_option("--output-dir", o->output_dir, "where bench_results.json (and the chart) go")->capture_default_str();
  on_run(sub, [o] { return run_bench(*o); });
}

}  // namespace hearth::cli
