// Logging is never why training stops: a log (metrics.jsonl, TensorBoard
// events, the curves) that cannot be written, because the disk is full, a
// symlink or FIFO sits at its name or its folder is gone, is given up with
// one warning while the run goes on, checkpoints included.
#pragma once

#include <exception>
#include <iostream>
#include <string>

namespace hearth::train {

class LogFailure {
 public:
  explicit LogFailure(std::string what) : what_(std::move(what)) {}
  // Whether the log was given up.
  bool failed() const { return failed_; }
  // Gives the log up, saying so once on standard error.
  void give_up(const std::exception& e, std::ostream& warnings = std::cerr) {
    if (failed_) return;
    failed_ = true;
    warnings << "hearth: warning: " << what_ << " stopped: " << e.what() << "; training goes on without it"
             << std::endl;
  }

 private:
  std::string what_;
  bool failed_ = false;
};

}  // namespace hearth::train
