// The switch list against the source tree and the README: every HEARTH_*
// variable the code names is a declared switch, nothing reads the environment
// outside the two files that may (hearth/core/switches.cpp for the switches,
// hearth/core/env.cpp for other programs' variables), and README.md's table
// lists exactly the declared switches with their defaults.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hearth/core/env.h"
#include "hearth/core/errors.h"
#include "hearth/core/switches.h"

namespace hearth {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = HEARTH_SOURCE_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every C++ and CUDA source of the library, the programs and the examples,
// relative to the source root.
std::vector<std::string> sources() {
  std::vector<std::string> out;
  for (const char* dir : {"hearth", "apps", "examples"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / dir)) {
      if (!entry.is_regular_file()) continue;
      const std::string ext = entry.path().extension().string();
      if (ext == ".h" || ext == ".cpp" || ext == ".cu" || ext == ".cuh" || ext == ".hpp")
        out.push_back(fs::relative(entry.path(), kRoot).string());
    }
  }
  return out;
}

// The code without its comments, so that prose naming getenv is not a use.
// String and character literals are kept whole (a "//" inside one is no comment).
std::string strip_comments(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"' || s[i] == '\'') {
      const char quote = s[i];
      out += s[i];
      for (++i; i < s.size() && s[i] != quote && s[i] != '\n'; ++i) {
        out += s[i];
        if (s[i] == '\\' && i + 1 < s.size()) out += s[++i];
      }
      if (i < s.size()) out += s[i];
    } else if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
      out += '\n';
    } else if (s.compare(i, 2, "/*") == 0) {
      const size_t end = s.find("*/", i + 2);
      i = end == std::string::npos ? s.size() : end + 1;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::set<std::string> declared_names() {
  std::set<std::string> names;
  for (const Switch* s : all_switches()) names.insert(s->name());
  return names;
}

TEST(SwitchList, NothingReadsOrWritesTheEnvironmentOutsideTheTwoReaders) {
  const std::regex access(
      R"(\b(secure_getenv|getenv|setenv|putenv|unsetenv|clearenv|env_flag|env_string)\s*\(|\benviron\b)");
  // Where the environment may be touched, and why.
  const std::set<std::string> readers = {"hearth/core/switches.cpp", "hearth/core/env.cpp"};
  // file -> the one line allowed there.
  const std::multimap<std::string, std::string> exceptions = {
      // The launcher hands its environment, with the ranks' variables over it, to exec.
      {"apps/hearth/launcher.cpp", "for (char** e = environ; *e != nullptr; ++e) {"},
      // Vendor libraries read these only from the environment: set before they start, a user's value kept.
      {"hearth/backends/cuda/runtime.cu", "setenv(\"CUDA_DEVICE_MAX_CONNECTIONS\", \"32\", 0);"},
      {"hearth/backends/cuda/distributed/nccl_process_group.cpp", "::setenv(\"NCCL_NVLS_ENABLE\", \"0\", 1);"},
  };
  for (const std::string& file : sources()) {
    if (readers.count(file)) continue;
    std::istringstream code(strip_comments(read_file(kRoot / file)));
    std::string line;
    int n = 0;
    while (std::getline(code, line)) {
      ++n;
      if (!std::regex_search(line, access)) continue;
      bool allowed = false;
      auto [lo, hi] = exceptions.equal_range(file);
      for (auto it = lo; it != hi; ++it) allowed = allowed || line.find(it->second) != std::string::npos;
      EXPECT_TRUE(allowed) << file << ":" << n << " touches the environment: " << line
                           << "\n  declare a switch (hearth/core/switches.h) or read another program's variable "
                              "with outside_env (hearth/core/env.h)";
    }
  }
}

TEST(SwitchList, EveryHearthVariableTheCodeNamesIsDeclared) {
  const std::set<std::string> declared = declared_names();
  const std::regex quoted("\"(HEARTH_[A-Z0-9_]+)\"");
  for (const std::string& file : sources()) {
    const std::string code = strip_comments(read_file(kRoot / file));
    for (std::sregex_iterator it(code.begin(), code.end(), quoted), end; it != end; ++it)
      EXPECT_TRUE(declared.count((*it)[1].str())) << file << " names " << (*it)[1].str() << ", which is not declared";
  }
}

TEST(SwitchList, OutsideVariablesReadAreOnTheList) {
  const std::regex read(R"(outside_env(?:_is_set)?\(\s*"([A-Za-z0-9_]+)\"\s*\))");
  for (const std::string& file : sources()) {
    const std::string code = strip_comments(read_file(kRoot / file));
    for (std::sregex_iterator it(code.begin(), code.end(), read), end; it != end; ++it)
      EXPECT_TRUE(is_outside_variable((*it)[1].str())) << file << " reads " << (*it)[1].str();
  }
  EXPECT_FALSE(is_outside_variable("HEARTH_CPU_LEVEL"));
  EXPECT_THROW(outside_env("HEARTH_CPU_LEVEL"), ValueError);
  EXPECT_THROW(outside_env_is_set("HEARTH_CPU_LEVEL"), ValueError);
}

// CUDA_VISIBLE_DEVICES="" hides every GPU while an unset one hides none, so
// "set to nothing" and "unset" must stay apart.
TEST(SwitchList, AVariableSetToNothingIsSet) {
  const char* name = "CUDA_VISIBLE_DEVICES";
  const char* saved = std::getenv(name);
  const std::string saved_value = saved ? saved : "";
  ::setenv(name, "", 1);
  EXPECT_TRUE(outside_env_is_set(name));
  EXPECT_EQ(outside_env(name), "");
  ::unsetenv(name);
  EXPECT_FALSE(outside_env_is_set(name));
  if (saved) ::setenv(name, saved_value.c_str(), 1);
}

// README.md's "Environment variables" table: one row per switch, `NAME`, then
// its default (`value`, or "unset").
std::map<std::string, std::string> readme_switch_rows() {
  const std::string readme = read_file(kRoot / "README.md");
  const size_t start = readme.find("\n## Environment variables\n");
  EXPECT_NE(start, std::string::npos);
  const size_t end = readme.find("\n## ", start + 1);
  std::istringstream section(readme.substr(start, end - start));
  const std::regex row(R"(^\| `(HEARTH_[A-Z0-9_]+)` \| (`([^`]*)`|unset) \|)");
  std::map<std::string, std::string> rows;
  std::string line;
  while (std::getline(section, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) {
      EXPECT_EQ(line.rfind("| `HEARTH_", 0), std::string::npos) << "a row the table's form does not fit: " << line;
      continue;
    }
    EXPECT_TRUE(rows.emplace(m[1].str(), m[2].str() == "unset" ? "" : m[3].str()).second) << "twice: " << m[1];
  }
  return rows;
}

TEST(SwitchList, TheReadmeTableListsExactlyTheDeclaredSwitchesWithTheirDefaults) {
  const std::map<std::string, std::string> rows = readme_switch_rows();
  for (const Switch* s : all_switches()) {
    auto it = rows.find(s->name());
    if (it == rows.end()) {
      ADD_FAILURE() << s->name() << " is declared but not in README.md's environment table";
      continue;
    }
    EXPECT_EQ(it->second, s->spec().default_value) << s->name() << "'s default in README.md";
  }
  const std::set<std::string> declared = declared_names();
  for (const auto& [name, value] : rows)
    EXPECT_TRUE(declared.count(name)) << name << " is in README.md's table but not declared";
}

}  // namespace
}  // namespace hearth
