// Whether ops record the graph. Thread-local, like PyTorch's.
#pragma once

namespace hearth {

bool grad_enabled();
void set_grad_enabled(bool enabled);

// Turns recording off for a scope (evaluation, optimizer steps).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

class EnableGradGuard {
 public:
  explicit EnableGradGuard(bool enabled = true) : prev_(grad_enabled()) { set_grad_enabled(enabled); }
  ~EnableGradGuard() { set_grad_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace hearth
