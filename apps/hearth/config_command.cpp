// `hearth config`: asks for the user's defaults (device, processes, precision,
// CPU fallback, output directory) and writes them where every hearth program
// reads them (apps/common/user_config.h); --default writes them without asking.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "apps/common/config_questionnaire.h"
#include "apps/common/user_config.h"
#include "apps/hearth/commands.h"
#include "hearth/core/errors.h"

namespace hearth::cli {
namespace {

struct ConfigFlags {
  std::string config_file;
  bool use_defaults = false;
};

int run_config(const ConfigFlags& f) {
  const std::string path = user_config_path(f.config_file);
  UserConfig config;
  if (!f.use_defaults) {
    // Answers start from the file being replaced, so running it again changes one thing easily.
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      try {
        config = load_user_config(path).config;
      } catch (const Error& e) {
        std::cout << "hearth config: ignoring the current file: " << e.what() << "\n";
      }
    }
    const bool typed = ::isatty(STDIN_FILENO) == 1;
    if (typed) std::cout << "Press Enter to keep the value in brackets.\n";
    config = ask_user_config(std::cin, std::cout, config, /*echo_answers=*/!typed);
  }
  save_user_config(config, path);
  std::cout << "hearth config: wrote " << path << "\n" << config.to_json().dump(2) << "\n";
  return 0;
}

}  // namespace

void add_config_command(CLI::App& app) {
  auto* sub = app.add_subcommand("config", "Ask for your defaults (device, precision, ...) and save them for hearth");
  auto f = std::make_shared<ConfigFlags>();
  sub->add_option("--config_file", f->config_file,
                  "where to write (default: $HEARTH_CONFIG_FILE, else $XDG_CONFIG_HOME/hearth/config.json, else "
                  "~/.config/hearth/config.json)");
  sub->add_flag("--default", f->use_defaults, "write the default settings without asking");
  on_run(sub, [f] { return run_config(*f); });
}

}  // namespace hearth::cli
