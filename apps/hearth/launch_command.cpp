// `hearth launch`: runs a program as the ranks of a data-parallel job, like
// torchrun. Everything after the program's name is the program's.
//
//   hearth launch --nproc_per_node 2 hearth train --cpu --max_steps 100
//   hearth launch --nnodes 2 --node_rank 0 --master_addr node0 --nproc_per_node 8 ./my_trainer
//
// The user's config (`hearth config`, or --config_file) gives the number of
// processes when --nproc_per_node is not given, and reaches every rank: the
// launcher checks the file once, before starting anything, and hands its path
// to the ranks in HEARTH_CONFIG_FILE, so each hearth program takes the device,
// precision, CPU fallback and output directory from the same file as
// `hearth train` does, under its own flags.
#include <iostream>
#include <memory>

#include "apps/common/user_config_flag.h"
#include "apps/hearth/commands.h"
#include "apps/hearth/launcher.h"
#include "hearth/core/errors.h"

namespace hearth::cli {
namespace {

struct LaunchFlags {
  LaunchOptions options;
  UserConfigFlag user_config;
};

int run_launch(LaunchFlags& f, CLI::App* sub) {
  std::vector<std::string> cmd = sub->remaining();
  if (cmd.empty())
    throw UsageError("expected a program to run after the options (hearth launch --nproc_per_node N PROGRAM ARGS...)");
  LaunchOptions o = f.options;
  try {
    LoadedUserConfig user = f.user_config.load(&std::cout);
    // Every value the ranks will apply, checked here once: a bad file is one
    // message before any process starts, not one per rank. It also sets
    // HEARTH_ENABLE_CPU_FALLBACK when the file asks, which the ranks inherit.
    train::TrainingArguments checked;
    apply_user_config(user, checked);
    if (sub->count("--nproc_per_node") == 0 && user.has("num_processes"))
      o.nproc_per_node = static_cast<int>(user.config.num_processes);
    for (const auto& kv : user_config_environment(user)) o.environment.push_back(kv);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  return launch(o, cmd);
}

}  // namespace

void add_launch_command(CLI::App& app) {
  auto* sub = app.add_subcommand("launch", "Run a program as N data-parallel processes (like torchrun)");
  auto f = std::make_shared<LaunchFlags>();
  LaunchOptions& o = f->options;
  sub->add_option("--nproc_per_node", o.nproc_per_node,
                  "processes on this machine, one per GPU (default: num_processes of your config, else 1)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--nnodes", o.nnodes, "machines in the job (default 1)");
  sub->add_option("--node_rank", o.node_rank, "this machine's index in [0, nnodes) (default 0)");
  sub->add_option("--master_addr", o.master_addr, "rank 0's machine (default 127.0.0.1)");
  sub->add_option("--master_port", o.master_port,
                  "rank 0's store port (default: a free port on one machine, 29500 on several)");
  sub->add_option("--grace_period", o.grace_seconds,
                  "seconds the other ranks get to stop after one fails, before SIGKILL (default 5)");
  f->user_config.add_to(*sub);
  // PROGRAM ARGS...: from the first positional on, everything is the program's.
  sub->prefix_command();
  sub->footer("PROGRAM ARGS...: the program every rank runs, with its arguments");
  on_run(sub, [f, sub] { return run_launch(*f, sub); });
}

}  // namespace hearth::cli
