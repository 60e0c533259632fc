// Ctrl-C (SIGINT) and SIGTERM while training. The handler only records the
// signal (nothing else is safe inside one); the Trainer looks at it after each
// optimizer step, saves a checkpoint and returns, so an interrupted run can
// be resumed exactly. The handler re-arms the default action, so a second
// Ctrl-C stops at once; checkpoints are written atomically, so even that
// leaves no partial one.
#pragma once

#include <csignal>

namespace hearth::train {

class StopSignalGuard {
 public:
  // Installs the handlers (saving the previous ones) and clears any pending signal.
  StopSignalGuard();
  // Restores the previous handlers.
  ~StopSignalGuard();
  StopSignalGuard(const StopSignalGuard&) = delete;
  StopSignalGuard& operator=(const StopSignalGuard&) = delete;

  // The signal received since installation (SIGINT, SIGTERM), or 0.
  static int pending();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// "SIGINT", "SIGTERM", else "a signal".
const char* signal_name(int sig);

}  // namespace hearth::train
