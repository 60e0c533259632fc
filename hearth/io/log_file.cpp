#include "hearth/io/log_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hearth/core/errors.h"

namespace hearth::io {

LogFile::~LogFile() { close(); }

void LogFile::open(const std::string& path, bool truncate) {
  close();
  path_ = path;
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (truncate ? O_TRUNC : O_APPEND);
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0) {
    const int err = errno;
    HEARTH_CHECK(err != ELOOP, IoError, "[log] ", path,
                 ": is a symbolic link; logs are never written through one (remove it, or choose another "
                 "--output_dir)");
    HEARTH_THROW(IoError, "[log] ", path, ": cannot open it for writing: ", std::strerror(err));
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
