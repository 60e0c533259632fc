// What `hearth train` and `hearth eval` can build by name: the models
// (small_cnn, mlp, resnet18/34/50, vgg16, vgg16_bn) and the data sets (fashion_mnist), and the description of
// both that every checkpoint keeps as config.json, so `hearth eval` can rebuild
// the model a checkpoint's weights belong to.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hearth/data/dataset.h"
#include "hearth/nn/module.h"
#include "hearth/train/training_arguments.h"

namespace hearth::cli {

struct TaskConfig {
  std::string model_type = "small_cnn";
  std::string dataset = "fashion_mnist";
  int64_t num_labels = 10;
  int64_t in_channels = 1;
  int64_t image_size = 28;
  // Per-channel normalisation applied to pixel_values (the training set's statistics).
  std::vector<double> normalize_mean = {0.2860};
  std::vector<double> normalize_std = {0.3530};

  nlohmann::json to_json() const;
  // ValueError naming `where` when a field is missing or bad.
  static TaskConfig from_json(const nlohmann::json& j, const std::string& where);
};

const std::vector<std::string>& model_names();
const std::vector<std::string>& dataset_names();

// The task for a model and data set, both already checked to be known names.
// ValueError when the model cannot take the data set's images.
TaskConfig make_task(const std::string& model, const std::string& dataset);
void check_model_fits(const TaskConfig& task);
// A freshly initialised model (draws from the global generator: seed first).
std::shared_ptr<nn::Module> build_model(const TaskConfig& task);
// One split, normalised, cut to its first `max_samples` samples when >= 0.
// `directory` (optional) receives where the files were found.
std::shared_ptr<const data::Dataset> load_split(const TaskConfig& task, bool train, const std::string& data_dir,
                                                int64_t max_samples, std::string* directory = nullptr);
// The defaults `hearth train` starts from for this task: Hugging Face's,
// except where the task needs its own to train well out of the box.
train::TrainingArguments default_arguments(const TaskConfig& task);

// "model_type", "dataset", ... file written into every checkpoint.
inline constexpr const char* kTaskConfigFile = "config.json";
void save_task_config(const TaskConfig& task, const std::string& dir);
TaskConfig load_task_config(const std::string& dir);

// "\"a\", \"b\" or \"c\"".
std::string quoted_choices(const std::vector<std::string>& names);

}  // namespace hearth::cli
