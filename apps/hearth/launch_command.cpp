// `hearth launch`: runs a program as the ranks of a data-parallel job, like
// torchrun. Everything after the program's name is the program's.
//
//   hearth launch --nproc_per_node 2 hearth train --cpu --max_steps 100
//   hearth launch --nnodes 2 --node_rank 0 --master_addr node0 --nproc_per_node 8 ./my_trainer
#include <memory>

#include "apps/hearth/commands.h"
#include "apps/hearth/launcher.h"

namespace hearth::cli {

void add_launch_command(CLI::App& app) {
  auto* sub = app.add_subcommand("launch", "Run a program as N data-parallel processes (like torchrun)");
  auto o = std::make_shared<LaunchOptions>();
  sub->add_option("--nproc_per_node", o->nproc_per_node, "processes on this machine (one per GPU)")->required();
  sub->add_option("--nnodes", o->nnodes, "machines in the job (default 1)");
  sub->add_option("--node_rank", o->node_rank, "this machine's index in [0, nnodes) (default 0)");
  sub->add_option("--master_addr", o->master_addr, "rank 0's machine (default 127.0.0.1)");
  sub->add_option("--master_port", o->master_port,
                  "rank 0's store port (default: a free port on one machine, 29500 on several)");
  sub->add_option("--grace_period", o->grace_seconds,
                  "seconds the other ranks get to stop after one fails, before SIGKILL (default 5)");
  // PROGRAM ARGS...: from the first positional on, everything is the program's.
  sub->prefix_command();
  sub->footer("PROGRAM ARGS...: the program every rank runs, with its arguments");
  on_run(sub, [o, sub] {
    std::vector<std::string> cmd = sub->remaining();
    if (cmd.empty())
      throw UsageError(
          "expected a program to run after the options (hearth launch --nproc_per_node N PROGRAM ARGS...)");
    return launch(*o, cmd);
  });
}

}  // namespace hearth::cli
