// The `hearth` command. Each subcommand lives in its own file and registers
// itself here through a small table, like git's builtins.
#include <iostream>

#include <CLI/CLI.hpp>

#include "apps/hearth/commands.h"
#include "hearth/core/errors.h"
#include "hearth/core/exception_report.h"
#include "hearth/core/input_error.h"
#include "hearth/core/switches.h"
#include "hearth/version.h"

namespace {

// "train" when a subcommand was being parsed, for the hint that follows an error.
std::string selected_name(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return " " + sub->get_name();
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hearth: train deep-learning models on your GPU, or your CPU"};
  app.require_subcommand(0, 1);
  // A flag given twice takes its last value, as Python's argparse does (subcommands inherit this).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  bool version = false;
  app.add_flag("--version", version, "Print the version and exit");
  hearth::cli::add_ops_command(app);
  hearth::cli::add_env_command(app);
  hearth::cli::add_train_command(app);
  hearth::cli::add_eval_command(app);
  hearth::cli::add_launch_command(app);
  hearth::cli::set_command_line(argc, argv);
  hearth::cli::add_bench_command(app);
  hearth::cli::add_config_command(app);
  hearth::cli::add_plot_command(app);
  hearth::cli::add_estimate_memory_command(app);
  hearth::cli::add_generate_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    // One line naming the flag, then where to find what is allowed.
    std::cerr << "hearth" << selected_name(app) << ": error: " << e.what() << " (see 'hearth" << selected_name(app)
              << " --help')\n";
    return hearth::cli::kUsageExitCode;
  }
  // Every switch's value is checked before anything runs (a bad one: one
  // line and status 2), except by `hearth env`, which shows what is wrong.
  if (selected_name(app) != " env") hearth::validate_switches_or_exit("hearth");
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
  } catch (const hearth::cli::UsageError& e) {
    std::cerr << "hearth" << selected_name(app) << ": error: " << e.what() << "\n";
    return hearth::cli::kUsageExitCode;
  } catch (const hearth::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return hearth::cli::kUsageExitCode;
  } catch (const hearth::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (...) {
    // Anything else (out of memory, a filesystem or system error) is one line too.
    std::cerr << "hearth" << selected_name(app) << ": error: " << hearth::describe_current_exception() << "\n";
    return 1;
  }
}
