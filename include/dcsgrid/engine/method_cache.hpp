// Set-up that a backend keeps from one run to the next when asked (Backend::keep_setup, which
// batch's frame workers set): a method's parts that depend only on a key (a cell and the method's
// parameters, not the atoms), such as PME's FFT plan and influence function, so that the frames of
// a batch in one box make them once. One object per type is kept, the last one given back; a run
// takes it out while it uses it, so two runs at once never share one (the second makes its own).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>

namespace dcsgrid::engine {

class MethodCache {
 public:
  // The kept T if it was made for key, else nullptr; either way the cache no longer holds a T (a
  // T of another key is freed now, before the caller makes its own: two are never held at once).
  template <typename T>
  std::unique_ptr<T> take(const std::string& key) {
    std::unique_ptr<T> value;
    Holder stale{nullptr, [](void*) {}};
    {
      std::lock_guard lock(mutex_);
      const auto it = kept_.find(std::type_index(typeid(T)));
      if (it == kept_.end()) return nullptr;
      if (it->second.key == key)
        value.reset(static_cast<T*>(it->second.value.release()));
      else
        stale = std::move(it->second.value);
      kept_.erase(it);
    }
    return value;  // stale is freed here, outside the lock
  }
  // Keeps value for key, in place of the T kept before (freed first, so that two large set-ups
  // are never held at once by the cache).
  template <typename T>
  void keep(const std::string& key, std::unique_ptr<T> value) {
    if (!value) return;
    std::lock_guard lock(mutex_);
    Entry& e = kept_[std::type_index(typeid(T))];
    e.value.reset();
    e.value = Holder(value.release(), [](void* p) { delete static_cast<T*>(p); });
    e.key = key;
  }

 private:
  using Holder = std::unique_ptr<void, void (*)(void*)>;
  struct Entry {
    std::string key;
    Holder value{nullptr, [](void*) {}};
  };
  std::mutex mutex_;
  std::map<std::type_index, Entry> kept_;
};

// Takes T for key from cache (nullptr: none) or makes it with make(), and keeps it back in the
// cache when destroyed.
template <typename T>
class Cached {
 public:
  template <typename Make>
  Cached(MethodCache* cache, std::string key, Make&& make) : cache_(cache), key_(std::move(key)) {
    if (cache_) value_ = cache_->take<T>(key_);
    if (!value_) value_ = make();
  }
  ~Cached() {
    if (cache_) cache_->keep(key_, std::move(value_));
  }
  Cached(const Cached&) = delete;
  Cached& operator=(const Cached&) = delete;
  T& operator*() const { return *value_; }
  T* operator->() const { return value_.get(); }

 private:
  MethodCache* cache_;
  std::string key_;
  std::unique_ptr<T> value_;
};

}  // namespace dcsgrid::engine
