#include "apps/common/training_argument_flags.h"

#include <algorithm>

namespace hearth::cli {

void TrainingArgumentFlags::add_to(CLI::App& app, const std::vector<std::string>& skip) {
  for (const train::TrainingArgumentField& field : train::training_argument_fields()) {
    if (std::find(skip.begin(), skip.end(), field.name) != skip.end()) continue;
    std::string& slot = values_[field.name];
    CLI::Option* opt = app.add_option("--" + field.name, slot, field.help);
    if (field.kind == train::TrainingArgumentField::Kind::boolean) opt->expected(0, 1);
    opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    options_[field.name] = opt;
  }
}

bool TrainingArgumentFlags::given(const std::string& name) const {
  auto it = options_.find(name);
  return it != options_.end() && it->second->count() > 0;
}

void TrainingArgumentFlags::apply(train::TrainingArguments& args) const {
  for (const train::TrainingArgumentField& field : train::training_argument_fields()) {
    if (!given(field.name)) continue;
    std::string text = values_.at(field.name);
    // A bare boolean flag (--use_cpu) means true.
    if (text.empty() && field.kind == train::TrainingArgumentField::Kind::boolean) text = "true";
    train::set_training_argument(args, field.name, text, "--" + field.name);
  }
}

}  // namespace hearth::cli
