// --config: a FIFO (or any file that is not a regular one) is refused before
// it is opened, where reading it would wait forever.
#include <algorithm>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "apps/common/json_config.h"
#include "tests/support/fifo_guard.h"
#include "tests/support/temp_dir.h"

namespace hearth::cli {
namespace {

using hearth::testing::returns_without_blocking;
using hearth::testing::TempDir;

std::string parse_error(const std::string& config) {
  CLI::App app("test");
  int epochs = 0;
  app.add_option("--num_train_epochs", epochs);
  add_json_config(app, "--config");
  std::vector<std::string> args = {"--config", config};
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::Error& e) {
    return e.what();
  }
  return "";
}

TEST(JsonConfig, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("config.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string error;
  EXPECT_TRUE(returns_without_blocking(fifo, [&] { error = parse_error(fifo); })) << "--config FIFO blocked";
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
}

TEST(JsonConfig, ARegularFileIsRead) {
  TempDir dir;
  CLI::App app("test");
  int epochs = 0;
  app.add_option("--num_train_epochs", epochs);
  add_json_config(app, "--config");
  std::vector<std::string> args = {dir.write("config.json", R"({"num_train_epochs": 7})"), "--config"};
  app.parse(args);
  EXPECT_EQ(epochs, 7);
}

}  // namespace
}  // namespace hearth::cli
