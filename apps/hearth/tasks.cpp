#include "apps/hearth/tasks.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <type_traits>

#include "hearth/core/errors.h"
#include "hearth/data/fashion_mnist.h"
#include "hearth/data/transforms.h"
#include "hearth/io/atomic_file.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_integer.h"
#include "hearth/io/json_limits.h"
#include "hearth/nn/models/mlp.h"
#include "hearth/nn/models/resnet.h"
#include "hearth/nn/models/small_cnn.h"
#include "hearth/nn/models/vgg.h"

namespace hearth::cli {
namespace {

using json = nlohmann::json;

// The first `count` samples of a dataset (for quick runs on a subset).
class PrefixDataset : public data::Dataset {
 public:
  PrefixDataset(std::shared_ptr<const data::Dataset> base, int64_t count)
      : base_(std::move(base)), count_(std::min(count, base_->size())) {}
  int64_t size() const override { return count_; }
  data::Example get(int64_t index) const override {
    data::check_index("PrefixDataset", index, count_);
    return base_->get(index);
  }
  data::Example get_for_epoch(int64_t index, int64_t epoch) const override {
    data::check_index("PrefixDataset", index, count_);
    return base_->get_for_epoch(index, epoch);
  }

 private:
  std::shared_ptr<const data::Dataset> base_;
  int64_t count_;
};

template <typename T>
T get_field(const json& j, const char* name, const std::string& where) {
  HEARTH_CHECK(j.contains(name), ValueError, "[eval] ", where, ": field '", name, "' is missing");
  if constexpr (std::is_integral_v<T>) {
    HEARTH_CHECK(io::json_integer_fits<T>(j.at(name)), ValueError, "[eval] ", where, ": field '", name,
                 "': expected an integer, got ", j.at(name).dump());
  }
  try {
    return j.at(name).get<T>();
  } catch (const json::exception&) {
    HEARTH_THROW(ValueError, "[eval] ", where, ": field '", name, "' has the wrong type: ", j.at(name).dump());
  }
}

}  // namespace

std::string quoted_choices(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " or " : ", ";
    s += "\"" + names[i] + "\"";
  }
  return s;
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"small_cnn", "mlp",   "resnet18", "resnet34",
                                                 "resnet50",  "vgg16", "vgg16_bn"};
  return names;
}

const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> names = {"fashion_mnist"};
  return names;
}

nlohmann::json TaskConfig::to_json() const {
  json labels = json::object();
  if (dataset == "fashion_mnist") {
    const auto& names = data::FashionMnist::class_names();
    for (size_t i = 0; i < names.size(); ++i) labels[std::to_string(i)] = names[i];
  }
  return {{"model_type", model_type},       {"dataset", dataset},       {"num_labels", num_labels},
          {"in_channels", in_channels},     {"image_size", image_size}, {"normalize_mean", normalize_mean},
          {"normalize_std", normalize_std}, {"id2label", labels}};
}

TaskConfig TaskConfig::from_json(const nlohmann::json& j, const std::string& where) {
  HEARTH_CHECK(j.is_object(), ValueError, "[eval] ", where, ": expected a JSON object, got ", j.type_name());
  TaskConfig t;
  t.model_type = get_field<std::string>(j, "model_type", where);
  // Another program's model folder (run_glue's BERT): name the model, not the first field it lacks.
  const auto& known = model_names();
  if (std::find(known.begin(), known.end(), t.model_type) == known.end()) {
    const std::string which = t.model_type == "bert" ? "; evaluate it with run_glue --do_eval --model_name_or_path DIR"
                                                     : "; evaluate it with the program that trained it";
    HEARTH_THROW(ValueError, "[eval] ", where, ": the checkpoint holds a ", t.model_type,
                 " model (config.json model_type), not one of hearth train's (", quoted_choices(known), ")", which);
  }
  t.dataset = get_field<std::string>(j, "dataset", where);
  t.num_labels = get_field<int64_t>(j, "num_labels", where);
  t.in_channels = get_field<int64_t>(j, "in_channels", where);
  t.image_size = get_field<int64_t>(j, "image_size", where);
  t.normalize_mean = get_field<std::vector<double>>(j, "normalize_mean", where);
  t.normalize_std = get_field<std::vector<double>>(j, "normalize_std", where);
  const auto& models = model_names();
  HEARTH_CHECK(std::find(models.begin(), models.end(), t.model_type) != models.end(), ValueError, "[eval] ", where,
               ": field 'model_type': expected ", quoted_choices(models), ", got \"", t.model_type, "\"");
  const auto& sets = dataset_names();
  HEARTH_CHECK(std::find(sets.begin(), sets.end(), t.dataset) != sets.end(), ValueError, "[eval] ", where,
               ": field 'dataset': expected ", quoted_choices(sets), ", got \"", t.dataset, "\"");
  // The sizes build a model: a zero or a huge one would fail far from here
  // (or allocate without bound), so they are held to what a model can take.
  auto check_size = [&](const char* field, int64_t v, int64_t max) {
    HEARTH_CHECK(v >= 1 && v <= max, ValueError, "[eval] ", where, ": field '", field, "': expected 1 to ", max,
                 ", got ", v);
  };
  check_size("num_labels", t.num_labels, 1 << 20);
  check_size("in_channels", t.in_channels, 64);
  check_size("image_size", t.image_size, 4096);
  auto check_per_channel = [&](const char* field, const std::vector<double>& values, bool positive) {
    HEARTH_CHECK(static_cast<int64_t>(values.size()) == t.in_channels, ValueError, "[eval] ", where, ": field '", field,
                 "': expected one value per channel (", t.in_channels, "), got ", values.size());
    for (double x : values)
      HEARTH_CHECK(std::isfinite(x) && (!positive || x > 0), ValueError, "[eval] ", where, ": field '", field,
                   "': expected ", positive ? "positive" : "finite", " numbers, got ", x);
  };
  check_per_channel("normalize_mean", t.normalize_mean, /*positive=*/false);
  check_per_channel("normalize_std", t.normalize_std, /*positive=*/true);
  return t;
}

TaskConfig make_task(const std::string& model, const std::string& dataset) {
  TaskConfig t;
  t.model_type = model;
  t.dataset = dataset;
  // fashion_mnist is the only data set: its shape is the default.
  check_model_fits(t);
  return t;
}

void check_model_fits(const TaskConfig& task) {
  // The torchvision CNNs take the task's channel count in their first conv
  // (grey images need no fake RGB). ResNet's adaptive pool takes any size;
  // VGG's five 2x2 max-pools need 32x32 at least.
  if (task.model_type == "vgg16" || task.model_type == "vgg16_bn") {
    const int64_t min_side = nn::models::vgg_min_image_size(nn::models::vgg_features_cfg(16));
    HEARTH_CHECK(task.image_size >= min_side, ValueError, "[trainer] --model ", task.model_type,
                 " needs images of at least ", min_side, "x", min_side, " (five 2x2 max-pools halve them), but ",
                 task.dataset, " has ", task.image_size, "x", task.image_size,
                 "; use resnet18, resnet34, resnet50, small_cnn or mlp for it");
  }
}

std::shared_ptr<nn::Module> build_model(const TaskConfig& task) {
  if (task.model_type == "mlp") {
    return std::make_shared<nn::models::MLP>(task.in_channels * task.image_size * task.image_size,
                                             std::vector<int64_t>{256, 128}, task.num_labels);
  }
  if (task.model_type.rfind("resnet", 0) == 0) {
    nn::models::ResNetConfig c = nn::models::resnet_config(std::stoi(task.model_type.substr(6)), task.num_labels);
    c.in_channels = task.in_channels;
    return std::make_shared<nn::models::ResNet>(c);
  }
  if (task.model_type == "vgg16" || task.model_type == "vgg16_bn") {
    nn::models::VGGConfig c;
    c.features = nn::models::vgg_features_cfg(16);
    c.batch_norm = task.model_type == "vgg16_bn";
    c.in_channels = task.in_channels;
    c.num_classes = task.num_labels;
    return std::make_shared<nn::models::VGG>(c);
  }
  nn::models::SmallCNNConfig c;
  c.in_channels = task.in_channels;
  c.num_classes = task.num_labels;
  c.image_size = task.image_size;
  return std::make_shared<nn::models::SmallCNN>(c);
}

std::shared_ptr<const data::Dataset> load_split(const TaskConfig& task, bool train, const std::string& data_dir,
                                                int64_t max_samples, std::string* directory) {
  using Split = data::FashionMnist::Split;
  auto raw = std::make_shared<data::FashionMnist>(train ? Split::train : Split::test, data_dir, max_samples);
  if (directory != nullptr) *directory = raw->directory();
  std::shared_ptr<const data::Dataset> ds = raw;
  ds = std::make_shared<data::TransformDataset>(
      ds, std::make_shared<data::Normalize>(task.normalize_mean, task.normalize_std), /*seed=*/0);
  if (max_samples >= 0 && max_samples < ds->size()) ds = std::make_shared<PrefixDataset>(ds, max_samples);
  return ds;
}

train::TrainingArguments default_arguments(const TaskConfig& task) {
  train::TrainingArguments a;
  a.output_dir = "runs/" + task.dataset + "-" + task.model_type;
  a.per_device_train_batch_size = 64;
  a.per_device_eval_batch_size = 256;
  // Measured: 3 epochs of the small CNN reach about 91.5% test accuracy.
  a.learning_rate = 2e-3;
  a.weight_decay = 0.01;
  a.num_train_epochs = 3;
  a.warmup_ratio = 0.02;
  a.logging_steps = 100;
  // An evaluation after every epoch, so that a run shows how it goes; saving
  // keeps Hugging Face's default (every save_steps steps). The run says so as
  // it starts (apps/common/default_differences.h).
  a.eval_strategy = "epoch";
  return a;
}

void save_task_config(const TaskConfig& task, const std::string& dir) {
  io::write_file_atomic((std::filesystem::path(dir) / kTaskConfigFile).string(), task.to_json().dump(2) + "\n");
}

TaskConfig load_task_config(const std::string& dir) {
  std::string path = (std::filesystem::path(dir) / kTaskConfigFile).string();
  // cv_example's checkpoints name their classes (classes.json) instead.
  std::error_code ec;
  HEARTH_CHECK(
      std::filesystem::exists(path, ec) || !std::filesystem::exists(std::filesystem::path(dir) / "classes.json", ec),
      ValueError, "[eval] ", dir, ": the checkpoint holds a cv_example model (classes.json, no ", kTaskConfigFile,
      "), which hearth eval does not read: cv_example evaluates its model after every epoch");
  io::check_regular_file(path, "[eval]");
  std::ifstream in(path);
  HEARTH_CHECK(in.good(), IoError, "[eval] ", dir, ": no readable ", kTaskConfigFile,
               " (the model description `hearth train` writes into every checkpoint)");
  json j = json::parse(hearth::io::read_json_text(in, "[eval] " + path), nullptr, false);
  HEARTH_CHECK(!j.is_discarded(), ValueError, "[eval] ", path, ": not valid JSON");
  return TaskConfig::from_json(j, path);
}

}  // namespace hearth::cli
