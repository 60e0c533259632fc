#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "apps/common/config_questionnaire.h"
#include "apps/common/user_config.h"
#include "hearth/core/errors.h"
#include "hearth/core/switch_list.h"
#include "hearth/dispatch/dispatch.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"

namespace hearth::cli {
namespace {

using hearth::testing::ScopedEnv;
using hearth::testing::TempDir;
using hearth::train::TrainingArguments;

// Points XDG_CONFIG_HOME at a temporary directory for one test.
class ConfigHome {
 public:
  ConfigHome() {
    const char* old = std::getenv("XDG_CONFIG_HOME");
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv("XDG_CONFIG_HOME", dir_.path().c_str(), 1);
  }
  ~ConfigHome() {
    if (had_) {
      ::setenv("XDG_CONFIG_HOME", old_.c_str(), 1);
    } else {
      ::unsetenv("XDG_CONFIG_HOME");
    }
  }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
  bool had_ = false;
  std::string old_;
};

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(UserConfig, LivesUnderXdgConfigHome) {
  ConfigHome home;
  EXPECT_EQ(default_user_config_path(), home.dir().file("hearth/config.json"));
  LoadedUserConfig none = load_user_config();
  EXPECT_FALSE(none.found);
  EXPECT_TRUE(none.keys.empty());
  EXPECT_EQ(describe_user_config(none), "nothing");
}

TEST(UserConfig, SavedAndLoadedBack) {
  ConfigHome home;
  UserConfig c;
  c.device = "cuda:1";
  c.num_processes = 4;
  c.precision = "bf16-mixed";
  c.cpu_fallback = true;
  c.output_dir = "/data/runs";
  save_user_config(c, default_user_config_path());
  LoadedUserConfig loaded = load_user_config();
  ASSERT_TRUE(loaded.found);
  EXPECT_EQ(loaded.config.to_json(), c.to_json());
  EXPECT_EQ(loaded.keys.size(), 5u);
  EXPECT_EQ(describe_user_config(loaded),
            "device=cuda:1, num_processes=4, precision=bf16-mixed, cpu_fallback=yes, output_dir=/data/runs");
}

TEST(UserConfig, BadFilesNameTheFileAndTheKey) {
  TempDir dir;
  std::string path = dir.write("c.json", R"({"device": "tpu"})");
  EXPECT_EQ(error_of([&] { load_user_config(path); }),
            "[config] " + path + ": key 'device': expected auto, cpu, gpu or a device kind such as cuda or vulkan, with :N for the N-th, got \"tpu\"");
  path = dir.write("d.json", R"({"num_processes": 0})");
  EXPECT_NE(error_of([&] { load_user_config(path); }).find("key 'num_processes': expected an integer from 1 to 1024"),
            std::string::npos);
  path = dir.write("e.json", R"({"devcie": "cpu"})");
  EXPECT_NE(error_of([&] { load_user_config(path); }).find("unknown key 'devcie'; the keys are device, "),
            std::string::npos);
  path = dir.write("f.json", "{not json");
  EXPECT_NE(error_of([&] { load_user_config(path); }).find("is not valid JSON"), std::string::npos);
  EXPECT_NE(error_of([&] { load_user_config(dir.file("missing.json")); }).find("no such config file"),
            std::string::npos);
}

TEST(UserConfig, ValuesOfAnotherJsonTypeAreRefusedSayingWhichTheyAre) {
  TempDir dir;
  struct Case {
    const char* json;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"({"num_processes": "2"})", "key 'num_processes': expected an integer from 1 to 1024, got \"2\", a JSON string"},
      {R"({"num_processes": 1.5})", "key 'num_processes': expected an integer from 1 to 1024, got 1.5, a JSON number"},
      {R"({"cpu_fallback": "yes"})", "key 'cpu_fallback': expected true or false, got \"yes\", a JSON string"},
      {R"({"device": ["cpu"]})", "key 'device': expected auto, cpu, gpu or a device kind such as cuda or vulkan, with :N for the N-th as a JSON string, got [\"cpu\"], a JSON array"},
      {R"({"precision": 16})", "key 'precision': expected fp32, bf16-mixed or fp16-mixed as a JSON string, got 16, a JSON number"},
      {R"({"output_dir": null})", "key 'output_dir': expected a directory path as a JSON string, got null, a JSON null"},
  };
  for (const Case& c : cases) {
    std::string path = dir.write("c.json", c.json);
    EXPECT_EQ(error_of([&] { load_user_config(path); }), "[config] " + path + ": " + c.message) << c.json;
  }
  // Values of the right type but not allowed name what is.
  std::string path = dir.write("p.json", R"({"precision": "fp8"})");
  EXPECT_EQ(error_of([&] { load_user_config(path); }),
            "[config] " + path + ": key 'precision': expected fp32, bf16-mixed or fp16-mixed, got \"fp8\"");
  path = dir.write("a.json", R"(["cpu"])");
  EXPECT_NE(error_of([&] { load_user_config(path); }).find(path + ": expected a JSON object of settings"),
            std::string::npos);
}

TEST(UserConfig, InvalidJsonSaysWhere) {
  TempDir dir;
  std::string path = dir.write("c.json", "{\"device\": \"cpu\",\n \"output_dir\": }\n");
  const std::string error = error_of([&] { load_user_config(path); });
  EXPECT_EQ(error.rfind("[config] " + path + ": is not valid JSON (line 2, column 16: syntax error", 0), 0u) << error;
  EXPECT_NE(error.find("); rewrite it with `hearth config` or fix it by hand"), std::string::npos) << error;
  EXPECT_EQ(error.find("json.exception"), std::string::npos) << error;
}

TEST(UserConfig, TheFlagThenHearthConfigFileThenTheDefaultPath) {
  ConfigHome home;
  std::filesystem::create_directories(home.dir().file("hearth"));
  home.dir().write("hearth/config.json", R"({"device": "cpu"})");
  TempDir dir;
  std::string from_env = dir.write("env.json", R"({"precision": "bf16-mixed"})");
  std::string from_flag = dir.write("flag.json", R"({"output_dir": "runs"})");

  EXPECT_EQ(load_user_config().keys, std::vector<std::string>{"device"});
  ScopedEnv env(kUserConfigFileVariable, from_env);
  LoadedUserConfig loaded = load_user_config();
  EXPECT_EQ(loaded.path, from_env);
  EXPECT_EQ(loaded.keys, std::vector<std::string>{"precision"});
  loaded = load_user_config(from_flag);
  EXPECT_EQ(loaded.path, from_flag);
  EXPECT_EQ(loaded.keys, std::vector<std::string>{"output_dir"});
  // A file the variable names must exist, as one a flag names must.
  ScopedEnv missing(kUserConfigFileVariable, dir.file("missing.json"));
  EXPECT_EQ(error_of([&] { load_user_config(); }),
            "[config] " + dir.file("missing.json") +
                ": no such config file (named by HEARTH_CONFIG_FILE); write one with `hearth config --config_file " +
                dir.file("missing.json") + "`");
}

TEST(UserConfig, TheEnvironmentOfStartedProgramsNamesTheFileReadByItsAbsolutePath) {
  TempDir dir;
  dir.write("c.json", R"({"device": "cpu"})");
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  LoadedUserConfig loaded = load_user_config("c.json");
  const auto env = user_config_environment(loaded);
  std::filesystem::current_path(cwd);
  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(loaded.path, "c.json");  // messages keep the path as given
  EXPECT_EQ(env, (Env{{"HEARTH_CONFIG_FILE", dir.file("c.json")}}));
  // No file read: nothing to hand on (the programs look where this one did).
  ConfigHome home;
  EXPECT_EQ(user_config_environment(load_user_config()), Env{});
}

TEST(UserConfig, SetsTheTrainingArgumentsItNames) {
  TempDir dir;
  std::string path = dir.write("c.json", R"({"device": "cpu", "output_dir": "elsewhere"})");
  TrainingArguments args;
  args.precision = "fp32";
  apply_user_config(load_user_config(path), args);
  EXPECT_EQ(args.device, "cpu");
  EXPECT_EQ(args.output_dir, "elsewhere");
  // A flag given afterwards wins, as in `hearth train`.
  set_training_argument(args, "device", "auto", "--device");
  EXPECT_EQ(args.device, "auto");
}

TEST(UserConfig, TurnsTheCpuFallbackOnUnlessTheEnvironmentDecides) {
  TempDir dir;
  std::string path = dir.write("c.json", R"({"cpu_fallback": true})");
  ::unsetenv("HEARTH_ENABLE_CPU_FALLBACK");
  const Switch& fallback = switches::enable_cpu_fallback();
  TrainingArguments args;
  apply_user_config(load_user_config(path), args);
  // The config sets the switch's value below the environment; the environment is not written.
  EXPECT_EQ(std::getenv("HEARTH_ENABLE_CPU_FALLBACK"), nullptr);
  EXPECT_TRUE(cpu_fallback_enabled());
  EXPECT_EQ(fallback.source(), SwitchSource::config_file);
  ::setenv("HEARTH_ENABLE_CPU_FALLBACK", "0", 1);
  EXPECT_FALSE(cpu_fallback_enabled());
  EXPECT_EQ(fallback.source(), SwitchSource::environment);
  ::unsetenv("HEARTH_ENABLE_CPU_FALLBACK");
  fallback.clear_config_value();
  EXPECT_FALSE(cpu_fallback_enabled());
}

TEST(ConfigQuestionnaire, AsksAgainAfterAnInvalidAnswer) {
  std::istringstream in("tpu\ncuda\n2\nfp8\nbf16-mixed\nmaybe\nyes\n/tmp/out\n");
  std::ostringstream out;
  UserConfig c = ask_user_config(in, out, UserConfig{});
  EXPECT_EQ(c.device, "cuda");
  EXPECT_EQ(c.num_processes, 2);
  EXPECT_EQ(c.precision, "bf16-mixed");
  EXPECT_TRUE(c.cpu_fallback);
  EXPECT_EQ(c.output_dir, "/tmp/out");
  EXPECT_NE(out.str().find("\"tpu\" is not valid for device: expected auto, cpu, gpu or a device kind such as cuda or vulkan, with :N for the N-th"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("\"fp8\" is not valid for precision"), std::string::npos);
  EXPECT_NE(out.str().find("\"maybe\" is not valid for cpu_fallback: expected yes or no"), std::string::npos);
}

TEST(ConfigQuestionnaire, EmptyAnswersAndTheEndOfInputKeepTheShownValues) {
  UserConfig start;
  start.device = "cpu";
  std::istringstream in("\n3\n");
  std::ostringstream out;
  UserConfig c = ask_user_config(in, out, start, /*echo_answers=*/true);
  EXPECT_EQ(c.device, "cpu");
  EXPECT_EQ(c.num_processes, 3);
  EXPECT_EQ(c.precision, "fp32");
  EXPECT_EQ(c.output_dir, "");  // each program's own
  EXPECT_NE(out.str().find("[cpu]: \n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("[1]: 3\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("end of input: keeping fp32"), std::string::npos) << out.str();
}

// `hearth config --default` (or Enter through the questions) names no
// output_dir: every program then writes into its own, not all into one.
TEST(UserConfig, TheDefaultsHoldNoOutputDir) {
  EXPECT_FALSE(UserConfig{}.to_json().contains("output_dir"));
  hearth::testing::TempDir dir;
  const std::string path = dir.file("config.json");
  save_user_config(UserConfig{}, path);
  const LoadedUserConfig loaded = load_user_config(path);
  EXPECT_FALSE(loaded.has("output_dir"));
  train::TrainingArguments args;
  args.output_dir = "runs/fashion_mnist-small_cnn";
  apply_user_config(loaded, args);
  EXPECT_EQ(args.output_dir, "runs/fashion_mnist-small_cnn");
  UserConfig asked;
  asked.output_dir = "/data/runs";
  EXPECT_EQ(asked.to_json()["output_dir"], "/data/runs");
}

// The answers the flags take are taken by `hearth config` too.
TEST(ConfigQuestionnaire, TakesTheFlagsSpellings) {
  std::istringstream in("gpu\n1\nbf16\nno\n\n");
  std::ostringstream out;
  UserConfig c = ask_user_config(in, out, UserConfig{});
  // Kept as "gpu": whichever accelerator is present when a run starts.
  EXPECT_EQ(c.device, "gpu");
  EXPECT_EQ(c.precision, "bf16-mixed");
  EXPECT_EQ(out.str().find("is not valid"), std::string::npos) << out.str();
  std::istringstream in16("cpu\n1\n16-mixed\n");
  EXPECT_EQ(ask_user_config(in16, out, UserConfig{}).precision, "fp16-mixed");
}

}  // namespace
}  // namespace hearth::cli
