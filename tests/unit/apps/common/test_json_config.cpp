// --config FILE.json as run_glue and cv_example read it: own flags set where
// the command line did not, training arguments with their JSON types, under
// the training flags of the command line.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "apps/common/json_config.h"
#include "apps/common/training_argument_flags.h"
#include "hearth/core/errors.h"
#include "tests/support/fifo_guard.h"
#include "tests/support/cli_parse.h"
#include "tests/support/temp_dir.h"

namespace hearth::cli {
namespace {

using hearth::testing::returns_without_blocking;
using hearth::testing::TempDir;
using train::TrainingArguments;

void parse(CLI::App& app, std::vector<std::string> args) { testing::parse_command_line(app, std::move(args)); }

// A program shaped like run_glue: an own option, an own flag, every training flag.
struct Program {
  CLI::App app;
  std::string task_name;
  bool do_train = false;
  TrainingArgumentFlags flags;
  JsonConfigFlag config;

  Program() {
    app.add_option("--task_name", task_name);
    app.add_flag("--do_train{true}", do_train)->expected(0, 1);
    flags.add_to(app, {"do_train"});
    config.add_to(app);
  }
  TrainingArguments resolve(const std::vector<std::string>& command_line) {
    parse(app, command_line);
    config.read(app, &flags);
    TrainingArguments args = config.apply(TrainingArguments());
    flags.apply(args);
    return args;
  }
};

// A FIFO (or any file that is not a regular one) is refused before it is
// opened, where reading it would wait forever.
TEST(JsonConfigFlag, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("config.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string error;
  EXPECT_TRUE(returns_without_blocking(fifo, [&] {
    Program p;
    try {
      p.resolve({"--config", fifo});
    } catch (const Error& e) {
      error = e.what();
    }
  })) << "--config FIFO blocked";
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
}

TEST(JsonConfigFlag, HuggingFacesEmptyListsAreRead) {
  TempDir dir;
  const std::string path =
      dir.write("c.json", R"({"fsdp": [], "debug": [], "include_for_metrics": [], "learning_rate": 0.25})");
  Program p;
  TrainingArguments args = p.resolve({"--config", path});
  EXPECT_DOUBLE_EQ(args.learning_rate, 0.25);
  EXPECT_EQ(args.to_json()["fsdp"], nlohmann::json::array());
}

TEST(JsonConfigFlag, OwnFlagsAreSetUnlessTheCommandLineGivesThem) {
  TempDir dir;
  const std::string path = dir.write("c.json", R"({"task_name": "mrpc", "do_train": true, "seed": 7})");
  Program p;
  TrainingArguments args = p.resolve({"--config", path});
  EXPECT_EQ(p.task_name, "mrpc");
  EXPECT_TRUE(p.do_train);
  EXPECT_EQ(args.seed, 7);

  Program q;
  args = q.resolve({"--config", path, "--task_name", "sst2", "--seed", "3"});
  EXPECT_EQ(q.task_name, "sst2");
  EXPECT_EQ(args.seed, 3);
}

TEST(JsonConfigFlag, NullLeavesTheDefault) {
  TempDir dir;
  const std::string path = dir.write("c.json", R"({"task_name": null, "save_total_limit": null})");
  Program p;
  TrainingArguments args = p.resolve({"--config", path});
  EXPECT_EQ(p.task_name, "");
  EXPECT_FALSE(args.save_total_limit.has_value());
}

TEST(JsonConfigFlag, ABadValueNamesTheFileAndTheField) {
  TempDir dir;
  const std::string path = dir.write("c.json", R"({"learning_rate": "fast"})");
  Program p;
  try {
    p.resolve({"--config", path});
    FAIL() << "a bad value was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'learning_rate'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(JsonConfigFlag, AnUnknownKeyIsRefusedWithTheNameMeant) {
  TempDir dir;
  for (const char* text : {R"({"learnin_rate": 0.1})", R"({"learnin_rate": null})"}) {
    const std::string path = dir.write("c.json", text);
    Program p;
    try {
      p.resolve({"--config", path});
      FAIL() << "an unknown key was accepted: " << text;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("field 'learnin_rate'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("did you mean 'learning_rate'"), std::string::npos) << e.what();
    }
  }
  // An own flag's near miss is suggested too.
  const std::string path = dir.write("c.json", R"({"task_nam": "mrpc"})");
  Program p;
  try {
    p.resolve({"--config", path});
    FAIL() << "an unknown key was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'task_name'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hearth::cli
