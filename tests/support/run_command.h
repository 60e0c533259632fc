// Runs a shell command and captures what it prints (stdout and stderr
// together) and its exit code, for tests that drive programs.
#pragma once

#include <stdio.h>

#include <string>

#include <sys/wait.h>

namespace hearth::testing {

struct CommandResult {
  int exit_code = -1;  // 128 + signal when a signal ended it
  std::string output;
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = ::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int status = ::pclose(p);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  return r;
}

}  // namespace hearth::testing
