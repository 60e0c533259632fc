// Parses `args` with a CLI11 app as a program's main would, after a program
// name, so tests of flag handling read like the command lines they stand for.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace hearth::testing {

inline void parse_command_line(CLI::App& app, std::vector<std::string> args) {
  std::vector<char*> argv;
  std::string program = "program";
  argv.push_back(program.data());
  for (std::string& a : args) argv.push_back(a.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
}

}  // namespace hearth::testing
