#include "apps/common/user_config_flag.h"

namespace hearth::cli {

void UserConfigFlag::add_to(CLI::App& app) {
  app.add_option("--config_file", path_,
                 "your defaults as `hearth config` writes them (default: $HEARTH_CONFIG_FILE, else "
                 "$XDG_CONFIG_HOME/hearth/config.json); flags override them");
}

LoadedUserConfig UserConfigFlag::load(std::ostream* say) const {
  LoadedUserConfig user = load_user_config(path_);
  if (user.found && say != nullptr)
    *say << "hearth: config " << user.path << " sets " << describe_user_config(user) << "\n";
  return user;
}

LoadedUserConfig UserConfigFlag::apply(train::TrainingArguments& args, std::ostream* say) const {
  LoadedUserConfig user = load(say);
  apply_user_config(user, args);
  return user;
}

}  // namespace hearth::cli
