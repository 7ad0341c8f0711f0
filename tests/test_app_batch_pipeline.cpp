// The batch pipeline (app/batch/pipeline.hpp) on the CPU with several workers: a sink that asks
// for frame order gets every frame and failure in the order they were dispatched, although a slow
// first frame finishes after later ones; a sink that does not gets them as they come.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "app/batch/distribution.hpp"
#include "app/batch/pipeline.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "helpers.hpp"

namespace dcsgrid::app {
namespace {

// Records the order in which frames and failures reach it.
class RecordingSink final : public FrameSink {
 public:
  RecordingSink(GridSpec grid, bool ordered, std::size_t frames) : grid_(grid), ordered_(ordered) {
    const std::uint32_t source = table_.source_index("frames", "");
    for (std::size_t i = 0; i < frames; ++i) table_.add(source, int(i) + 1);
  }
  const GridSpec& grid() const override { return grid_; }
  const analysis::FrameTable& frames() const override { return table_; }
  void write_frames(std::span<const analysis::BatchFile::FrameWrite> group) override {
    for (const auto& f : group) order.push_back(f.index);
  }
  void write_failure(std::size_t index, const analysis::FrameRecord&) override { order.push_back(index); }
  bool wants_frame_order() const override { return ordered_; }
  std::vector<std::size_t> order;

 private:
  GridSpec grid_;
  bool ordered_;
  analysis::FrameTable table_;
};

class CountingDispenser final : public FrameDispenser {
 public:
  explicit CountingDispenser(std::size_t count) : count_(count) {}
  std::optional<std::size_t> next() override {
    if (next_ >= count_) return std::nullopt;
    return next_++;
  }
  void stop_all() override { next_ = count_; }

 private:
  std::size_t count_, next_ = 0;
};

// Frame 0 is slow (30,000 atoms against 6: with 4,000, a 16-core machine running other tests once
// finished it before the 29 small frames had all gone through), frame 5 cannot be read.
std::vector<std::size_t> run_frames(bool ordered, std::size_t frames, std::size_t workers) {
  const GridSpec grid = grid_from_origin({0, 0, 0}, {24, 24, 24}, 0.5);
  RecordingSink sink(grid, ordered, frames);
  BatchOptions options;
  options.compute.device = "cpu";
  options.queue_depth = 4;
  std::vector<std::unique_ptr<engine::Backend>> backends;
  for (std::size_t w = 0; w < workers; ++w) backends.push_back(engine::make_cpu_backend());
  CountingDispenser dispenser(frames);
  const FrameRead read = [](std::size_t index) {
    if (index == 5) throw Error("frame 5 is unreadable");
    FrameAtoms frame;
    frame.atoms = test::random_atoms(index == 0 ? 30000 : 6, Box{{0, 0, 0}, {12, 12, 12}}, index + 1);
    return frame;
  };
  BatchResult result;
  run_pipeline(options, read, sink, backends, dispenser, frames, result);
  EXPECT_EQ(result.computed, frames - 1);
  EXPECT_EQ(result.failed, 1u);
  return sink.order;
}

TEST(BatchPipeline, SinkAskingForFrameOrderGetsTheDispatchOrder) {
  std::vector<std::size_t> expected(30);
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = i;
  for (int round = 0; round < 3; ++round) EXPECT_EQ(run_frames(true, expected.size(), 4), expected);
}

// The check above can fail: without frame order the slow first frame arrives after later ones.
TEST(BatchPipeline, OtherSinksGetFramesAsTheyFinish) {
  const std::vector<std::size_t> order = run_frames(false, 30, 4);
  ASSERT_EQ(order.size(), 30u);
  EXPECT_NE(order.front(), 0u);
}

}  // namespace
}  // namespace dcsgrid::app
