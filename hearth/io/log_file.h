// A file a run appends its logs to (metrics.jsonl, TensorBoard event files),
// opened with O_NOFOLLOW: a symlink planted at its name in the output folder
// is refused instead of followed, so a log never writes over the file it
// points to. Each write goes to the kernel at once (no user-space buffer).
#pragma once

#include <string>
#include <string_view>

namespace hearth::io {

class LogFile {
 public:
  LogFile() = default;
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // Opens `path` for writing, created when missing (mode 0644), emptied when
  // `truncate`, else appended to. IoError naming the path when it cannot be
  // opened, saying so when it is a symlink. Closes any file open before.
  void open(const std::string& path, bool truncate);
  bool is_open() const { return fd_ >= 0; }
  // Writes all of `bytes`; IoError naming the path when that fails.
  void write(std::string_view bytes);
  void close();

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace hearth::io
