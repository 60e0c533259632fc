// What every fuzz target shares: the bytes libFuzzer hands over, written to a
// file when the parser under test reads files, and the rule every target
// enforces: bad input ends in a hearth::Error whose message names the file.
// Anything else (another exception type, a message that does not say which
// file was bad) aborts, which libFuzzer reports as a crash with the input.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "hearth/core/errors.h"

namespace hearth::fuzz {

// A scratch directory of this process, removed at exit. Fuzzing runs millions
// of inputs: the files are rewritten in place, not created anew. The path is
// never destroyed: the exit handler that removes the directory runs after
// static destructors would have freed it.
inline const std::string& scratch_dir() {
  static const std::string* const dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    auto* d = new std::string(std::string(tmp && *tmp ? tmp : "/tmp") + "/hearth-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*dir, ec);
    });
    return d;
  }();
  return *dir;
}

// Writes the input to `scratch_dir()/name` and returns the path.
inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write the input to %s\n", path.c_str());
    std::abort();
  }
  return path;
}

// Runs `parse`. Returns "" when it succeeds or throws a hearth::Error whose
// message contains `must_name` (the file or source the input came from), else
// what went wrong: another exception type, or a message that does not say
// which file was bad.
template <typename Parse>
std::string check_clean_failure(std::string_view must_name, Parse&& parse) {
  try {
    parse();
  } catch (const hearth::Error& e) {
    if (std::string_view(e.what()).find(must_name) == std::string_view::npos)
      return "the error does not name \"" + std::string(must_name) + "\": " + e.what();
  } catch (const std::exception& e) {
    return std::string("bad input escaped as a non-hearth exception: ") + e.what();
  }
  return "";
}

// For LLVMFuzzerTestOneInput: a problem aborts, which libFuzzer reports as a
// crash and keeps the input.
inline int abort_on_problem(const std::string& problem) {
  if (problem.empty()) return 0;
  std::fprintf(stderr, "fuzz: %s\n", problem.c_str());
  std::abort();
}

}  // namespace hearth::fuzz
