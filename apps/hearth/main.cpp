// The `hearth` command. Each subcommand lives in its own file and registers
// itself here through a small table, like git's builtins.
#include <CLI/CLI.hpp>
#include <iostream>

#include "apps/hearth/commands.h"
#include "hearth/core/errors.h"

int main(int argc, char** argv) {
  CLI::App app{"hearth: train deep-learning models on your GPU, or your CPU"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print the version and exit");
  hearth::cli::add_ops_command(app);
  hearth::cli::add_env_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (version) {
    std::cout << "hearth " << HEARTH_VERSION << "\n";
    return 0;
  }
  if (app.get_subcommands().empty()) {
    std::cout << app.help();
    return 0;
  }
  try {
    return hearth::cli::run_selected(app);
  } catch (const hearth::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
