// Ctrl-C (SIGINT), SIGTERM and SIGHUP (a closed terminal or ssh session) while
// training. The handler only records the signal (nothing else is safe inside
// one); the Trainer looks at it after each optimizer step, saves a checkpoint
// and returns, so an interrupted run can be resumed exactly. A second signal
// stops at once, saying whether a checkpoint save was cut short and which
// checkpoint to resume from; checkpoints are written atomically, so even that
// leaves no partial one.
#pragma once

#include <csignal>
#include <string>

namespace hearth::train {

class StopSignalGuard {
 public:
  // Installs the handlers (saving the previous ones) and clears any pending
  // signal and any checkpoint names set below.
  StopSignalGuard();
  // Restores the previous handlers.
  ~StopSignalGuard();
  StopSignalGuard(const StopSignalGuard&) = delete;
  StopSignalGuard& operator=(const StopSignalGuard&) = delete;

  // The signal received since installation (SIGINT, SIGTERM, SIGHUP), or 0.
  static int pending();

  // What a second signal's message names: the newest complete checkpoint
  // (what to resume from; "" when none), and the one being written between
  // begin_save and end_save. Called by the Trainer, never from a handler.
  static void set_last_checkpoint(const std::string& dir);
  static void begin_save(const std::string& dir);
  static void end_save();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_hup_ {};
};

// "SIGINT", "SIGTERM", "SIGHUP", else "a signal".
const char* signal_name(int sig);

}  // namespace hearth::train
