#include "hearth/train/metrics_log.h"

#include <filesystem>

#include "hearth/core/errors.h"

namespace hearth::train {

MetricsJsonlCallback::MetricsJsonlCallback(std::string path) : path_(std::move(path)) {}

void MetricsJsonlCallback::open(bool truncate) {
  std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  HEARTH_CHECK(!ec, IoError, "[trainer] ", parent.string(),
               ": cannot create the directory of the metrics log: ", ec.message());
  out_.open(path_, truncate);
}

void MetricsJsonlCallback::write(const nlohmann::json& entry) {
  // Non-finite numbers have no JSON form; nlohmann writes them as null.
  out_.write(entry.dump() + "\n");
}

void MetricsJsonlCallback::on_train_begin(const TrainingArguments&, TrainerState& state, TrainerControl&) {
  if (failure_.failed()) return;
  try {
    open(/*truncate=*/true);
    for (const nlohmann::json& entry : state.log_history) write(entry);
  } catch (const IoError& e) {
    out_.close();
    failure_.give_up(e);
  }
}

void MetricsJsonlCallback::on_log(const TrainingArguments&, TrainerState&, TrainerControl&,
                                  const nlohmann::json& entry) {
  if (failure_.failed()) return;
  try {
    if (!out_.is_open()) open(/*truncate=*/false);
    write(entry);
  } catch (const IoError& e) {
    out_.close();
    failure_.give_up(e);
  }
}

}  // namespace hearth::train
