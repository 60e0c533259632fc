// Runs code that must not block on a FIFO: `run` goes to another thread, and
// when it has not returned within the time allowed, the FIFO is opened from
// this side (for reading and for writing) so the blocked call returns and the
// test fails instead of hanging.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>

namespace hearth::testing {

// True when `run` returned (or threw) within `seconds`.
template <typename Run>
bool returns_without_blocking(const std::string& fifo, Run&& run, double seconds = 5.0) {
  auto done = std::async(std::launch::async, [&] {
    try {
      run();
    } catch (...) {
    }
  });
  if (done.wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready) return true;
  // Unblock both directions: a reader for a blocked writer, a writer for a blocked reader.
  const int r = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  const int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  if (w >= 0) ::close(w);
  done.wait();
  if (r >= 0) ::close(r);
  return false;
}

}  // namespace hearth::testing
