// `hearth bench`: training and evaluation throughput of the reference models
// on synthetic data, a table on stdout and a JSON file; with --compare-cpu the
// GPU's speedup over the CPU per model and phase, also drawn as an SVG chart.
//
// The timed steps run back to back; samples/s comes from their wall time, the
// table's ms/step is the median device time of one step. On a GPU each step
// is recorded as a step graph and replayed where that is safe (the "graph"
// column; --no-step-graphs runs them eagerly). Peak memory is the allocator's peak over the model's run
// (weights, optimizer state and activations). "first step" is the wall time
// from building the model to the end of its first step (plans, autotuning).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>

#include <nlohmann/json.hpp>

#include "apps/hearth/bench_chart.h"
#include "apps/hearth/bench_workloads.h"
#include "apps/hearth/commands.h"
#include "hearth/core/device_runtime.h"
#include "hearth/dispatch/op_profiler.h"
#include "hearth/distributed/init.h"
#include "hearth/distributed/rendezvous.h"
#include "hearth/io/atomic_file.h"
#include "hearth/ops/autocast.h"
#include "hearth/ops/factory.h"
#include "hearth/train/device_select.h"
#include "hearth/train/step_graph.h"

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
  // NHWC CNNs: on with --channels-last, off with --no-channels-last, else on
  // on an accelerator (cuDNN's tensor-core kernels, TF32 for float32 too, read
  // NHWC natively) and off on the CPU (its convolutions compute on NCHW).
  bool channels_last_on = false, channels_last_off = false;
  bool channels_last(Device d) const { return channels_last_on || (!channels_last_off && !d.is_cpu()); }
  // Steps recorded as CUDA graphs and replayed where that is safe.
  bool no_graphs = false;
  bool gradient_checkpointing = false;
};

struct Result {
  std::string model, phase, precision, device;
  int64_t batch = 0, parameters = 0;
  double median_ms = 0, mean_ms = 0, samples_per_s = 0, first_step_s = 0;
  size_t peak_bytes = 0;
  bool graphed = false;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void sync(Device d) {
  if (!d.is_cpu()) device_runtime(d.kind).synchronize(d.index);
}

// Under `hearth launch`: the group gradients are averaged over, and what one
// all-reduce of every gradient costs on it (for the scaling report).
struct DataParallel {
  distributed::ProcessGroupPtr group;
  nlohmann::json allreduce;  // bytes, ms, bus GB/s, buckets overlapped with backward
};

// Global samples/s: every rank's rate summed over the group.
double global_rate(const DataParallel* dp, double rate, Device device) {
  if (!dp) return rate;
  Tensor t = full({1}, rate, DType::float64, device.is_cpu() ? Device() : device);
  dp->group->all_reduce({t}, distributed::ReduceOp::sum)->wait();
  return t.item<double>();
}

// Times an all-reduce of `numel` float32 values (every gradient of the model
// at once) on the group: ms per call and the bus bandwidth NCCL reports
// (2 (n - 1) / n bytes / time).
nlohmann::json time_allreduce(const DataParallel& dp, int64_t numel, Device device) {
  Tensor flat = zeros({numel}, DType::float32, device);
  for (int i = 0; i < 3; ++i) dp.group->all_reduce({flat}, distributed::ReduceOp::sum)->wait();
  sync(device);
  const int reps = 10;
  const auto t = Clock::now();
  for (int i = 0; i < reps; ++i) dp.group->all_reduce({flat}, distributed::ReduceOp::sum)->wait();
  sync(device);
  const double ms = seconds_since(t) * 1e3 / reps;
  const double n = dp.group->world_size(), bytes = static_cast<double>(numel) * 4;
  return {{"bytes", bytes}, {"ms", ms}, {"bus_GBps", 2 * (n - 1) / n * bytes / (ms * 1e-3) / 1e9}};
}

std::vector<Result> bench_model(const std::string& model, const BenchOptions& o, Device device, int warmup, int iters,
                                DataParallel* dp = nullptr) {
  std::vector<Result> out;
  DeviceRuntime& rt = device_runtime(device.kind);
  sync(device);
  rt.empty_cache(device.index);
  rt.reset_peak_memory_stats(device.index);
  const auto built = Clock::now();
  std::unique_ptr<Workload> w =
      make_workload(model, {o.batch_size, o.image_size, o.seq_len, o.channels_last(device), o.gradient_checkpointing},
                    device, o.precision);
  if (dp) w->enable_data_parallel(dp->group);
  std::vector<std::string> phases;
  if (o.phase != "eval") phases.push_back("train");
  if (o.phase != "train") phases.push_back("eval");
  for (const std::string& phase : phases) {
    const bool train = phase == "train";
    w->set_training(train);
    // With graphs, training records forward and backward (gradients kept and
    // zeroed in place) and runs the optimizer's few multi-tensor launches
    // eagerly; evaluation records the whole forward.
    std::optional<train::GraphedStep> graphed;
    const bool graphs_wanted = !o.no_graphs && !device.is_cpu();
    std::string obstacle = train ? w->graph_obstacle() : std::string();
    if (graphs_wanted && obstacle.empty())
      graphed.emplace(device, [&w, train] { train ? w->forward_backward(true) : w->eval_step(); });
    auto step = [&] {
      if (!graphed) return train ? w->train_step() : w->eval_step();
      (*graphed)();
      if (train) w->update();
    };
    Result r{model, phase, o.precision, device.str(), w->batch_size, w->parameters()};
    const auto first = Clock::now();
    step();
    sync(device);
    r.first_step_s = seconds_since(phase == phases.front() ? built : first);
    // A graphed step is eager once, rehearsed once, then recorded: the timed
    // steps start after that.
    for (int i = 1; i < (graphed ? std::max(warmup, 4) : warmup); ++i) step();
    sync(device);
    if (graphed && !graphed->fallback_reason().empty()) obstacle = graphed->fallback_reason();
    r.graphed = graphed && graphed->replaying();
    if (graphs_wanted && !r.graphed)
      std::fprintf(stderr, "bench: %s %s runs without a CUDA graph: %s\n", model.c_str(), phase.c_str(),
                   obstacle.c_str());
    reset_op_profile();  // HEARTH_PROFILE_OPS=1: only the timed steps count
    // The steps run back to back, as in training: the host queues the next
    // step while the device finishes this one (a sync per step would add the
    // launch latency of every step's start). The device times each step
    // between events; throughput comes from the wall clock over all of them.
    std::vector<double> ms;
    std::vector<std::shared_ptr<DeviceRuntime::TimingEvent>> marks;
    marks.push_back(rt.record_timing_event(device.index));
    if (dp) w->exposed_communication_ms();  // count the timed steps only
    const auto timed = Clock::now();
    for (int i = 0; i < iters; ++i) {
      const auto t = Clock::now();
      step();
      marks.push_back(rt.record_timing_event(device.index));
      if (!marks.front()) ms.push_back(seconds_since(t) * 1e3);  // no device events: the step ran synchronously
    }
    sync(device);
    const double total_ms = seconds_since(timed) * 1e3;
    if (marks.front())
      for (size_t i = 0; i + 1 < marks.size(); ++i) ms.push_back(rt.elapsed_ms(*marks[i], *marks[i + 1]));
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    r.median_ms = sorted[sorted.size() / 2];
    r.mean_ms = total_ms / static_cast<double>(iters);
    r.samples_per_s = global_rate(dp, static_cast<double>(r.batch) * 1e3 / r.mean_ms, device);
    r.peak_bytes = rt.memory_stats(device.index).peak_active;
    if (dp && train) {
      dp->allreduce = time_allreduce(*dp, w->parameters(), device);
      const auto [overlapped, buckets] = w->overlapped_buckets();
      dp->allreduce["buckets"] = buckets;
      dp->allreduce["buckets_launched_during_backward"] = overlapped;
      // Device time the compute stream stood waiting for gradient all-reduces
      // after backward, per step: the communication backward did not hide.
      dp->allreduce["exposed_ms_per_step"] = w->exposed_communication_ms();
    }
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
  std::printf("%-10s %-6s %-10s %-7s %6s %10s %11s %10s %11s %6s\n", "model", "phase", "precision", "device", "batch",
              "ms/step", "samples/s", "peak mem", "first step", "graph");
  for (const Result& r : rs)
    std::printf("%-10s %-6s %-10s %-7s %6lld %10.2f %11.1f %10s %10.2fs %6s\n", r.model.c_str(), r.phase.c_str(),
                r.precision.c_str(), r.device.c_str(), static_cast<long long>(r.batch), r.median_ms, r.samples_per_s,
                r.device == "cpu" ? "-" : gib(r.peak_bytes).c_str(), r.first_step_s, r.graphed ? "yes" : "no");
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
          {"first_step_s", r.first_step_s},
          {"cuda_graph", r.graphed}};
}

int run_bench(const BenchOptions& o) {
  std::vector<std::string> models;
  if (o.model == "all")
    models = bench_model_names();
  else
    models = {o.model};
  const train::DeviceChoice choice = train::select_device(o.device, o.cpu);
  // Under `hearth launch` every process times its own GPU's share; rank 0 reports.
  std::unique_ptr<DataParallel> dp;
  if (auto rdv = distributed::rendezvous_from_environment(); rdv && rdv->world_size > 1) {
    dp = std::make_unique<DataParallel>();
    dp->group = distributed::init_process_group(*rdv, distributed::default_backend(choice.device), choice.device,
                                                std::chrono::minutes(10));
  }
  const bool report = !dp || dp->group->rank() == 0;
  if (o.precision != "fp32") {
    try {
      check_autocast_supported(choice.device.kind, o.precision == "bf16-mixed" ? DType::bfloat16 : DType::float16);
      if (o.compare_cpu) check_autocast_supported(kCpu, o.precision == "bf16-mixed" ? DType::bfloat16 : DType::float16);
    } catch (const Error& e) {
      throw UsageError("--precision " + o.precision + ": " + e.what());
    }
  }
  if (report) std::filesystem::create_directories(o.output_dir);
  if (report)
    std::printf("hearth bench on %s%s%s\n", choice.description.c_str(),
                o.channels_last(choice.device) ? " (CNNs channels_last)" : "",
                dp ? (", data parallel over " + std::to_string(dp->group->world_size()) + " processes (" +
                      dp->group->backend() + "); samples/s are the sum over them")
                         .c_str()
                   : "");
  std::vector<Result> results, cpu_results;
  const bool on_cpu = choice.device.is_cpu();
  for (const std::string& m : models) {
    auto r =
        bench_model(m, o, choice.device, on_cpu ? o.cpu_warmup : o.warmup, on_cpu ? o.cpu_iters : o.iters, dp.get());
    results.insert(results.end(), r.begin(), r.end());
    if (o.compare_cpu && !on_cpu && !dp) {
      auto c = bench_model(m, o, Device(), o.cpu_warmup, o.cpu_iters);
      cpu_results.insert(cpu_results.end(), c.begin(), c.end());
    }
  }
  if (!report) return 0;
  print_table(results);
  nlohmann::json j = {{"device", choice.description},
                      {"memory_format", o.channels_last(choice.device) ? "channels_last" : "contiguous"},
                      {"results", nlohmann::json::array()}};
  if (dp) {
    j["world_size"] = dp->group->world_size();
    j["allreduce"] = dp->allreduce;
    std::printf("all-reduce of every gradient (%s): %s\n", dp->group->backend().c_str(), dp->allreduce.dump().c_str());
  }
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
      ->check(CLI::Range(1, 1 << 16));
  sub->add_option("--precision", o->precision, "fp32, bf16-mixed or fp16-mixed (autocast; float16 with loss scaling)")
      ->check(CLI::IsMember({"fp32", "bf16-mixed", "fp16-mixed"}))
      ->capture_default_str();
  sub->add_flag("--channels-last", o->channels_last_on,
                "run the CNNs in channels_last (NHWC) memory format (default: on an accelerator, off on the CPU)");
  sub->add_flag("--no-channels-last", o->channels_last_off, "keep the CNNs in NCHW on an accelerator too");
  sub->add_option("--phase", o->phase, "train, eval or both")
      ->check(CLI::IsMember({"train", "eval", "both"}))
      ->capture_default_str();
  sub->add_flag("--cpu", o->cpu, "run on the CPU even where an accelerator is present");
  sub->add_option("--device", o->device, "auto, cpu or an accelerator such as cuda:0")->capture_default_str();
  sub->add_option("--iters", o->iters, "timed steps on an accelerator")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  sub->add_option("--warmup", o->warmup, "untimed steps first (the first builds plans)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  sub->add_option("--cpu-iters", o->cpu_iters, "timed steps on the CPU")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  sub->add_option("--cpu-warmup", o->cpu_warmup, "untimed steps on the CPU")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  sub->add_flag("--no-step-graphs,--no-cuda-graphs", o->no_graphs,
                "run every step eagerly (default: each step is recorded once as a step graph and replayed where safe)");
  sub->add_flag("--gradient-checkpointing", o->gradient_checkpointing,
                "BERT: recompute each layer's activations in backward instead of keeping them");
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
