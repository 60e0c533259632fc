// The failure hooks of atomic writes: a disk that fills part way through a
// file (HEARTH_TEST_FAIL_WRITE) must leave the old contents and no temporary.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/io/atomic_file.h"
#include "tests/support/scoped_env.h"
#include "tests/support/temp_dir.h"

namespace hearth::io {
namespace {

using hearth::testing::ScopedEnv;
using hearth::testing::TempDir;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(AtomicFileFaults, AFullDiskPartWayKeepsTheOldFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("weights.bin");
  write_file_atomic(path, std::string("old contents"));
  {
    ScopedEnv full("HEARTH_TEST_FAIL_WRITE", "5");
    try {
      write_file_atomic(path, std::string("new contents that do not fit"));
      FAIL() << "the injected write failure did not throw";
    } catch (const IoError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path + ".tmp"), std::string::npos) << msg;
      EXPECT_NE(msg.find("No space left on device"), std::string::npos) << msg;
      EXPECT_NE(msg.find("after 5 bytes"), std::string::npos) << msg;
    }
  }
  EXPECT_EQ(read_all(path), "old contents");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(AtomicFileFaults, ALimitAboveTheFileSizeLetsTheWriteThrough) {
  TempDir dir;
  const std::string path = dir.file("small.txt");
  ScopedEnv roomy("HEARTH_TEST_FAIL_WRITE", "100");
  write_file_atomic(path, std::string("fits"));
  EXPECT_EQ(read_all(path), "fits");
}

TEST(AtomicFileFaults, AFailedFileInsideAnAtomicDirectoryLeavesTheOldDirectory) {
  TempDir dir;
  const std::string target = dir.file("checkpoint-1");
  write_directory_atomic(target, [](const std::string& tmp) { write_file_atomic(tmp + "/a.txt", std::string("v1")); });
  {
    ScopedEnv full("HEARTH_TEST_FAIL_WRITE", "1");
    EXPECT_THROW(write_directory_atomic(
                     target, [](const std::string& tmp) { write_file_atomic(tmp + "/a.txt", std::string("v2")); }),
                 IoError);
  }
  EXPECT_EQ(read_all(target + "/a.txt"), "v1");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "checkpoint-1") << "left behind: " << e.path();
  }
  EXPECT_EQ(entries, 1);
}

TEST(AtomicFileFaults, ABadLimitIsRefusedByName) {
  TempDir dir;
  ScopedEnv bad("HEARTH_TEST_FAIL_WRITE", "lots");
  try {
    write_file_atomic(dir.file("x"), std::string("x"));
    FAIL() << "a non-numeric HEARTH_TEST_FAIL_WRITE was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("HEARTH_TEST_FAIL_WRITE"), std::string::npos) << e.what();
  }
}

TEST(AtomicFileFaults, ThePauseHookDelaysButCompletesTheWrite) {
  TempDir dir;
  ScopedEnv pause("HEARTH_TEST_PAUSE_WRITE_MS", "1");
  write_file_atomic(dir.file("p.txt"), std::string("done"));
  EXPECT_EQ(read_all(dir.file("p.txt")), "done");
}

}  // namespace
}  // namespace hearth::io
