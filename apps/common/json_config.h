// --config FILE.json: one JSON object of a program's arguments by name, read
// as Hugging Face's HfArgumentParser.parse_json_file reads a script's single
// JSON file. Keys naming the program's own flags (run_glue's
// model_name_or_path, cv_example's num_epochs, ...) set those flags where the
// command line did not; keys naming TrainingArguments fields become training
// arguments, under the training flags of the command line. A JSON null leaves
// the flag or field as it is. The values keep their JSON types, so lists and
// objects (Hugging Face's fsdp: [], fsdp_config: {...}) reach the field that
// reads them unchanged.
//
//   JsonConfigFlag config;
//   config.add_to(app);                      // before parsing
//   app.parse(argc, argv);
//   config.read(app, &training_flags);       // after parsing
//   args = config.apply(args);               // then the training flags
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "hearth/train/training_arguments.h"

namespace hearth::cli {

class TrainingArgumentFlags;

class JsonConfigFlag {
 public:
  JsonConfigFlag() = default;
  // The option points into this object, so it must not move once added.
  JsonConfigFlag(const JsonConfigFlag&) = delete;
  JsonConfigFlag& operator=(const JsonConfigFlag&) = delete;

  void add_to(CLI::App& app, const std::string& flag = "--config");
  // After app.parse(): reads the file --config named, if any. A key that is
  // one of `training_flags`' flags (or, for a program without them, that is a
  // TrainingArguments field and none of the app's options) is kept for
  // apply(); any other naming an option of `app` sets that option unless the
  // command line gave it. ValueError naming the file and the key for what
  // cannot be read; IoError when the file cannot be opened.
  void read(CLI::App& app, const TrainingArgumentFlags* training_flags);
  // The file --config named; empty when it was not given.
  const std::string& path() const { return path_; }
  // The training arguments the file sets (a JSON object; empty without a file).
  const nlohmann::json& training_arguments() const { return training_; }
  // `base` with the file's training arguments set over it (ValueError naming
  // the file and the field for a bad value).
  train::TrainingArguments apply(const train::TrainingArguments& base) const;

 private:
  std::string path_;
  nlohmann::json training_ = nlohmann::json::object();
};

}  // namespace hearth::cli
