// Subcommands of the `hearth` command: each add_* registers its options and a
// callback; run_selected runs the chosen one.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace hearth::cli {

void add_ops_command(CLI::App& app);
void add_env_command(CLI::App& app);

// Registers `fn` to run when `sub` is selected; it returns the exit code.
void on_run(CLI::App* sub, std::function<int()> fn);
int run_selected(CLI::App& app);

}  // namespace hearth::cli
