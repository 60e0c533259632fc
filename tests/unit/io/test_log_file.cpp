// Log files (metrics.jsonl, TensorBoard events) are written only to regular
// files: a FIFO at the name is refused at once, not waited on.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "hearth/core/errors.h"
#include "hearth/io/log_file.h"
#include "tests/support/fifo_guard.h"
#include "tests/support/temp_dir.h"

namespace hearth::io {
namespace {

using hearth::testing::returns_without_blocking;
using hearth::testing::TempDir;

TEST(LogFile, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("metrics.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (bool truncate : {true, false}) {
    std::string error;
    EXPECT_TRUE(returns_without_blocking(fifo, [&] {
      LogFile f;
      try {
        f.open(fifo, truncate);
      } catch (const IoError& e) {
        error = e.what();
      }
    })) << "opening a FIFO blocked";
    EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
  }
}

TEST(LogFile, TruncatingEmptiesARegularFile) {
  TempDir dir;
  const std::string path = dir.write("log", "old line\n");
  LogFile f;
  f.open(path, /*truncate=*/true);
  f.write("new\n");
  f.close();
  f.open(path, /*truncate=*/false);
  f.write("more\n");
  f.close();
  std::ifstream in(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "new\nmore\n");
}

}  // namespace
}  // namespace hearth::io
