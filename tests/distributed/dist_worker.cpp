// The program the data-parallel tests run under `hearth launch`: each rank
// runs one scenario and exits 0 when its checks pass.
//
//   dist_worker collectives [gloo|nccl]   collectives checked against values computed locally
//   dist_worker train OUT ddp|ref [cpu|cuda]   a few steps of the small CNN; rank 0 writes the losses to OUT
//   dist_worker die PIDFILE          the last rank exits with status 3, the others wait to be stopped
//   dist_worker wait PIDFILE         every rank writes PIDFILE.<rank> and waits to be stopped
//   dist_worker hang [gloo|nccl]     the last rank never joins an all_reduce the others call
//   dist_worker train_hang OUTDIR    a Trainer on the CPU whose last rank stops answering after step 1
//
// nccl runs each rank on cuda:LOCAL_RANK.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "hearth/core/generator.h"
#include "hearth/data/dataset.h"
#include "hearth/data/fashion_mnist.h"
#include "hearth/data/sampler.h"
#include "hearth/distributed/init.h"
#include "hearth/distributed/tcp_store.h"
#include "hearth/nn/models/mlp.h"
#include "hearth/nn/models/small_cnn.h"
#include "hearth/ops/factory.h"
#include "hearth/train/trainer.h"

namespace {

using namespace hearth;

int failures = 0;

void expect_values(const std::string& what, const Tensor& t, const std::vector<double>& want) {
  std::vector<double> got = t.cpu().to(DType::float64).to_vector<double>();
  bool same = got.size() == want.size();
  for (size_t i = 0; same && i < got.size(); ++i) same = std::abs(got[i] - want[i]) <= 1e-5 * (1 + std::abs(want[i]));
  if (same) return;
  ++failures;
  std::cerr << "MISMATCH " << what << ": got";
  for (double v : got) std::cerr << " " << v;
  std::cerr << "; expected";
  for (double v : want) std::cerr << " " << v;
  std::cerr << "\n";
}

Device device_for(const std::string& backend) {
  auto r = distributed::rendezvous_from_environment();
  return backend == "nccl" ? Device::parse("cuda:" + std::to_string(r ? r->local_rank : 0)) : Device();
}

distributed::ProcessGroupPtr join(const std::string& backend, double timeout_s = 60) {
  auto r = distributed::rendezvous_from_environment();
  if (!r) throw ValueError("dist_worker: run me under hearth launch");
  auto ms = std::chrono::milliseconds(static_cast<int64_t>(distributed::dist_timeout_seconds(timeout_s) * 1000));
  return distributed::init_process_group(*r, backend, device_for(backend), ms);
}

int run_collectives(const std::string& backend) {
  auto g = join(backend);
  const Device dev = device_for(backend);
  const int r = g->rank(), w = g->world_size();
  const double dr = r, dw = w;
  double sum_r = 0;  // sum over ranks of r
  for (int k = 0; k < w; ++k) sum_r += k;

  // all_reduce on a list of tensors of two sizes (coalesced into one buffer).
  Tensor a = tensor(std::vector<float>{float(r), float(r + 1), float(2 * r)}, {3}, dev);
  Tensor b = full({2, 2}, Scalar(dr * dr), DType::float32, dev);
  g->all_reduce({a, b}, distributed::ReduceOp::sum)->wait();
  double sum_sq = 0;
  for (int k = 0; k < w; ++k) sum_sq += double(k) * k;
  expect_values("all_reduce sum (list)", a, {sum_r, sum_r + dw, 2 * sum_r});
  expect_values("all_reduce sum (list, second)", b, {sum_sq, sum_sq, sum_sq, sum_sq});

  Tensor avg = tensor(std::vector<double>{dr, 10.0 * dr}, {2}, dev);
  g->all_reduce({avg}, distributed::ReduceOp::avg)->wait();
  expect_values("all_reduce avg float64", avg, {sum_r / dw, 10.0 * sum_r / dw});

  Tensor mx = tensor(std::vector<int64_t>{r, -r, 7}, {3}, dev);
  Tensor mn = mx.clone();
  g->all_reduce({mx}, distributed::ReduceOp::max)->wait();
  g->all_reduce({mn}, distributed::ReduceOp::min)->wait();
  expect_values("all_reduce max int64", mx, {dw - 1, 0, 7});
  expect_values("all_reduce min int64", mn, {0, -(dw - 1), 7});

  Tensor half = full({4}, Scalar(dr + 0.5), DType::bfloat16, dev);
  g->all_reduce({half}, distributed::ReduceOp::sum)->wait();
  expect_values("all_reduce sum bfloat16", half, std::vector<double>(4, sum_r + 0.5 * dw));

  // broadcast from the last rank, two dtypes in two calls.
  const int root = w - 1;
  Tensor bc = full({5}, Scalar(dr * 3.0), DType::float32, dev);
  Tensor bc2 = full({2}, Scalar(int64_t{r}), DType::int64, dev);
  g->broadcast({bc}, root)->wait();
  g->broadcast({bc2}, root)->wait();
  expect_values("broadcast float32", bc, std::vector<double>(5, root * 3.0));
  expect_values("broadcast int64", bc2, {double(root), double(root)});

  // all_gather: rank k contributes {k, 100 + k}.
  Tensor in = tensor(std::vector<float>{float(r), float(100 + r)}, {2}, dev);
  Tensor out = Tensor::empty({2 * w}, DType::float32, dev);
  g->all_gather(in, out)->wait();
  std::vector<double> gathered;
  for (int k = 0; k < w; ++k) {
    gathered.push_back(k);
    gathered.push_back(100 + k);
  }
  expect_values("all_gather", out, gathered);

  // reduce_scatter: input element i is r + i; rank r gets chunk r of the sum.
  std::vector<float> rs_in(static_cast<size_t>(2 * w));
  std::iota(rs_in.begin(), rs_in.end(), float(r));
  Tensor rs_out = Tensor::empty({2}, DType::float32, dev);
  g->reduce_scatter(tensor(rs_in, {2 * w}, dev), rs_out, distributed::ReduceOp::sum)->wait();
  expect_values("reduce_scatter sum", rs_out, {sum_r + dw * (2 * r), sum_r + dw * (2 * r + 1)});

  // Several collectives in flight at once complete in order.
  std::vector<Tensor> many;
  std::vector<distributed::WorkPtr> works;
  for (int k = 0; k < 8; ++k) {
    many.push_back(full({1000}, Scalar(double(k + r)), DType::float32, dev));
    works.push_back(g->all_reduce({many.back()}, distributed::ReduceOp::sum));
  }
  for (auto& wk : works) wk->wait();
  for (int k = 0; k < 8; ++k)
    expect_values("pipelined all_reduce " + std::to_string(k), many[k].narrow(0, 0, 2),
                  {dw * k + sum_r, dw * k + sum_r});

  g->barrier()->wait();
  g->store()->barrier("collectives-done");
  if (failures == 0) std::cout << "collectives ok on rank " << r << " of " << w << " (" << backend << ")\n";
  return failures == 0 ? 0 : 1;
}

// Dataset index k of the single-process reference holds the sample the DDP
// ranks read at the same place of the step: reference step j's micro-batch r
// is DDP rank r's batch j.
class ReorderedDataset : public data::Dataset {
 public:
  ReorderedDataset(std::shared_ptr<const data::Dataset> base, std::vector<int64_t> source)
      : base_(std::move(base)), source_(std::move(source)) {}
  int64_t size() const override { return static_cast<int64_t>(source_.size()); }
  data::Example get(int64_t i) const override { return base_->get(source_[static_cast<size_t>(i)]); }

 private:
  std::shared_ptr<const data::Dataset> base_;
  std::vector<int64_t> source_;
};

class LossRecorder : public train::TrainerCallback {
 public:
  std::string name() const override { return "LossRecorder"; }
  void on_step_end(const train::TrainingArguments&, train::TrainerState& s, train::TrainerControl&) override {
    losses.push_back(s.step_loss.item<double>());
  }
  std::vector<double> losses;
};

int run_train(const std::string& out_path, const std::string& mode, const std::string& device) {
  constexpr int64_t kSamples = 256, kBatch = 16, kRanks = 2;
  // FASHION_MNIST_DIR: where the files are when not where Debian installs them.
  const char* data_dir = std::getenv("FASHION_MNIST_DIR");
  std::shared_ptr<const data::Dataset> full_set =
      std::make_shared<data::FashionMnist>(data::FashionMnist::Split::train, data_dir ? data_dir : "");
  std::vector<int64_t> first(kSamples);
  std::iota(first.begin(), first.end(), 0);
  std::shared_ptr<const data::Dataset> train_set = std::make_shared<ReorderedDataset>(full_set, first);

  train::TrainingArguments args;
  args.output_dir = out_path + ".run";
  args.per_device_train_batch_size = kBatch;
  args.learning_rate = 2e-3;
  args.max_steps = 4;
  args.logging_steps = 1;
  args.save_strategy = "no";
  args.eval_strategy = "no";
  args.report_to = {"none"};
  args.use_cpu = device == "cpu";
  args.device = device == "cpu" ? "auto" : device;
  args.seed = 5;
  args.overwrite_output_dir = true;
  if (mode == "ref") {
    args.gradient_accumulation_steps = kRanks;
    const std::vector<int64_t> sigma = data::shuffled_indices(kSamples, static_cast<uint64_t>(args.seed), 0);
    std::vector<int64_t> source(kSamples);
    for (int64_t r = 0; r < kRanks; ++r) {
      data::SamplerOptions so{
          .shuffle = true, .seed = static_cast<uint64_t>(args.seed), .num_replicas = kRanks, .rank = r};
      const std::vector<int64_t> mine = data::epoch_indices(kSamples, so, 0);
      for (int64_t k = 0; k < static_cast<int64_t>(mine.size()); ++k) {
        const int64_t j = k / kBatch, i = k % kBatch;
        source[static_cast<size_t>(sigma[static_cast<size_t>((kRanks * j + r) * kBatch + i)])] =
            mine[static_cast<size_t>(k)];
      }
    }
    train_set = std::make_shared<ReorderedDataset>(train_set, source);
  }
  manual_seed(11);
  nn::models::SmallCNNConfig config;
  config.dropout = 0.0;  // dropout masks depend on how batches are split, the rest must not
  auto model = std::make_shared<nn::models::SmallCNN>(config);
  if (auto r = distributed::rendezvous_from_environment(); r && r->rank != 0) {
    // A different start on the other ranks: the broadcast from rank 0 must fix it.
    manual_seed(99);
    model = std::make_shared<nn::models::SmallCNN>(config);
  }
  auto recorder = std::make_shared<LossRecorder>();
  train::TrainerOptions opts;
  opts.console = nullptr;
  train::Trainer trainer(model, args, train_set, nullptr, {recorder}, opts);
  trainer.train();
  if (trainer.is_main_process()) {
    std::ofstream out(out_path);
    out.precision(10);
    for (double l : recorder->losses) out << l << "\n";
  }
  return 0;
}

int run_die(const std::string& pid_file, bool someone_dies) {
  auto r = distributed::rendezvous_from_environment();
  if (!r) return 2;
  if (someone_dies && r->rank == r->world_size - 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::cerr << "rank " << r->rank << " exits with status 3 on purpose\n";
    return 3;
  }
  std::ofstream(pid_file + "." + std::to_string(r->rank)) << ::getpid() << "\n";
  std::cout << "rank " << r->rank << " waits to be stopped\n" << std::flush;
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

int run_hang(const std::string& backend) {
  auto g = join(backend);
  Tensor t = full({4}, Scalar(1.0), DType::float32, device_for(backend));
  if (g->rank() == g->world_size() - 1) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  g->all_reduce({t}, distributed::ReduceOp::sum)->wait();
  std::cout << "sum " << t.cpu().sum().item<double>() << "\n";  // waits for the result on the host
  return 0;
}

// The last rank sleeps for good at the end of step `at`, as a rank stuck in
// its data loader or a deadlock would; the others wait for it in the next collective.
class HangAt : public train::TrainerCallback {
 public:
  HangAt(int64_t at, bool hangs) : at_(at), hangs_(hangs) {}
  std::string name() const override { return "HangAt"; }
  void on_step_end(const train::TrainingArguments&, train::TrainerState& s, train::TrainerControl&) override {
    if (hangs_ && s.global_step == at_)
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }

 private:
  int64_t at_;
  bool hangs_;
};

int run_train_hang(const std::string& output_dir) {
  auto r = distributed::rendezvous_from_environment();
  if (!r) return 2;
  manual_seed(3);
  Tensor x = randn({64, 4}, DType::float32);
  Tensor labels = zeros({64}, DType::int64);
  auto data = std::make_shared<data::TensorDataset>(
      data::Example::Map{{data::field::kPixelValues, x}, {data::field::kLabels, labels}});
  train::TrainingArguments args;
  args.output_dir = output_dir;
  args.per_device_train_batch_size = 8;
  args.max_steps = 4;
  args.save_strategy = "no";
  args.report_to = {"none"};
  args.use_cpu = true;
  train::TrainerOptions opts;
  opts.console = nullptr;
  auto model = std::make_shared<nn::models::MLP>(4, std::vector<int64_t>{8}, 3, 0.0);
  train::Trainer trainer(model, args, data, nullptr, {std::make_shared<HangAt>(1, r->rank == r->world_size - 1)}, opts);
  trainer.train();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  try {
    if (a.size() >= 1 && a.size() <= 2 && a[0] == "collectives") return run_collectives(a.size() == 2 ? a[1] : "gloo");
    if (a.size() >= 3 && a.size() <= 4 && a[0] == "train") return run_train(a[1], a[2], a.size() == 4 ? a[3] : "cpu");
    if (a.size() == 2 && a[0] == "die") return run_die(a[1], true);
    if (a.size() == 2 && a[0] == "wait") return run_die(a[1], false);
    if (a.size() >= 1 && a.size() <= 2 && a[0] == "hang") return run_hang(a.size() == 2 ? a[1] : "gloo");
    if (a.size() == 2 && a[0] == "train_hang") return run_train_hang(a[1]);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: dist_worker collectives [gloo|nccl] | train OUT ddp|ref [cpu|cuda] | die PIDFILE | wait PIDFILE "
               "| hang [gloo|nccl]\n";
  return 2;
}
