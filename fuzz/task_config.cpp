// libFuzzer target: the config.json `hearth train` writes into every
// checkpoint and `hearth eval` reads back to rebuild the model (model type,
// data set, sizes, normalisation). It lives with the command (apps/hearth),
// so this target compiles tasks.cpp itself.
#include <filesystem>

#include "apps/hearth/tasks.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    std::string d = hearth::fuzz::scratch_dir() + "/task";
    std::filesystem::create_directories(d);
    return d;
  }();
  std::string path = hearth::fuzz::write_input(std::string("task/") + hearth::cli::kTaskConfigFile, data, size);
  return hearth::fuzz::abort_on_problem(
      hearth::fuzz::check_clean_failure(path, [&] { (void)hearth::cli::load_task_config(dir).to_json().dump(); }));
}
