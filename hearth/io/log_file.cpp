#include "hearth/io/log_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <sys/stat.h>

#include "hearth/core/errors.h"

namespace hearth::io {

LogFile::~LogFile() { close(); }

void LogFile::open(const std::string& path, bool truncate) {
  close();
  path_ = path;
  // O_NONBLOCK: opening a FIFO for writing would wait for a reader forever
  // (with it, the open fails with ENXIO or returns at once, and the type
  // check below refuses it). O_TRUNC is applied only once the file is known
  // to be a regular one.
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (truncate ? 0 : O_APPEND);
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0) {
    const int err = errno;
    HEARTH_CHECK(err != ELOOP, IoError, "[log] ", path,
                 ": is a symbolic link; logs are never written through one (remove it, or choose another "
                 "--output_dir)");
    HEARTH_CHECK(err != ENXIO, IoError, "[log] ", path, ": is a FIFO (named pipe), expected a regular file");
    HEARTH_THROW(IoError, "[log] ", path, ": cannot open it for writing: ", std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    close();
    HEARTH_THROW(IoError, "[log] ", path,
                 ": is not a regular file (a FIFO, device or socket); logs are written only to "
                 "regular files");
  }
  // Back to blocking writes, as for any file.
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  if (truncate && ::ftruncate(fd_, 0) != 0) {
    const int err = errno;
    close();
    HEARTH_THROW(IoError, "[log] ", path, ": cannot empty it: ", std::strerror(err));
  }
}

void LogFile::write(std::string_view bytes) {
  HEARTH_CHECK(fd_ >= 0, IoError, "[log] ", path_, ": written to before it was opened");
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    HEARTH_CHECK(n > 0, IoError, "[log] ", path_, ": write failed: ", std::strerror(n < 0 ? errno : EIO));
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void LogFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace hearth::io
