#include "hearth/train/metrics_log.h"

#include <filesystem>

#include "hearth/core/errors.h"

namespace hearth::train {

MetricsJsonlCallback::MetricsJsonlCallback(std::string path) : path_(std::move(path)) {}

void MetricsJsonlCallback::open(std::ios::openmode mode) {
  std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  HEARTH_CHECK(!ec, IoError, "[trainer] ", parent.string(),
               ": cannot create the directory of the metrics log: ", ec.message());
  out_.close();
  out_.open(path_, mode);
  HEARTH_CHECK(out_.good(), IoError, "[trainer] ", path_, ": cannot open the metrics log for writing");
}

void MetricsJsonlCallback::write(const nlohmann::json& entry) {
  // Non-finite numbers have no JSON form; nlohmann writes them as null.
  out_ << entry.dump() << "\n";
  out_.flush();
  HEARTH_CHECK(out_.good(), IoError, "[trainer] ", path_, ": writing the metrics log failed");
}

void MetricsJsonlCallback::on_train_begin(const TrainingArguments&, TrainerState& state, TrainerControl&) {
  open(std::ios::out | std::ios::trunc);
  for (const nlohmann::json& entry : state.log_history) write(entry);
}

void MetricsJsonlCallback::on_log(const TrainingArguments&, TrainerState&, TrainerControl&,
                                  const nlohmann::json& entry) {
  if (!out_.is_open()) open(std::ios::out | std::ios::app);
  write(entry);
}

}  // namespace hearth::train
