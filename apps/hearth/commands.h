// Subcommands of the `hearth` command: each add_* registers its options and a
// callback; run_selected runs the chosen one.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <CLI/CLI.hpp>

namespace hearth::cli {

void add_ops_command(CLI::App& app);
void add_env_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_launch_command(CLI::App& app);

// The command line hearth was started with (argv), for commands that start
// hearth again (train --devices).
void set_command_line(int argc, char** argv);
const std::vector<std::string>& command_line();
void add_bench_command(CLI::App& app);
void add_config_command(CLI::App& app);
void add_plot_command(CLI::App& app);
void add_estimate_memory_command(CLI::App& app);
void add_generate_command(CLI::App& app);

// Registers `fn` to run when `sub` is selected; it returns the exit code.
void on_run(CLI::App* sub, std::function<int()> fn);
int run_selected(CLI::App& app);

// A bad flag or value: main prints the message on one line and exits with
// kUsageExitCode, as for the parser's own errors.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
inline constexpr int kUsageExitCode = 2;

}  // namespace hearth::cli
