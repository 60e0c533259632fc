#include "hearth/io/file_checks.h"

#include <sys/stat.h>

#include "hearth/core/errors.h"

namespace hearth::io {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

void check_regular_file(const std::string& path, const std::string& component) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;
  HEARTH_CHECK(S_ISREG(st.st_mode), IoError, component, " ", path, ": is ", kind_of(st.st_mode),
               ", expected a regular file");
}

}  // namespace hearth::io
