// A bounded blocking queue joining two pipeline stages (any number of threads on each side; the
// producers' side closes it once its last thread is done).
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace dcsgrid::app {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // Waits for room. False when the queue was aborted (the item is dropped).
  bool push(T item) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return aborted_ || items_.size() < capacity_; });
    if (aborted_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }
  // Waits for an item. nullopt once the queue is closed and drained, or aborted.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return aborted_ || closed_ || !items_.empty(); });
    if (aborted_ || items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }
  // An item if one is waiting, else nullopt at once.
  std::optional<T> try_pop() {
    std::lock_guard lock(mutex_);
    if (aborted_ || items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }
  // The producer is done: the consumer drains what is left, then pop() gives nullopt.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
  }
  // Stops both sides at once (a stage failed or the run was stopped).
  void abort() {
    std::lock_guard lock(mutex_);
    aborted_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

 private:
  std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> items_;
  bool closed_ = false, aborted_ = false;
};

}  // namespace dcsgrid::app
