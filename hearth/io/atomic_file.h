// Writing files and directories so that a crash, a full disk or an exception
// mid-write never leaves a half-written result under the final name: readers
// see either the old contents or the complete new ones. Everything is written
// under a temporary name, flushed to disk (fsync), then renamed into place.
//
// Errors are IoError "[atomic_file] <path>: <what failed>: <strerror>".
//
// Test hooks (environment, read at each use): HEARTH_TEST_FAIL_WRITE=N makes
// every atomic file fail with "No space left on device" once N of its bytes
// are written; HEARTH_TEST_PAUSE_WRITE_MS=M sleeps M ms before each file or
// directory is renamed into place, so a test can kill a process mid-save.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace hearth::io {

// A file written at `<path>.tmp` and moved to `path` by commit(). Destroyed
// without commit() (e.g. because the code filling it threw), it removes the
// temporary file and leaves `path` untouched.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t nbytes);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  // fsync the file, rename it over `path`, fsync the parent directory so the
  // rename itself survives a power loss.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  size_t bytes_written() const { return written_; }

 private:
  void discard() noexcept;

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  size_t written_ = 0;
  bool committed_ = false;
};

// Creates `path` atomically from what `fill` writes.
void write_file_atomic(const std::string& path, const std::function<void(AtomicFileWriter&)>& fill);
void write_file_atomic(const std::string& path, std::string_view contents);

// Copies the regular file `from` to `to` atomically, as write_file_atomic
// does: a symlink at `to` is replaced, never written through. IoError when
// `from` is not a regular file (a FIFO would block the copy).
void copy_file_atomic(const std::string& from, const std::string& to);

// A directory built at `<path>.tmp-XXXXXX` (a fresh unique name) and moved to
// `path` by commit(). If `path` already exists it is swapped out atomically
// (renameat2 RENAME_EXCHANGE) and the old tree removed; on filesystems without
// the exchange, the old tree is first moved aside, leaving a short window with
// no directory at `path` but never a partial one. Destroyed without commit(),
// the temporary tree is removed.
class AtomicDirectory {
 public:
  explicit AtomicDirectory(std::string path);
  ~AtomicDirectory();
  AtomicDirectory(const AtomicDirectory&) = delete;
  AtomicDirectory& operator=(const AtomicDirectory&) = delete;

  // Where to write the directory's contents until commit().
  const std::string& temp_path() const { return temp_path_; }
  const std::string& path() const { return path_; }
  // fsync every file and directory in the tree, then move it into place.
  void commit();

 private:
  void discard() noexcept;

  std::string path_;
  std::string temp_path_;
  bool committed_ = false;
};

// Creates directory `path` atomically from what `fill` writes into the
// temporary directory it is given.
void write_directory_atomic(const std::string& path, const std::function<void(const std::string& temp_dir)>& fill);

// fsync one file or directory by path.
void fsync_path(const std::string& path);

}  // namespace hearth::io
