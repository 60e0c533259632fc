#include "apps/hearth/commands.h"

#include <map>

namespace hearth::cli {
namespace {
std::map<CLI::App*, std::function<int()>>& handlers() {
  static std::map<CLI::App*, std::function<int()>> h;
  return h;
}
std::vector<std::string>& saved_command_line() {
  static std::vector<std::string> v;
  return v;
}
}  // namespace

void set_command_line(int argc, char** argv) { saved_command_line().assign(argv, argv + argc); }
const std::vector<std::string>& command_line() { return saved_command_line(); }

void on_run(CLI::App* sub, std::function<int()> fn) { handlers()[sub] = std::move(fn); }

int run_selected(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands()) {
    auto it = handlers().find(sub);
    if (it != handlers().end()) return it->second();
  }
  return 0;
}

}  // namespace hearth::cli
