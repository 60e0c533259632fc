#include "apps/hearth/commands.h"

#include <map>

namespace hearth::cli {
namespace {
std::map<CLI::App*, std::function<int()>>& handlers() {
  static std::map<CLI::App*, std::function<int()>> h;
  return h;
}
}  // namespace

void on_run(CLI::App* sub, std::function<int()> fn) { handlers()[sub] = std::move(fn); }

int run_selected(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands()) {
    auto it = handlers().find(sub);
    if (it != handlers().end()) return it->second();
  }
  return 0;
}

}  // namespace hearth::cli
