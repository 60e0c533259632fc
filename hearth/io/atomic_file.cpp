#include "hearth/io/atomic_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>

#include "hearth/core/errors.h"
#include "hearth/core/switch_list.h"
#include "hearth/io/file_checks.h"

namespace fs = std::filesystem;

namespace hearth::io {
namespace {

[[noreturn]] void throw_errno(const std::string& path, const char* what, int err) {
  HEARTH_THROW(IoError, "[atomic_file] ", path, ": ", what, ": ", std::strerror(err));
}

std::string parent_dir(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// ---- test hooks ----------------------------------------------------------------
// Read on every use (not cached) so a test can set and clear them in-process.

// HEARTH_TEST_FAIL_WRITE=N: every atomic file fails with ENOSPC once N of its
// bytes are written, the way a full disk fails a save part way through.
std::optional<size_t> injected_write_limit() {
  const IntegerSwitch& limit = switches::test_fail_write();
  if (!limit.is_set()) return std::nullopt;
  return static_cast<size_t>(limit.get());
}

// HEARTH_TEST_PAUSE_WRITE_MS=M: sleep M ms just before each file or directory
// is renamed into place, so a test can kill the process inside a save.
void injected_pause() {
  const int64_t ms = switches::test_pause_write_ms().get();
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// "a/b/" names the same directory as "a/b"; the suffixes below need the latter.
std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

void fsync_path(const std::string& path) {
  // O_NONBLOCK: a FIFO put where a file was expected must not block the open.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw_errno(path, "cannot open to flush", errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some filesystems cannot fsync a directory; that is not a lost write.
  if (rc != 0 && err != EINVAL && err != EROFS) throw_errno(path, "fsync failed", err);
}

// ---- files -------------------------------------------------------------------

AtomicFileWriter::AtomicFileWriter(std::string path) : path_(std::move(path)), temp_path_(path_ + ".tmp") {
  // Whatever is at the temporary name (a crash's leftover, or a symlink, FIFO
  // or file planted there) is unlinked first: unlink removes a symlink
  // itself, never what it points to. The file is then created fresh, never
  // opened through a link (O_EXCL|O_NOFOLLOW): one planted between the two
  // calls makes the open fail instead of writing outside the folder.
  struct stat st {};
  if (::lstat(temp_path_.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) ::unlink(temp_path_.c_str());
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int err = errno;
    if (err == EEXIST || err == ELOOP)
      HEARTH_THROW(IoError, "[atomic_file] ", temp_path_,
                   ": something else is at this temporary name (a directory, or a file or symlink created while "
                   "hearth was writing); hearth never writes through it. Remove it and run again");
    throw_errno(temp_path_, "cannot create", err);
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!committed_) discard();
}

void AtomicFileWriter::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(temp_path_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t nbytes) {
  HEARTH_CHECK(fd_ >= 0, IoError, "[atomic_file] ", path_, ": write after commit");
  const char* p = static_cast<const char*>(data);
  bool fail_after = false;
  if (std::optional<size_t> limit = injected_write_limit(); limit && written_ + nbytes > *limit) {
    nbytes = *limit > written_ ? *limit - written_ : 0;
    fail_after = true;
  }
  while (nbytes > 0) {
    ssize_t n = ::write(fd_, p, nbytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(temp_path_, "write failed", errno);
    }
    p += n;
    nbytes -= static_cast<size_t>(n);
    written_ += static_cast<size_t>(n);
  }
  if (fail_after)
    HEARTH_THROW(IoError, "[atomic_file] ", temp_path_, ": write failed after ", written_,
                 " bytes: ", std::strerror(ENOSPC), " (injected by HEARTH_TEST_FAIL_WRITE)");
}

void AtomicFileWriter::commit() {
  HEARTH_CHECK(fd_ >= 0, IoError, "[atomic_file] ", path_, ": commit called twice");
  if (::fsync(fd_) != 0) throw_errno(temp_path_, "fsync failed", errno);
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) throw_errno(temp_path_, "close failed", errno);
  injected_pause();
  // rename() replaces a symlink at `path_` by the file itself; it never
  // writes through the link.
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    throw_errno(path_, "cannot rename the temporary file into place", errno);
  committed_ = true;
  fsync_path(parent_dir(path_));
}

void write_file_atomic(const std::string& path, const std::function<void(AtomicFileWriter&)>& fill) {
  AtomicFileWriter writer(path);
  fill(writer);
  writer.commit();
}

void write_file_atomic(const std::string& path, std::string_view contents) {
  write_file_atomic(path, [&](AtomicFileWriter& w) { w.write(contents); });
}

void copy_file_atomic(const std::string& from, const std::string& to) {
  check_regular_file(from, "[atomic_file]");
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (in < 0) throw_errno(from, "cannot open to copy", errno);
  struct stat st {};
  if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(in);
    HEARTH_THROW(IoError, "[atomic_file] ", from, ": is not a regular file; expected one to copy");
  }
  try {
    write_file_atomic(to, [&](AtomicFileWriter& w) {
      std::vector<char> buffer(size_t{1} << 16);
      for (;;) {
        const ssize_t n = ::read(in, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw_errno(from, "read failed", errno);
        if (n == 0) break;
        w.write(buffer.data(), static_cast<size_t>(n));
      }
    });
  } catch (...) {
    ::close(in);
    throw;
  }
  ::close(in);
}

// ---- directories ---------------------------------------------------------------

namespace {

// The process's umask, read without changing it (Linux reports it in
// /proc/self/status); else set and restored at once.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Umask:", 0) != 0) continue;
    try {
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8)) & 0777;
    } catch (const std::exception&) {
      break;
    }
  }
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return mask;
}

}  // namespace

AtomicDirectory::AtomicDirectory(std::string path) : path_(strip_trailing_slashes(std::move(path))) {
  std::string pattern = path_ + ".tmp-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) throw_errno(pattern, "cannot create a temporary directory", errno);
  temp_path_ = buf.data();
  // mkdtemp makes it 0700; the committed folder gets the mode mkdir would give
  // (0755 under the usual umask), as Hugging Face's checkpoint folders have.
  if (::chmod(temp_path_.c_str(), 0777 & ~current_umask()) != 0) {
    const int err = errno;
    discard();
    throw_errno(temp_path_, "cannot set the temporary directory's permissions", err);
  }
}

AtomicDirectory::~AtomicDirectory() {
  if (!committed_) discard();
}

void AtomicDirectory::discard() noexcept {
  std::error_code ec;
  fs::remove_all(temp_path_, ec);
}

void AtomicDirectory::commit() {
  HEARTH_CHECK(!committed_, IoError, "[atomic_file] ", path_, ": commit called twice");
  std::error_code ec;
  for (fs::recursive_directory_iterator it(temp_path_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() || it->is_directory()) fsync_path(it->path().string());
  }
  if (ec) throw_errno(temp_path_, "cannot walk the temporary directory", ec.value());
  fsync_path(temp_path_);
  injected_pause();

  // rename() replaces a missing or empty directory; a populated one is swapped.
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    if (err != ENOTEMPTY && err != EEXIST) throw_errno(path_, "cannot rename the temporary directory into place", err);
    if (::renameat2(AT_FDCWD, temp_path_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) {
      // temp_path_ now holds the previous tree.
      committed_ = true;
      fsync_path(parent_dir(path_));
      fs::remove_all(temp_path_, ec);
      return;
    }
    err = errno;
    if (err != EINVAL && err != ENOSYS) throw_errno(path_, "cannot swap the temporary directory into place", err);
    std::string pattern = path_ + ".old-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) throw_errno(pattern, "cannot create a directory for the old tree", errno);
    std::string old_path = buf.data();
    if (::rename(path_.c_str(), old_path.c_str()) != 0) throw_errno(path_, "cannot move the old tree aside", errno);
    if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
      err = errno;
      ::rename(old_path.c_str(), path_.c_str());
      throw_errno(path_, "cannot rename the temporary directory into place", err);
    }
    committed_ = true;
    fsync_path(parent_dir(path_));
    fs::remove_all(old_path, ec);
    return;
  }
  committed_ = true;
  fsync_path(parent_dir(path_));
}

void write_directory_atomic(const std::string& path, const std::function<void(const std::string& temp_dir)>& fill) {
  AtomicDirectory dir(path);
  fill(dir.temp_path());
  dir.commit();
}

}  // namespace hearth::io
