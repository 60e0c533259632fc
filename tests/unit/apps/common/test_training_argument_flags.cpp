// The user's config under the command line, as `hearth train`, run_glue and
// cv_example resolve it: the file's values first, then the flags given.
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "apps/common/training_argument_flags.h"
#include "apps/common/user_config_flag.h"
#include "hearth/core/errors.h"
#include "tests/support/scoped_env.h"
#include "tests/support/cli_parse.h"
#include "tests/support/temp_dir.h"

namespace hearth::cli {
namespace {

using hearth::testing::ScopedEnv;
using hearth::testing::TempDir;
using train::TrainingArguments;

void parse(CLI::App& app, std::vector<std::string> args) { testing::parse_command_line(app, std::move(args)); }

// A program's arguments: defaults, the user's config, then the flags.
struct Resolved {
  TrainingArguments args;
  std::string said;
};

Resolved resolve(const std::vector<std::string>& command_line) {
  CLI::App app;
  TrainingArgumentFlags flags;
  flags.add_to(app);
  parse(app, command_line);
  Resolved r;
  std::ostringstream say;
  flags.apply_user_config(r.args, &say);
  flags.apply(r.args);
  r.said = say.str();
  return r;
}

std::string error_of(const std::vector<std::string>& command_line) {
  try {
    resolve(command_line);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// No user config of the machine running the tests may take part.
class TrainingArgumentFlagsTest : public ::testing::Test {
 protected:
  TempDir home_;
  ScopedEnv xdg_{"XDG_CONFIG_HOME", home_.path()};
  ScopedEnv no_variable_{"HEARTH_CONFIG_FILE", ""};
  TempDir dir_;
};

TEST_F(TrainingArgumentFlagsTest, TheConfigSetsWhatNoFlagGives) {
  std::string path =
      dir_.write("c.json", R"({"device": "cpu", "precision": "bf16-mixed", "output_dir": "from-config"})");
  Resolved r = resolve({"--config_file", path, "--output_dir", "from-flag", "--learning_rate", "0.5"});
  EXPECT_EQ(r.args.device, "cpu");
  EXPECT_EQ(r.args.precision, "bf16-mixed");
  EXPECT_EQ(r.args.output_dir, "from-flag");
  EXPECT_DOUBLE_EQ(r.args.learning_rate, 0.5);
  EXPECT_EQ(r.said, "hearth: config " + path + " sets device=cpu, precision=bf16-mixed, output_dir=from-config\n");

  r = resolve({"--config_file", path, "--device", "auto"});
  EXPECT_EQ(r.args.device, "auto");
  EXPECT_EQ(r.args.output_dir, "from-config");
}

TEST_F(TrainingArgumentFlagsTest, StepGraphsIsAFlagAndNotAUserConfigKey) {
  EXPECT_FALSE(resolve({}).args.step_graphs.has_value()) << "unset: on where the device has step graphs";
  EXPECT_EQ(resolve({"--step_graphs"}).args.step_graphs, true);
  EXPECT_EQ(resolve({"--step_graphs", "false"}).args.step_graphs, false);
  EXPECT_EQ(resolve({"--no_step_graphs"}).args.step_graphs, false);
  EXPECT_EQ(resolve({"--step_graphs", "--no_step_graphs"}).args.step_graphs, false);
  std::string path = dir_.write("c.json", R"({"step_graphs": true})");
  EXPECT_NE(error_of({"--config_file", path}).find("step_graphs"), std::string::npos)
      << "the user config holds machine settings, not training arguments";
}

// --cuda_graphs, the former name, sets the same field, as bare flag or with a value.
TEST_F(TrainingArgumentFlagsTest, CudaGraphsIsStillAcceptedAsAFlag) {
  EXPECT_EQ(resolve({"--cuda_graphs"}).args.step_graphs, true);
  EXPECT_EQ(resolve({"--cuda_graphs", "false"}).args.step_graphs, false);
  EXPECT_EQ(resolve({"--cuda_graphs", "--step_graphs", "false"}).args.step_graphs, false) << "the last one given wins";
  std::string path = dir_.write("c.json", R"({"cuda_graphs": true})");
  EXPECT_NE(error_of({"--config_file", path}).find("cuda_graphs"), std::string::npos)
      << "the user config holds machine settings, not training arguments";
}

TEST_F(TrainingArgumentFlagsTest, WithoutAFileNothingIsSetOrSaid) {
  Resolved r = resolve({"--output_dir", "x"});
  EXPECT_EQ(r.args.device, TrainingArguments{}.device);
  EXPECT_EQ(r.args.precision, "fp32");
  EXPECT_EQ(r.said, "");
}

TEST_F(TrainingArgumentFlagsTest, TheFileUnderXdgConfigHomeAndTheOneHearthConfigFileNames) {
  std::filesystem::create_directories(home_.file("hearth"));
  home_.write("hearth/config.json", R"({"output_dir": "from-xdg"})");
  EXPECT_EQ(resolve({}).args.output_dir, "from-xdg");
  std::string named = dir_.write("named.json", R"({"output_dir": "from-variable"})");
  ScopedEnv variable("HEARTH_CONFIG_FILE", named);
  EXPECT_EQ(resolve({}).args.output_dir, "from-variable");
  std::string given = dir_.write("given.json", R"({"output_dir": "from-flag-file"})");
  EXPECT_EQ(resolve({"--config_file", given}).args.output_dir, "from-flag-file");
}

TEST_F(TrainingArgumentFlagsTest, APrecisionFlagReplacesTheConfigsPrecision) {
  std::string fp16 = dir_.write("fp16.json", R"({"precision": "fp16-mixed"})");
  std::string bf16 = dir_.write("bf16.json", R"({"precision": "bf16-mixed"})");
  EXPECT_EQ(resolve({"--config_file", fp16, "--bf16"}).args.precision, "bf16-mixed");
  EXPECT_EQ(resolve({"--config_file", fp16, "--bf16", "true"}).args.precision, "bf16-mixed");
  EXPECT_EQ(resolve({"--config_file", bf16, "--precision", "fp32"}).args.precision, "fp32");
  EXPECT_EQ(resolve({"--config_file", bf16, "--precision", "16-mixed"}).args.precision, "fp16-mixed");
  // Turning one mode off leaves another alone, and turns its own off.
  EXPECT_EQ(resolve({"--config_file", bf16, "--fp16", "false"}).args.precision, "bf16-mixed");
  EXPECT_EQ(resolve({"--config_file", bf16, "--bf16", "false"}).args.precision, "fp32");
  // Flags that contradict each other still do.
  EXPECT_NE(error_of({"--config_file", fp16, "--bf16", "--fp16"}).find("--fp16: expected at most one of bf16 and fp16"),
            std::string::npos);
  EXPECT_NE(error_of({"--precision", "bf16-mixed", "--fp16"}).find("--fp16: expected at most one of bf16 and fp16"),
            std::string::npos);
}

TEST_F(TrainingArgumentFlagsTest, ABadFileIsRefusedNamingTheFileAndTheKey) {
  std::string path = dir_.write("c.json", R"({"device": "cpu", "cpu_fallback": "maybe"})");
  EXPECT_EQ(error_of({"--config_file", path, "--device", "cpu"}),
            "[config] " + path + ": key 'cpu_fallback': expected true or false, got \"maybe\", a JSON string");
  EXPECT_EQ(error_of({"--config_file", dir_.file("none.json")}),
            "[config] " + dir_.file("none.json") + ": no such config file; write one with `hearth config --config_file " +
                dir_.file("none.json") + "`");
}

TEST_F(TrainingArgumentFlagsTest, UserConfigFlagAloneLoadsWithoutApplying) {
  std::string path = dir_.write("c.json", R"({"num_processes": 4})");
  CLI::App app;
  UserConfigFlag flag;
  flag.add_to(app);
  parse(app, {"--config_file", path});
  EXPECT_EQ(flag.path(), path);
  cli::LoadedUserConfig user = flag.load(nullptr);
  EXPECT_TRUE(user.found);
  EXPECT_TRUE(user.has("num_processes"));
  EXPECT_FALSE(user.has("device"));
  EXPECT_EQ(user.config.num_processes, 4);
}

// transformers 5's command lines: a bare --include_num_input_tokens_seen,
// strtobool spellings, and the removed 4.x names refused with their replacement.
TEST_F(TrainingArgumentFlagsTest, TransformersFiveCommandLines) {
  EXPECT_EQ(resolve({"--include_num_input_tokens_seen"}).args.to_json()["include_num_input_tokens_seen"], "true");
  EXPECT_EQ(resolve({"--include_num_input_tokens_seen", "all"}).args.to_json()["include_num_input_tokens_seen"], "all");
  EXPECT_EQ(resolve({"--bf16", "T"}).args.precision, "bf16-mixed");
  EXPECT_EQ(resolve({"--optim", "adamw_torch_fused", "--save_strategy", "best"}).args.save_strategy, "best");
  const std::string e = error_of({"--per_gpu_train_batch_size", "8"});
  EXPECT_NE(e.find("--per_gpu_train_batch_size"), std::string::npos) << e;
  EXPECT_NE(e.find("per_device_train_batch_size"), std::string::npos) << e;
  EXPECT_NE(error_of({"--group_by_length"}).find("train_sampling_strategy"), std::string::npos);
}

}  // namespace
}  // namespace hearth::cli
