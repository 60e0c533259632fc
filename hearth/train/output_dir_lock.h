// One run per output_dir: an advisory lock (flock) on output_dir/.hearth.lock,
// held for the whole run. The file holds the holder's pid and host, so that a
// second run started on the same folder (another --overwrite_output_dir, a
// second resume) fails at once naming it, before it deletes or writes
// anything. The holder removes the file when the run ends; the kernel drops
// the lock when the holder exits, killed or not (a killed run leaves the file,
// which the next run simply locks again).
#pragma once

#include <string>

namespace hearth::train {

inline constexpr const char* kOutputDirLockFile = ".hearth.lock";

class OutputDirLock {
 public:
  // Creates output_dir when missing and takes the lock without waiting.
  // ValueError naming the holder's pid and host when another process holds
  // it; IoError when the file cannot be opened. On a filesystem without
  // flock, nothing is locked and held() is false (reason() says why).
  explicit OutputDirLock(const std::string& output_dir);
  ~OutputDirLock();
  OutputDirLock(const OutputDirLock&) = delete;
  OutputDirLock& operator=(const OutputDirLock&) = delete;

  bool held() const { return fd_ >= 0; }
  const std::string& reason() const { return reason_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string reason_;
  int fd_ = -1;
};

}  // namespace hearth::train
