// One process runs the whole batch: every frame in order, on all of the hardware it was given.
#include "app/batch/distribution.hpp"

#include <algorithm>

namespace dcsgrid::app {

void FrameRuns::add(std::size_t frame) {
  if (!runs_.empty() && runs_.back().end == frame)
    ++runs_.back().end;
  else
    runs_.push_back({frame, frame + 1, size_});
  ++size_;
}

std::size_t FrameRuns::operator[](std::size_t k) const {
  const auto run = std::upper_bound(runs_.begin(), runs_.end(), k,
                                    [](std::size_t key, const Run& r) { return key < r.before; });
  const Run& r = *(run - 1);
  return r.first + (k - r.before);
}

namespace {

class FrameList final : public FrameDispenser {
 public:
  explicit FrameList(const FrameRuns& todo) : todo_(todo) {}
  std::optional<std::size_t> next() override {
    if (next_ >= todo_.size()) return std::nullopt;
    return todo_[next_++];
  }
  void stop_all() override { next_ = todo_.size(); }

 private:
  FrameRuns todo_;
  std::size_t next_ = 0;
};

class SingleProcess final : public BatchDistribution {
 public:
  bool is_root() const override { return true; }
  void barrier() override {}
  bool every_process_writes() const override { return false; }
  void choose_hardware(ComputeSettings&) const override {}
  std::unique_ptr<FrameDispenser> dispense(const FrameRuns& todo) override {
    return std::make_unique<FrameList>(todo);
  }
  void sum_on_root(BatchResult&) override {}
};

}  // namespace

BatchDistribution& single_process() {
  static SingleProcess single;
  return single;
}

}  // namespace dcsgrid::app
