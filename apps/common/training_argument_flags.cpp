#include "apps/common/training_argument_flags.h"

#include <algorithm>
#include <ostream>

#include "apps/common/user_config.h"

namespace hearth::cli {

namespace {

// Boolean fields that are on by default, so that a --no_ flag is how to say off.
const std::vector<std::string> kOnByDefault = {"step_graphs"};
// Fields of other types that Hugging Face's parser also takes bare, meaning true.
const std::vector<std::string> kBareMeansTrue = {"include_num_input_tokens_seen"};

bool bare_means_true(const train::TrainingArgumentField& field) {
  return field.kind == train::TrainingArgumentField::Kind::boolean ||
         std::find(kBareMeansTrue.begin(), kBareMeansTrue.end(), field.name) != kBareMeansTrue.end();
}

// What --help shows after a flag: the field's type, not the TEXT of the
// string every flag is read into.
const char* type_name(train::TrainingArgumentField::Kind kind) {
  using Kind = train::TrainingArgumentField::Kind;
  switch (kind) {
    case Kind::boolean:
      return "BOOL";
    case Kind::integer:
      return "INT";
    case Kind::number:
      return "FLOAT";
    case Kind::string:
      return "TEXT";
    case Kind::string_list:
      return "TEXT[,TEXT...]";
  }
  return "TEXT";
}

// The default as --help shows it: JSON's spelling, strings unquoted, nothing
// for an unset optional field.
std::string default_text(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string s;
    for (const nlohmann::json& e : v) s += (s.empty() ? "" : ",") + (e.is_string() ? e.get<std::string>() : e.dump());
    return s;
  }
  return v.dump();
}

}  // namespace

void TrainingArgumentFlags::add_to(CLI::App& app, const std::vector<std::string>& skip,
                                   const train::TrainingArguments& defaults) {
  user_config_.add_to(app);
  for (const train::TrainingArgumentField& field : train::training_argument_fields()) {
    if (std::find(skip.begin(), skip.end(), field.name) != skip.end()) continue;
    std::string& slot = values_[field.name];
    std::string names = "--" + field.name;
    for (const std::string& alias : field.aliases) names += ",--" + alias;
    CLI::Option* opt = app.add_option(names, slot, field.help);
    const std::string default_value = default_text(field.get(defaults));
    if (bare_means_true(field)) {
      // CLI11 gives a bare flag (--use_cpu) its default string as the value,
      // so a boolean's default is shown in its type name instead: BOOL=false.
      const std::string type = field.kind == train::TrainingArgumentField::Kind::boolean ? "BOOL" : "[TEXT]";
      opt->type_name(default_value.empty() ? type : type + "=" + default_value);
    } else {
      opt->type_name(type_name(field.kind));
      opt->default_str(default_value);
    }
    // The fields that change nothing here, apart, so that --help reads well.
    opt->group(field.no_effect.empty() ? "Training arguments" : "Hugging Face training arguments without effect");
    if (bare_means_true(field)) opt->expected(0, 1);
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    options_[field.name] = opt;
    if (std::find(kOnByDefault.begin(), kOnByDefault.end(), field.name) != kOnByDefault.end())
      negations_[field.name] = app.add_flag("--no_" + field.name)->description("--" + field.name + " false");
  }
  // Names transformers 5 removed: taken, so that apply() can say what replaced them.
  for (const auto& [name, instead] : train::removed_training_arguments()) {
    CLI::Option* opt = app.add_option("--" + name, removed_values_[name])->expected(0, 1)->group("");
    removed_[name] = opt;
  }
}

bool TrainingArgumentFlags::given(const std::string& name) const {
  auto it = options_.find(name);
  auto no = negations_.find(name);
  return (it != options_.end() && it->second->count() > 0) || (no != negations_.end() && no->second->count() > 0);
}

namespace {

const std::vector<std::string> kPrecisionFlags = {"precision", "bf16", "fp16"};

bool is_precision_flag(const std::string& name) {
  return std::find(kPrecisionFlags.begin(), kPrecisionFlags.end(), name) != kPrecisionFlags.end();
}

}  // namespace

void TrainingArgumentFlags::set_given(train::TrainingArguments& args, const train::TrainingArgumentField& field) const {
  std::string text = values_.at(field.name);
  auto no = negations_.find(field.name);
  if (no != negations_.end() && no->second->count() > 0) text = "false";  // --no_<name> wins
  // A bare boolean flag (--use_cpu) means true.
  if (text.empty() && bare_means_true(field)) text = "true";
  train::set_training_argument(args, field.name, text, "--" + field.name);
}

std::string TrainingArgumentFlags::precision_from_flags() const {
  train::TrainingArguments alone;  // the flags over the default precision, fp32
  bool any = false;
  for (const train::TrainingArgumentField& field : train::training_argument_fields()) {
    if (!is_precision_flag(field.name) || !given(field.name)) continue;
    set_given(alone, field);
    any = true;
  }
  if (!any || (!given("precision") && alone.precision == train::TrainingArguments{}.precision)) return "";
  return alone.precision;
}

void TrainingArgumentFlags::apply(train::TrainingArguments& args) const {
  for (const auto& [name, opt] : removed_)
    if (opt->count() > 0) train::refuse_removed_field(name, "--" + name);
  const std::string precision = precision_from_flags();
  for (const train::TrainingArgumentField& field : train::training_argument_fields()) {
    if (!given(field.name) || (!precision.empty() && is_precision_flag(field.name))) continue;
    set_given(args, field);
  }
  if (!precision.empty()) args.precision = precision;
}

LoadedUserConfig TrainingArgumentFlags::apply_user_config(train::TrainingArguments& args, std::ostream* say) const {
  return user_config_.apply(args, say);
}

}  // namespace hearth::cli
