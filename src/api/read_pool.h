// The threads that answer reads from the read view, so that reads neither wait behind the core
// thread's batches nor hold up the network thread, and use every core there is.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace allot {

class ReadPool {
 public:
  // Called on a pool thread with false, or at once, on the caller's thread, with true when the
  // queue is full or the pool is stopping: then it is to answer "busy".
  using Work = std::function<void(bool refused)>;

  explicit ReadPool(int threads);
  ReadPool(const ReadPool&) = delete;
  ReadPool& operator=(const ReadPool&) = delete;
  // Runs what is queued, then joins the threads.
  ~ReadPool();

  void submit(Work work);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Work> queue_;  // Guarded by mutex_.
  bool stopping_ = false;   // Guarded by mutex_.
  std::vector<std::thread> threads_;
};

// How many read threads to run: one per core, and at least two.
int default_read_threads();

}  // namespace allot
