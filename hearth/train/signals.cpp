#include "hearth/train/signals.h"

#include <unistd.h>

#include <atomic>

namespace hearth::train {
namespace {

std::atomic<int> g_pending{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal flag must be lock-free to be set in a handler");

void on_stop_signal(int sig) {
  g_pending.store(sig);
  // write(2) is async-signal-safe; iostreams are not.
  static const char msg[] =
      "\nhearth: stopping after the current step and saving a checkpoint (send the signal again to stop at once)\n";
  ssize_t ignored = ::write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
}

}  // namespace

StopSignalGuard::StopSignalGuard() {
  g_pending.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

StopSignalGuard::~StopSignalGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int StopSignalGuard::pending() { return g_pending.load(); }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

}  // namespace hearth::train
