#include "hearth/train/tensorboard.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"

namespace hearth::train {
namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Hugging Face's rewrite: "eval_loss" -> "eval/loss", "loss" -> "train/loss".
std::string tag_for(const std::string& key) {
  if (key.rfind("eval_", 0) == 0) return "eval/" + key.substr(5);
  if (key.rfind("test_", 0) == 0) return "test/" + key.substr(5);
  return "train/" + key;
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

std::string default_tensorboard_dir(const std::string& output_dir) {
  std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%b%d_%H-%M-%S", &local);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "localhost");
  const std::filesystem::path runs = std::filesystem::path(output_dir) / "runs";
  std::error_code ec;
  HEARTH_CHECK(!std::filesystem::is_symlink(std::filesystem::symlink_status(runs, ec)), IoError, "[tensorboard] ",
               runs.string(),
               ": is a symbolic link; event files are never written through one (remove it, or "
               "choose another --output_dir)");
  return (std::filesystem::path(output_dir) / "runs" / (std::string(stamp) + "_" + host)).string();
}

TensorBoardCallback::TensorBoardCallback(std::string log_dir, Device device)
    : log_dir_(std::move(log_dir)), device_(device) {}

void TensorBoardCallback::on_train_begin(const TrainingArguments&, TrainerState& state, TrainerControl&) {
  last_train_log_ = std::make_pair(state.global_step, seconds_now());
  if (failure_.failed()) return;
  try {
    if (!writer_) writer_ = std::make_unique<EventFileWriter>(log_dir_);
  } catch (const IoError& e) {
    writer_.reset();
    failure_.give_up(e);
  }
}

void TensorBoardCallback::on_log(const TrainingArguments& args, TrainerState& state, TrainerControl& control,
                                 const nlohmann::json& entry) {
  if (failure_.failed()) return;
  try {
    write_scalars(args, state, control, entry);
  } catch (const IoError& e) {
    writer_.reset();
    failure_.give_up(e);
  }
}

void TensorBoardCallback::write_scalars(const TrainingArguments&, TrainerState& state, TrainerControl&,
                                        const nlohmann::json& entry) {
  if (!writer_) writer_ = std::make_unique<EventFileWriter>(log_dir_);
  std::vector<std::pair<std::string, float>> scalars;
  for (const auto& [key, value] : entry.items()) {
    if (key == "step" || !value.is_number()) continue;
    scalars.emplace_back(tag_for(key), value.get<float>());
  }
  const int64_t step = entry.value("step", state.global_step);
  if (entry.contains("loss")) {
    const double now = seconds_now();
    if (last_train_log_ && step > last_train_log_->first && now > last_train_log_->second) {
      const double samples = static_cast<double>((step - last_train_log_->first) * state.train_batch_size);
      scalars.emplace_back("train/samples_per_second", static_cast<float>(samples / (now - last_train_log_->second)));
    }
    last_train_log_ = std::make_pair(step, now);
    MemoryStats m = device_runtime(device_.kind).memory_stats(device_.index);
    if (m.peak_active > 0) {
      scalars.emplace_back("train/memory_allocated_gib", static_cast<float>(static_cast<double>(m.active) / kGiB));
      scalars.emplace_back("train/memory_peak_gib", static_cast<float>(static_cast<double>(m.peak_active) / kGiB));
    }
  }
  writer_->add_scalars(step, scalars);
}

}  // namespace hearth::train
