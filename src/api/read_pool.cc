#include "api/read_pool.h"

#include <algorithm>

#include "common/limits.h"

namespace allot {

ReadPool::ReadPool(int threads) {
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
}

ReadPool::~ReadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void ReadPool::submit(Work work) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_ && queue_.size() < limits::kMaxQueuedRequests) {
      queue_.push_back(std::move(work));
      wake_.notify_one();
      return;
    }
  }
  work(true);
}

void ReadPool::loop() {
  for (;;) {
    Work work;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // Stopping, and nothing is left.
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work(false);
  }
}

int default_read_threads() {
  return std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace allot
