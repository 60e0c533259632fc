#include "apps/common/json_config.h"

#include <fstream>

#include "apps/common/closest_name.h"
#include "apps/common/training_argument_flags.h"
#include "hearth/core/errors.h"
#include "hearth/io/file_checks.h"
#include "hearth/io/json_limits.h"

namespace hearth::cli {
namespace {

using json = nlohmann::json;

// A scalar as an option's text, as it would be typed after the flag.
std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();  // true, false, 3, 2e-05
}

// The options the file cannot set: the ones that end parsing or read this file.
bool is_reserved(const CLI::Option* opt, const std::string& config_flag) {
  return opt->check_name("--help") || opt->check_name("--help-all") || opt->check_name(config_flag);
}

// Sets an option of the app from the file, as if its value had been typed.
void set_option(CLI::Option& opt, const std::string& where, const json& value) {
  std::vector<std::string> inputs;
  if (value.is_array()) {
    for (const json& e : value) {
      if (e.is_object() || e.is_array() || e.is_null())
        HEARTH_THROW(ValueError, where, ": expected a value or a list of values, got ", value.dump());
      inputs.push_back(scalar_text(e));
    }
  } else if (value.is_object()) {
    HEARTH_THROW(ValueError, where, ": expected a value or a list of values, got a JSON object");
  } else {
    inputs.push_back(scalar_text(value));
  }
  // An empty list leaves the flag at its default: an option given no values
  // at all would be reduced from an empty result list.
  if (inputs.empty()) return;
  opt.add_result(inputs);
  try {
    opt.run_callback();
  } catch (const CLI::Error& e) {
    HEARTH_THROW(ValueError, where, ": ", e.what());
  }
}

// Every name the file may use: the app's long flag names and the training arguments'.
std::vector<std::string> known_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& n : opt->get_lnames()) names.push_back(n);
  for (const train::TrainingArgumentField& f : train::training_argument_fields()) names.push_back(f.name);
  return names;
}

}  // namespace

void JsonConfigFlag::add_to(CLI::App& app, const std::string& flag) {
  app.add_option(flag, path_,
                 "JSON file of this program's arguments by name (its own flags and every TrainingArguments field, "
                 "as Hugging Face's scripts read one); flags on the command line win");
}

void JsonConfigFlag::read(CLI::App& app, const TrainingArgumentFlags* training_flags) {
  training_ = json::object();
  if (path_.empty()) return;
  // Checked before the file is opened: a FIFO would block the read forever.
  io::check_regular_file(path_, "--config");
  std::ifstream in(path_);
  HEARTH_CHECK(in.good(), IoError, "--config: cannot read '", path_, "'");
  const json j = json::parse(io::read_json_text(in, "--config: '" + path_ + "'"), nullptr, /*allow_exceptions=*/false);
  HEARTH_CHECK(!j.is_discarded(), ValueError, "--config: '", path_, "' is not valid JSON");
  HEARTH_CHECK(j.is_object(), ValueError, "--config: '", path_,
               "': expected a JSON object of argument names and values");
  for (const auto& [key, value] : j.items()) {
    const std::string where = "--config: '" + path_ + "': field '" + key + "'";
    train::refuse_removed_field(key, where);  // naming what replaced it
    const train::TrainingArgumentField* field = train::find_training_argument_field(key);
    CLI::Option* own = app.get_option_no_throw("--" + key);
    // A training flag's option is set through the training arguments, so
    // that the value keeps its JSON type (lists, objects).
    if (own != nullptr && field != nullptr && training_flags != nullptr && training_flags->defines(field->name))
      own = nullptr;
    if (own != nullptr && is_reserved(own, "--config")) own = nullptr;
    // As Hugging Face's parse_json_file refuses keys no dataclass has: a
    // misspelled key ignored would train with the default instead.
    if (own == nullptr && field == nullptr)
      HEARTH_THROW(ValueError, where, ": expected one of this program's flags or a TrainingArguments name",
                   did_you_mean(key, known_names(app)), ", got an unknown field");
    if (value.is_null()) continue;  // unset: as the defaults have it
    if (own == nullptr) {
      training_[key] = value;
    } else if (own->count() == 0) {  // else the command line wins
      set_option(*own, where, value);
    }
  }
}

train::TrainingArguments JsonConfigFlag::apply(const train::TrainingArguments& base) const {
  if (path_.empty()) return base;
  return train::TrainingArguments::from_json(training_, "--config: '" + path_ + "'", base);
}

}  // namespace hearth::cli
