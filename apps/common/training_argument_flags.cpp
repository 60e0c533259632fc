#include "apps/common/training_argument_flags.h"

#include <algorithm>
#include <ostream>

#include "hearth/train/user_config.h"

namespace hearth::cli {

void TrainingArgumentFlags::add_to(CLI::App& app, const std::vector<std::string>& skip) {
  app.add_option("--config_file", config_file_,
                 "your defaults as `hearth config` writes them (default: $XDG_CONFIG_HOME/hearth/config.json)");
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

void TrainingArgumentFlags::apply_user_config(train::TrainingArguments& args, std::ostream* say) const {
  train::LoadedUserConfig user = train::load_user_config(config_file_);
  if (user.found && say != nullptr)
    *say << "hearth: config " << user.path << " sets " << train::describe_user_config(user) << "\n";
  train::apply_user_config(user, args);
}

}  // namespace hearth::cli
