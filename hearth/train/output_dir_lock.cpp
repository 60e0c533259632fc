#include "hearth/train/output_dir_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <sys/file.h>
#include <sys/stat.h>

#include "hearth/core/errors.h"

namespace hearth::train {
namespace {

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "unknown host";
  return host;
}

// What the holder wrote: "pid <n> host <name>", or a note when it is unreadable.
std::string read_holder(int fd) {
  char buf[512] = {};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.find('\n') != std::string::npos) s = s.substr(0, s.find('\n'));
  return s.empty() ? std::string("a process that has not written its pid yet") : s;
}

}  // namespace

OutputDirLock::OutputDirLock(const std::string& output_dir)
    : path_((std::filesystem::path(output_dir) / kOutputDirLockFile).string()) {
  std::error_code ec;
  std::filesystem::create_directories(output_dir, ec);
  HEARTH_CHECK(!ec, IoError, "[trainer] output_dir '", output_dir, "': cannot create it: ", ec.message());
  for (int attempt = 0;; ++attempt) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    HEARTH_CHECK(fd >= 0, IoError, "[trainer] ", path_,
                 ": cannot open the lock file of the output directory: ", std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK) {
        const std::string holder = read_holder(fd);
        ::close(fd);
        HEARTH_THROW(ValueError, "[trainer] output_dir '", output_dir, "' is in use by another run (", holder,
                     ", lock ", path_, "); wait for it to finish, stop it, or choose another --output_dir");
      }
      ::close(fd);
      HEARTH_CHECK(err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS, IoError, "[trainer] ", path_,
                   ": cannot lock the output directory: ", std::strerror(err));
      reason_ = std::string("this filesystem does not lock files (") + std::strerror(err) + ")";
      return;
    }
    // The holder before may have removed the file between our open and flock:
    // the lock is ours only if the name still leads to the file we locked.
    struct stat locked {
    }, named{};
    if (::fstat(fd, &locked) != 0 || ::stat(path_.c_str(), &named) != 0 || locked.st_dev != named.st_dev ||
        locked.st_ino != named.st_ino) {
      ::close(fd);
      HEARTH_CHECK(attempt < 100, IoError, "[trainer] ", path_, ": the lock file keeps changing under this run");
      continue;
    }
    fd_ = fd;
    break;
  }
  const std::string line = "pid " + std::to_string(::getpid()) + " host " + host_name() + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()))
    reason_ = std::string("could not write the holder into the lock file: ") + std::strerror(errno);
}

OutputDirLock::~OutputDirLock() {
  if (fd_ < 0) return;
  // Removed while still locked: a run that opened it meanwhile sees, once it
  // holds the lock, that the name no longer leads to it, and starts over.
  ::unlink(path_.c_str());
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace hearth::train
