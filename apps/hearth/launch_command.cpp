// `hearth launch`: runs a program as the ranks of a data-parallel job, like
// torchrun. Everything after the program's name is the program's.
//
//   hearth launch --nproc_per_node 2 hearth train --cpu --max_steps 100
//   hearth launch --nnodes 2 --node_rank 0 --master_addr node0 --nproc_per_node 8 ./my_trainer
//
// torchrun's spellings (--nproc-per-node, --node-rank, --master-addr,
// --master-port, --standalone) and accelerate launch's (--num_processes, the
// total over all machines, --num_machines, --machine_rank, --main_process_ip,
// --main_process_port, --multi_gpu, --cpu, --mixed_precision) are accepted, so
// their documented commands run unchanged. --cpu and --mixed_precision reach
// the ranks as the device and precision of the config file they read (the
// program's own flags still win). Any other option before the program is an
// error: it is never run as the program.
//
// The user's config (`hearth config`, or --config_file) gives the number of
// processes when --nproc_per_node is not given, and reaches every rank: the
// launcher checks the file once, before starting anything, and hands its path
// to the ranks in HEARTH_CONFIG_FILE, so each hearth program takes the device,
// precision, CPU fallback and output directory from the same file as
// `hearth train` does, under its own flags.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "apps/common/user_config_flag.h"
#include "apps/hearth/commands.h"
#include "apps/hearth/launcher.h"
#include "hearth/core/env.h"
#include "hearth/core/errors.h"
#include "hearth/io/atomic_file.h"

namespace hearth::cli {
namespace {

struct LaunchFlags {
  LaunchOptions options;
  UserConfigFlag user_config;
  int num_processes = 0;        // accelerate launch: processes over all machines
  bool standalone = false;      // torchrun: one machine, a free local port
  bool multi_gpu = false;       // accelerate launch: one process per GPU, as the count says
  bool cpu = false;             // accelerate launch: the ranks run on the CPU
  std::string mixed_precision;  // accelerate launch: no, fp16 or bf16
};

// A folder of its own for the config file the ranks read, removed with it.
struct TempConfigDir {
  std::string path;
  ~TempConfigDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

// The user's config with the launcher's --cpu / --mixed_precision over it: the
// keys the file set, and those two, as a file the ranks are pointed at.
void write_overriding_config(const LaunchFlags& f, const LoadedUserConfig& user, LaunchOptions& o, TempConfigDir& dir) {
  nlohmann::json all = user.config.to_json(), j = nlohmann::json::object();
  for (const std::string& key : user.keys) j[key] = all[key];
  if (f.cpu) j["device"] = "cpu";
  if (!f.mixed_precision.empty()) j["precision"] = f.mixed_precision == "no" ? "fp32" : f.mixed_precision + "-mixed";
  train::TrainingArguments checked;
  apply_user_config(parse_user_config(j, "hearth launch --cpu/--mixed_precision"), checked);
  const std::string tmp = outside_env("TMPDIR");
  std::string pattern = (tmp.empty() ? std::string("/tmp") : tmp) + "/hearth-launch-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw UsageError("cannot create a folder for the ranks' config in " + pattern + ": " + std::strerror(errno));
  dir.path = pattern;
  const std::string file = dir.path + "/config.json";
  io::write_file_atomic(file, j.dump(2) + "\n");
  std::erase_if(o.environment, [](const auto& kv) { return kv.first == kUserConfigFileVariable; });
  o.environment.emplace_back(kUserConfigFileVariable, file);
}

bool is_executable(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// The program to start: a path or a name on PATH as given; else one of
// hearth's programs installed beside hearth (cv_example, run_glue), which
// Accelerate's habit names bare or as a script (accelerate launch
// cv_example.py): found there, it runs, and the launcher says where it is.
// Anything else is left to the ranks, which say that it cannot run.
std::string locate_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;  // as given; the ranks say if it cannot run
  const std::string dirs = outside_env("PATH");
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && is_executable(std::filesystem::path(dir) / name)) return name;
    start = end + 1;
  }
  std::error_code ec;
  const std::filesystem::path here = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  std::string bare = name;
  if (bare.size() > 3 && bare.compare(bare.size() - 3, 3, ".py") == 0) bare.resize(bare.size() - 3);
  const std::filesystem::path beside = here / bare;
  if (!ec && is_executable(beside)) {
    std::cout << "hearth launch: '" << name << "' is not on PATH; running hearth's " << bare << " at "
              << beside.string() << "\n";
    return beside.string();
  }
  return name;  // the ranks say that it cannot run
}

int run_launch(LaunchFlags& f, CLI::App* sub) {
  std::vector<std::string> cmd = sub->remaining();
  if (!cmd.empty() && cmd.front() == "--") cmd.erase(cmd.begin());
  if (cmd.empty())
    throw UsageError("expected a program to run after the options (hearth launch --nproc_per_node N PROGRAM ARGS...)");
  if (cmd.front().size() > 1 && cmd.front()[0] == '-')
    throw UsageError("unknown option '" + cmd.front() +
                     "' before the program (see 'hearth launch --help'; torchrun's and accelerate launch's spellings "
                     "are accepted)");
  cmd.front() = locate_program(cmd.front());
  LaunchOptions o = f.options;
  if (f.standalone) {
    if (o.nnodes != 1)
      throw UsageError("--standalone runs on one machine, but --nnodes is " + std::to_string(o.nnodes));
    o.master_addr = "127.0.0.1";
  }
  const bool nproc_given = sub->count("--nproc_per_node") > 0;
  if (sub->count("--num_processes") > 0) {
    if (nproc_given) throw UsageError("--num_processes and --nproc_per_node both give the process count: pass one");
    if (f.num_processes % o.nnodes != 0)
      throw UsageError("--num_processes " + std::to_string(f.num_processes) + " is not a multiple of --num_machines " +
                       std::to_string(o.nnodes));
    o.nproc_per_node = f.num_processes / o.nnodes;
  }
  TempConfigDir config_dir;
  try {
    LoadedUserConfig user = f.user_config.load(&std::cout);
    // Every value the ranks will apply, checked here once: a bad file is one
    // message before any process starts, not one per rank. It also sets
    // HEARTH_ENABLE_CPU_FALLBACK when the file asks, which the ranks inherit.
    train::TrainingArguments checked;
    apply_user_config(user, checked);
    if (!nproc_given && sub->count("--num_processes") == 0 && user.has("num_processes"))
      o.nproc_per_node = static_cast<int>(user.config.num_processes);
    for (const auto& kv : user_config_environment(user)) o.environment.push_back(kv);
    if (f.cpu || !f.mixed_precision.empty()) write_overriding_config(f, user, o, config_dir);
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
  sub->add_option("--nproc_per_node,--nproc-per-node", o.nproc_per_node,
                  "processes on this machine, one per GPU (default: num_processes of your config, else 1)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--num_processes", f->num_processes,
                  "processes over all machines, as accelerate launch counts them (instead of --nproc_per_node)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--nnodes,--num_machines", o.nnodes, "machines in the job (default 1)")
      ->check(CLI::Range(1, 1 << 16));
  sub->add_option("--node_rank,--node-rank,--machine_rank", o.node_rank,
                  "this machine's index in [0, nnodes) (default 0)");
  sub->add_option("--master_addr,--master-addr,--main_process_ip", o.master_addr,
                  "rank 0's machine (default 127.0.0.1)");
  sub->add_option("--master_port,--master-port,--main_process_port", o.master_port,
                  "rank 0's store port (default: a free port on one machine, 29500 on several)");
  sub->add_flag("--standalone", f->standalone, "one machine, rank 0 on this one at a free port (torchrun's)");
  sub->add_flag("--multi_gpu", f->multi_gpu, "one process per GPU, as many as the process count says (accelerate's)");
  sub->add_flag("--cpu", f->cpu, "the ranks run on the CPU (their config's device becomes cpu)");
  sub->add_option("--mixed_precision", f->mixed_precision,
                  "no, fp16 or bf16: the ranks' precision (their config's precision becomes fp32, fp16-mixed or "
                  "bf16-mixed)")
      ->check(CLI::IsMember({"no", "fp16", "bf16"}));
  sub->add_option("--grace_period", o.grace_seconds,
                  "seconds the other ranks get to stop after one fails, before SIGKILL (default 5)");
  f->user_config.add_to(*sub);
  // PROGRAM ARGS...: from the first positional on, everything is the program's.
  sub->prefix_command();
  sub->footer("PROGRAM ARGS...: the program every rank runs, with its arguments");
  on_run(sub, [f, sub] { return run_launch(*f, sub); });
}

}  // namespace hearth::cli
