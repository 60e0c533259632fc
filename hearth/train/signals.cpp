#include "hearth/train/signals.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace hearth::train {
namespace {

std::atomic<int> g_pending{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal flag must be lock-free to be set in a handler");

// The checkpoint names a handler may print: fixed buffers, each published by
// a lock-free flag once written (the Trainer writes them between steps).
constexpr size_t kNameBytes = 4096;
char g_last[kNameBytes];
char g_saving[kNameBytes];
std::atomic<bool> g_has_last{false};
std::atomic<bool> g_is_saving{false};

void copy_name(char (&to)[kNameBytes], const std::string& from) {
  const size_t n = std::min(from.size(), kNameBytes - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

// write(2) is async-signal-safe; iostreams are not.
void say(const char* text) {
  ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

void on_stop_signal(int sig) {
  int expected = 0;
  if (g_pending.compare_exchange_strong(expected, sig)) {
    say("\nhearth: stopping after the current step and saving a checkpoint (send the signal again to stop at once)\n");
    return;
  }
  // The second signal: stop now, saying what is on disk.
  if (g_is_saving.load()) {
    say("\nhearth: stopped at once; the checkpoint being saved, ");
    say(g_saving);
    say(", was not finished (the next start removes what it left). ");
  } else {
    say("\nhearth: stopped at once. ");
  }
  if (g_has_last.load()) {
    say("Resume from ");
    say(g_last);
    say(" (--resume_from_checkpoint latest).\n");
  } else {
    say("No checkpoint of this run is complete: it starts from the beginning.\n");
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  ::raise(sig);  // the exit status says which signal, as without a handler
}

}  // namespace

StopSignalGuard::StopSignalGuard() {
  g_pending.store(0);
  g_has_last.store(false);
  g_is_saving.store(false);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // The handler runs to completion before another stop signal is delivered.
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGHUP);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
  sigaction(SIGHUP, &sa, &old_hup_);
}

StopSignalGuard::~StopSignalGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGHUP, &old_hup_, nullptr);
  g_has_last.store(false);
  g_is_saving.store(false);
}

int StopSignalGuard::pending() { return g_pending.load(); }

void StopSignalGuard::set_last_checkpoint(const std::string& dir) {
  g_has_last.store(false);
  if (dir.empty()) return;
  copy_name(g_last, dir);
  g_has_last.store(true);
}

void StopSignalGuard::begin_save(const std::string& dir) {
  g_is_saving.store(false);
  copy_name(g_saving, dir);
  g_is_saving.store(true);
}

void StopSignalGuard::end_save() { g_is_saving.store(false); }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

}  // namespace hearth::train
