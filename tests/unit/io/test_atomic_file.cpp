#include <filesystem>
#include <stdexcept>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "hearth/core/errors.h"
#include "hearth/io/atomic_file.h"
#include "tests/support/fifo_guard.h"
#include "tests/support/temp_dir.h"

namespace hearth::io {
namespace {

namespace fs = std::filesystem;
using hearth::testing::read_file;
using hearth::testing::TempDir;

TEST(AtomicFile, WritesTheContentsAndLeavesNoTemporaryFile) {
  TempDir dir;
  std::string path = dir.file("out.bin");
  write_file_atomic(path, std::string_view("hello\0world", 11));
  EXPECT_EQ(read_file(path), std::string("hello\0world", 11));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.bin"});
}

TEST(AtomicFile, ReplacesAnExistingFile) {
  TempDir dir;
  std::string path = dir.write("out.txt", "old contents that are longer");
  write_file_atomic(path, [](AtomicFileWriter& w) {
    w.write("new ");
    w.write("data");
    EXPECT_EQ(w.bytes_written(), 8u);
  });
  EXPECT_EQ(read_file(path), "new data");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.txt"});
}

TEST(AtomicFile, AWriterThatThrowsLeavesTheOldFileAndNoPartialFile) {
  TempDir dir;
  std::string path = dir.write("model.safetensors", "previous");
  EXPECT_THROW(write_file_atomic(path,
                                 [](AtomicFileWriter& w) {
                                   w.write("half of the new fi");
                                   throw std::runtime_error("disk on fire");
                                 }),
               std::runtime_error);
  EXPECT_EQ(read_file(path), "previous");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.safetensors"});

  std::string fresh = dir.file("fresh.bin");
  EXPECT_THROW(write_file_atomic(fresh,
                                 [](AtomicFileWriter& w) {
                                   w.write("x");
                                   throw std::runtime_error("interrupted");
                                 }),
               std::runtime_error);
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_FALSE(fs::exists(fresh + ".tmp"));
}

TEST(AtomicFile, WritesGoToPathDotTmpUntilCommit) {
  TempDir dir;
  std::string path = dir.file("a.json");
  AtomicFileWriter w(path);
  EXPECT_EQ(w.temp_path(), path + ".tmp");
  w.write("{}");
  EXPECT_TRUE(fs::exists(path + ".tmp"));
  EXPECT_FALSE(fs::exists(path));
  w.commit();
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_EQ(read_file(path), "{}");
  EXPECT_THROW(w.commit(), IoError);
  EXPECT_THROW(w.write("more"), IoError);
}

TEST(AtomicFile, AMissingDirectoryIsAnIoErrorNamingThePath) {
  TempDir dir;
  std::string path = dir.file("no/such/dir/out.bin");
  try {
    write_file_atomic(path, std::string_view("x"));
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("[atomic_file]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no/such/dir/out.bin.tmp"), std::string::npos) << e.what();
  }
}

TEST(AtomicDirectory, CreatesTheDirectoryAtomically) {
  TempDir dir;
  std::string path = dir.file("checkpoint-10");
  write_directory_atomic(path, [&](const std::string& tmp) {
    EXPECT_NE(tmp, path);
    EXPECT_EQ(tmp.rfind(path + ".tmp-", 0), 0u) << tmp;
    EXPECT_FALSE(fs::exists(path));
    fs::create_directory(fs::path(tmp) / "sub");
    std::ofstream(fs::path(tmp) / "a.txt") << "A";
    std::ofstream(fs::path(tmp) / "sub" / "b.txt") << "B";
  });
  EXPECT_EQ(read_file(path + "/a.txt"), "A");
  EXPECT_EQ(read_file(path + "/sub/b.txt"), "B");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"checkpoint-10"});
}

TEST(AtomicDirectory, TheCommittedDirectoryFollowsTheUmaskLikeMkdir) {
  // Hugging Face's checkpoint folders are 0755 under the usual umask, not mkdtemp's 0700.
  TempDir dir;
  const mode_t old = ::umask(022);
  write_directory_atomic(dir.file("checkpoint-1"), [](const std::string&) {});
  ::umask(027);
  write_directory_atomic(dir.file("checkpoint-2"), [](const std::string&) {});
  ::umask(old);
  EXPECT_EQ(fs::status(dir.file("checkpoint-1")).permissions(), fs::perms(0755));
  EXPECT_EQ(fs::status(dir.file("checkpoint-2")).permissions(), fs::perms(0750));
}

TEST(AtomicDirectory, ReplacesAnExistingDirectoryWholesale) {
  TempDir dir;
  std::string path = dir.file("ckpt");
  fs::create_directory(path);
  std::ofstream(path + "/old.txt") << "old";
  write_directory_atomic(path, [](const std::string& tmp) { std::ofstream(tmp + "/new.txt") << "new"; });
  EXPECT_FALSE(fs::exists(path + "/old.txt"));
  EXPECT_EQ(read_file(path + "/new.txt"), "new");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"ckpt"});
}

TEST(AtomicDirectory, AFillThatThrowsLeavesNothingBehind) {
  TempDir dir;
  std::string path = dir.file("ckpt");
  EXPECT_THROW(write_directory_atomic(path,
                                      [](const std::string& tmp) {
                                        std::ofstream(tmp + "/partial.bin") << "half";
                                        throw std::runtime_error("out of space");
                                      }),
               std::runtime_error);
  EXPECT_TRUE(dir.entries().empty());

  // An existing directory survives a failed replacement untouched.
  fs::create_directory(path);
  std::ofstream(path + "/keep.txt") << "keep";
  EXPECT_THROW(write_directory_atomic(path, [](const std::string&) { throw std::runtime_error("nope"); }),
               std::runtime_error);
  EXPECT_EQ(read_file(path + "/keep.txt"), "keep");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"ckpt"});
}

TEST(AtomicDirectory, TrailingSlashNamesTheSameDirectory) {
  TempDir dir;
  AtomicDirectory d(dir.file("out") + "/");
  EXPECT_EQ(d.path(), dir.file("out"));
  std::ofstream(d.temp_path() + "/x") << "x";
  d.commit();
  EXPECT_EQ(read_file(dir.file("out") + "/x"), "x");
}

// A symlink planted at the temporary name (pointing at a file the user cares
// about) is removed, never written through, and never becomes the result.
TEST(AtomicFile, NeverWritesThroughASymlinkAtTheTemporaryName) {
  TempDir dir;
  const std::string precious = dir.write("precious", "keep me");
  fs::create_directories(dir.file("out"));
  fs::create_symlink(precious, dir.file("out/model.safetensors.tmp"));
  write_file_atomic(dir.file("out/model.safetensors"), "weights");
  EXPECT_EQ(read_file(precious), "keep me");
  EXPECT_FALSE(fs::is_symlink(dir.file("out/model.safetensors")));
  EXPECT_EQ(read_file(dir.file("out/model.safetensors")), "weights");
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir.file("out/model.safetensors.tmp"))));
}

// A symlink at the final name is replaced by the file itself.
TEST(AtomicFile, ReplacesASymlinkAtTheFinalNameInsteadOfWritingThroughIt) {
  TempDir dir;
  const std::string precious = dir.write("precious", "keep me");
  fs::create_directories(dir.file("out"));
  fs::create_symlink(precious, dir.file("out/config.json"));
  write_file_atomic(dir.file("out/config.json"), "{}");
  EXPECT_EQ(read_file(precious), "keep me");
  EXPECT_FALSE(fs::is_symlink(dir.file("out/config.json")));
  EXPECT_EQ(read_file(dir.file("out/config.json")), "{}");
}

TEST(AtomicFile, CopyReplacesASymlinkAtTheDestinationAndRefusesAFifoSource) {
  TempDir dir;
  const std::string precious = dir.write("precious", "keep me");
  const std::string vocab = dir.write("vocab.txt", "[PAD]\n[UNK]\n");
  fs::create_directories(dir.file("out"));
  fs::create_symlink(precious, dir.file("out/vocab.txt"));
  fs::create_symlink(precious, dir.file("out/vocab.txt.tmp"));
  copy_file_atomic(vocab, dir.file("out/vocab.txt"));
  EXPECT_EQ(read_file(precious), "keep me");
  EXPECT_FALSE(fs::is_symlink(dir.file("out/vocab.txt")));
  EXPECT_EQ(read_file(dir.file("out/vocab.txt")), "[PAD]\n[UNK]\n");
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_THROW(copy_file_atomic(dir.file("fifo"), dir.file("out/copy")), IoError);
  EXPECT_FALSE(fs::exists(dir.file("out/copy")));
}

// A FIFO left at the temporary name would block the open for writing.
TEST(AtomicFile, AFifoAtTheTemporaryNameIsReplacedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("trainer_state.json.tmp");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(hearth::testing::returns_without_blocking(fifo, [&] {
    write_file_atomic(dir.file("trainer_state.json"), "{}");
  })) << "a FIFO at the temporary name blocked the write";
  EXPECT_EQ(read_file(dir.file("trainer_state.json")), "{}");
}

}  // namespace
}  // namespace hearth::io
