#include "apps/hearth/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string_view>
#include <thread>

#include <sys/prctl.h>
#include <sys/wait.h>

#include "hearth/core/env.h"
#include "hearth/core/errors.h"
#include "hearth/distributed/arrival.h"
#include "hearth/distributed/rendezvous.h"
#include "hearth/distributed/socket.h"
#include "hearth/train/signals.h"

namespace hearth::cli {
namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_signal_count = 0;

void on_signal(int sig) {
  g_signal = sig;
  g_signal_count = g_signal_count + 1;
}

struct Stream {
  int fd = -1;
  std::string partial;  // the line being assembled
  bool is_err = false;
};

struct Child {
  int local_rank = 0;
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int status = 0;  // the waitpid status once exited
  Stream out, err;
  // The ranks this one said never reached a collective that timed out on it
  // (hearth/distributed/arrival.h): the ones to blame, rather than this one.
  std::vector<int> missing_ranks;
};

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = ::strsignal(WTERMSIG(status));
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + (name ? name : "?") + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

void emit(Child& c, const Stream& s, const std::string& line) {
  if (s.is_err) {
    std::vector<int> missing = distributed::parse_missing_ranks(line);
    if (!missing.empty()) c.missing_ranks = std::move(missing);
  }
  std::string text = "[rank " + std::to_string(c.rank) + "] " + line + "\n";
  std::FILE* f = s.is_err ? stderr : stdout;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fflush(f);
}

// Reads what is available; false at end of stream.
bool pump(Child& c, Stream& s) {
  char buf[4096];
  ssize_t n = ::read(s.fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) {
    if (!s.partial.empty()) emit(c, s, s.partial);
    s.partial.clear();
    ::close(s.fd);
    s.fd = -1;
    return false;
  }
  s.partial.append(buf, static_cast<size_t>(n));
  size_t start = 0;
  for (size_t nl; (nl = s.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string line = s.partial.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    emit(c, s, line);
  }
  s.partial.erase(0, start);
  return true;
}

[[noreturn]] void exec_child(const std::vector<std::string>& command, int out_fd, int err_fd,
                             const std::vector<std::pair<std::string, std::string>>& env) {
  // Killed with the launcher, whatever ends it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // A process group of its own: a Ctrl-C on the terminal reaches the launcher
  // alone, which forwards it once.
  ::setpgid(0, 0);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  // The child's environment: the launcher's, with `env` over it (passed to
  // exec, never written into this process's environment).
  std::vector<std::string> entries;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& kv : env) replaced = replaced || kv.first == key;
    if (!replaced) entries.emplace_back(entry);
  }
  for (const auto& [k, v] : env) entries.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& e : entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvpe(argv[0], argv.data(), envp.data());
  std::fprintf(stderr, "hearth launch: cannot run '%s': %s\n", argv[0], std::strerror(errno));
  std::_Exit(127);
}

// "rank 2 (pid 123, still running) did not arrive at a collective; rank 0 (pid
// 99) timed out waiting for it and exited with status 1".
std::string blame_missing_ranks(const Child& noticed, const std::vector<Child>& children, const std::string& how) {
  std::string s = noticed.missing_ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < noticed.missing_ranks.size(); ++i) {
    const int r = noticed.missing_ranks[i];
    s += (i ? ", " : "") + std::to_string(r);
    for (const Child& c : children)
      if (c.rank == r) s += std::string(" (pid ") + std::to_string(c.pid) + (c.running ? ", still running)" : ")");
  }
  s += " did not arrive at a collective; " + how + " after timing out waiting for ";
  s += noticed.missing_ranks.size() == 1 ? "it" : "them";
  return s;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& launch_environment_defaults() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"NCCL_NVLS_ENABLE", "0"}, {"TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"}, {"NVSHMEM_DISABLE_NVLS", "1"}};
  return v;
}

int launch(const LaunchOptions& o, const std::vector<std::string>& command) {
  HEARTH_CHECK(!command.empty(), ValueError, "[launch] no program to run");
  HEARTH_CHECK(o.nproc_per_node >= 1, ValueError, "[launch] --nproc_per_node must be >= 1, got ", o.nproc_per_node);
  HEARTH_CHECK(o.nnodes >= 1, ValueError, "[launch] --nnodes must be >= 1, got ", o.nnodes);
  HEARTH_CHECK(o.node_rank >= 0 && o.node_rank < o.nnodes, ValueError, "[launch] --node_rank must be in [0, ", o.nnodes,
               "), got ", o.node_rank);
  int port = o.master_port;
  if (port == 0) port = o.nnodes == 1 ? distributed::find_free_port() : 29500;
  const int world = o.nnodes * o.nproc_per_node;
  // OpenMP threads shared out among the ranks of this machine, unless chosen.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::string omp_threads =
      std::to_string(std::max<unsigned>(1, cores / static_cast<unsigned>(o.nproc_per_node)));

  // The rendezvous store's secret: the one given, else a fresh one for a job
  // of this machine alone. The launchers of a multi-node job cannot agree on
  // a fresh one, so there it must be given.
  std::string store_token = distributed::store_token_from_environment();
  if (store_token.empty() && o.nnodes == 1) store_token = distributed::new_store_token();
  if (store_token.empty() && o.node_rank == 0) {
    std::cerr << "hearth launch: warning: " << distributed::kStoreTokenVariable
              << " is not set, so the rendezvous store at " << o.master_addr << ":" << port
              << " accepts any program that reaches it; set it to the same secret on "
              << "every node (e.g. export " << distributed::kStoreTokenVariable << "=$(openssl rand -hex 32))\n";
  }

  struct sigaction sa {
  }, old_int{}, old_term{}, old_hup{};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  // A closed terminal or ssh session: the ranks save a checkpoint and stop.
  ::sigaction(SIGHUP, &sa, &old_hup);
  g_signal = 0;
  g_signal_count = 0;

  std::vector<Child> children(static_cast<size_t>(o.nproc_per_node));
  for (int local = 0; local < o.nproc_per_node; ++local) {
    Child& c = children[static_cast<size_t>(local)];
    c.local_rank = local;
    c.rank = o.node_rank * o.nproc_per_node + local;
    int out[2], err[2];
    HEARTH_CHECK(::pipe2(out, O_CLOEXEC) == 0 && ::pipe2(err, O_CLOEXEC) == 0, IoError,
                 "[launch] cannot create pipes: ", std::strerror(errno));
    std::vector<std::pair<std::string, std::string>> env = {{"RANK", std::to_string(c.rank)},
                                                            {"WORLD_SIZE", std::to_string(world)},
                                                            {"LOCAL_RANK", std::to_string(local)},
                                                            {"LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node)},
                                                            {"GROUP_RANK", std::to_string(o.node_rank)},
                                                            {"MASTER_ADDR", o.master_addr},
                                                            {"MASTER_PORT", std::to_string(port)}};
    for (const auto& kv : launch_environment_defaults()) env.push_back(kv);
    if (!store_token.empty()) env.emplace_back(distributed::kStoreTokenVariable, store_token);
    for (const auto& kv : o.environment) env.push_back(kv);
    if (outside_env("OMP_NUM_THREADS").empty()) env.emplace_back("OMP_NUM_THREADS", omp_threads);
    std::fflush(nullptr);
    pid_t pid = ::fork();
    HEARTH_CHECK(pid >= 0, IoError, "[launch] fork failed: ", std::strerror(errno));
    if (pid == 0) exec_child(command, out[1], err[1], env);
    ::close(out[1]);
    ::close(err[1]);
    c.pid = pid;
    c.running = true;
    c.out.fd = out[0];
    c.err.fd = err[0];
    c.err.is_err = true;
  }

  int result = 0;
  std::string failure;
  bool stopping = false;
  Clock::time_point kill_at{};
  int forwarded = 0;
  for (;;) {
    // Output first, so lines come before the news of their process's exit.
    std::vector<pollfd> fds;
    std::vector<std::pair<Child*, Stream*>> owners;
    for (Child& c : children) {
      for (Stream* s : {&c.out, &c.err}) {
        if (s->fd < 0) continue;
        fds.push_back({s->fd, POLLIN, 0});
        owners.emplace_back(&c, s);
      }
    }
    if (!fds.empty()) {
      int rc = ::poll(fds.data(), fds.size(), 100);
      if (rc > 0) {
        for (size_t i = 0; i < fds.size(); ++i)
          if (fds[i].revents != 0) pump(*owners[i].first, *owners[i].second);
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }

    // Forward signals; a repeated one kills at once.
    if (g_signal_count > forwarded) {
      forwarded = g_signal_count;
      const int sig = forwarded > 1 ? SIGKILL : static_cast<int>(g_signal);
      for (Child& c : children)
        if (c.running) ::kill(c.pid, sig);
    }

    bool any_running = false;
    for (Child& c : children) {
      if (!c.running) continue;
      int status = 0;
      pid_t r = ::waitpid(c.pid, &status, WNOHANG);
      if (r == c.pid) {
        c.running = false;
        c.status = status;
        const int code = exit_code_of(status);
        if (code != 0 && result == 0) {
          // Its last lines (which may name the ranks to blame) before the verdict.
          for (Stream* s : {&c.out, &c.err})
            for (pollfd p{s->fd, POLLIN, 0}; s->fd >= 0 && ::poll(&p, 1, 50) > 0 && pump(c, *s);) p.fd = s->fd;
          result = code;
          failure =
              "rank " + std::to_string(c.rank) + " (pid " + std::to_string(c.pid) + ") " + describe_status(status);
          if (!c.missing_ranks.empty()) failure = blame_missing_ranks(c, children, failure);
          if (!stopping && forwarded == 0) {
            std::cerr << "hearth launch: " << failure << "; stopping the other ranks\n";
            stopping = true;
            kill_at = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(o.grace_seconds * 1000));
            for (Child& other : children)
              if (other.running) ::kill(other.pid, SIGTERM);
          }
        }
      } else {
        any_running = true;
      }
    }
    if (stopping && any_running && Clock::now() >= kill_at) {
      for (Child& c : children)
        if (c.running) ::kill(c.pid, SIGKILL);
    }
    bool any_open = false;
    for (Child& c : children) any_open = any_open || c.out.fd >= 0 || c.err.fd >= 0;
    if (!any_running && !any_open) break;
    if (!any_running) {
      // A grandchild may hold a pipe open: read what is there, then stop.
      for (Child& c : children)
        for (Stream* s : {&c.out, &c.err})
          while (s->fd >= 0) {
            pollfd p{s->fd, POLLIN, 0};
            if (::poll(&p, 1, 200) <= 0 || !pump(c, *s)) {
              if (s->fd >= 0) ::close(s->fd);
              s->fd = -1;
            }
          }
    }
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  // After a stop signal the launcher forwarded, ranks ending on it is the
  // stop asked for, not a failure.
  if (result != 0 && forwarded > 0)
    std::cerr << "hearth launch: stopped by " << train::signal_name(static_cast<int>(g_signal))
              << " (forwarded to every rank): " << failure << "\n";
  else if (result != 0)
    std::cerr << "hearth launch: failed: " << failure << "\n";
  return result;
}

}  // namespace hearth::cli
