// Threads that decode part of each batch on the host while the device's
// JPEG engines decode the rest (cuda_image_decoder.cpp, host_share.h).
//
// A batch's host part is a set of jobs, one per image. The pool's threads
// take them in order, and the thread that started the set takes what is left
// once its own device work returns, then waits for the ones still running:
// a set is never finished later than its starter could have finished it
// alone, and a slow host only means less help.
//
// Why a pool of its own rather than the loader's workers: while two lanes
// decode on the device, the other workers wait for a lane with nothing of
// their own to do, and the host threads' number is then the host's cores
// (less those the training thread and the lanes need), whatever the number
// of loader workers. Plain C++ (no CUDA): tested where CI runs.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace hearth::backends {

class HostDecodePool {
 public:
  // `threads` 0: no threads; every set is run by its starter in finish().
  explicit HostDecodePool(size_t threads);
  ~HostDecodePool();
  HostDecodePool(const HostDecodePool&) = delete;
  HostDecodePool& operator=(const HostDecodePool&) = delete;

  size_t threads() const { return threads_.size(); }

  class JobSet;
  // Hands job(0) ... job(count - 1) to the pool's threads. The jobs may run
  // on any thread, in any order, at once; each must be finished with
  // finish() before what they use goes away.
  std::shared_ptr<JobSet> start(size_t count, std::function<void(size_t)> job);
  // Runs the set's jobs no thread has taken on the calling thread, waits
  // for those running elsewhere, and rethrows the first exception a job
  // threw. Returns how many jobs the calling thread ran.
  size_t finish(JobSet& set);

 private:
  void work();
  // Takes the next job of `set`, if one is left (mu_ held).
  static bool claim(JobSet& set, size_t* index);
  static void run(JobSet& set, size_t index);

  std::mutex mu_;
  std::condition_variable has_work_;
  std::deque<std::shared_ptr<JobSet>> queue_;  // sets with jobs not yet taken, oldest first
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

class HostDecodePool::JobSet {
 public:
  JobSet(size_t count, std::function<void(size_t)> job) : count_(count), job_(std::move(job)) {}

 private:
  friend class HostDecodePool;
  const size_t count_;
  const std::function<void(size_t)> job_;
  size_t next_ = 0;  // the next job to take (the pool's mutex)
  std::mutex mu_;
  std::condition_variable done_changed_;
  size_t done_ = 0;
  std::exception_ptr error_;
};

// HEARTH_IMAGE_HOST_THREADS: the pool's threads, read once; by default the
// host's cores less 4 (the training thread, two decoding lanes and the
// loader's file reading), none on a host of 4 cores or fewer.
size_t host_decode_threads_from_env();

}  // namespace hearth::backends
