// One process runs the whole batch: every frame in order, on all of the hardware it was given.
#include "batch_distribution.hpp"

namespace dcsgrid::app {

namespace {

class FrameList final : public FrameDispenser {
 public:
  explicit FrameList(const std::vector<std::size_t>& todo) : todo_(todo) {}
  std::optional<std::size_t> next() override {
    if (next_ >= todo_.size()) return std::nullopt;
    return todo_[next_++];
  }
  void stop_all() override { next_ = todo_.size(); }

 private:
  std::vector<std::size_t> todo_;
  std::size_t next_ = 0;
};

class SingleProcess final : public BatchDistribution {
 public:
  bool is_root() const override { return true; }
  void barrier() override {}
  bool every_process_writes() const override { return false; }
  void choose_hardware(ComputeSettings&) const override {}
  std::unique_ptr<FrameDispenser> dispense(const std::vector<std::size_t>& todo) override {
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
