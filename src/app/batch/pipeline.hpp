// The batch pipeline: frames read, computed (one thread per backend), their statistics taken and
// handed to a sink (the batch file, or the running mean of --average), four stages joined by bounded
// queues. Internal to the app layer.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "app/batch/distribution.hpp"
#include "app/batch/inputs.hpp"
#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/app/batch.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::app {

// Failed frames a result lists (its count covers them all): a report, bounded however many fail.
inline constexpr std::size_t kMaxListedFailures = 100;

// Frame buffers in flight: one being computed and one in the stats stage per worker, the queues'
// and a group being written.
inline std::size_t frame_buffers(std::size_t queue_depth, std::size_t workers) {
  return queue_depth + 2 * workers + 1;
}

// Where computed frames go. Called from the pipeline's one writing thread.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual const GridSpec& grid() const = 0;
  // The frames' table (sources, models, frame numbers), for messages.
  virtual const analysis::FrameTable& frames() const = 0;
  // Frames complete: in the order the dispenser handed them out when wants_frame_order(), else in
  // any order.
  virtual void write_frames(std::span<const analysis::BatchFile::FrameWrite> group) = 0;
  // True when the sink's result depends on the order of the frames (a running sum): the pipeline
  // then hands frames and failures over in the dispenser's order, whatever the workers' count.
  virtual bool wants_frame_order() const { return false; }
  // A frame that failed, with its message in `outcome`.
  virtual void write_failure(std::size_t index, const analysis::FrameRecord& outcome) = 0;
  // The grid a periodic frame of this cell is computed on, asked before it is computed (from any
  // worker thread, at once): the sink's grid unless the sink places it on each frame's cell. Throws
  // Error when the sink cannot take a frame of that cell (the frame then fails with the message).
  virtual GridSpec grid_for_cell(std::size_t /*index*/, const UnitCell& /*cell*/) { return grid(); }
  // Bytes of each GPU's memory the sink keeps when it takes maps left there
  // (FrameWrite::on_device, data null); 0: it takes maps on the host only. A sink that takes them
  // is done with them when write_frames returns.
  virtual std::size_t device_bytes() const { return 0; }
};

// Computes the frames `frames` hands out (`total` of them in this process at most) on the
// backends, one worker each, into the sink; fills the result's counts, stage times and failures.
// Returns true when the writer stopped the run at a failed frame (fail_fast). Rethrows the first
// error that is not a frame's own.
bool run_pipeline(const BatchOptions& options, FrameRead read_frame, FrameSink& sink,
                  std::vector<std::unique_ptr<engine::Backend>>& backends, FrameDispenser& frames,
                  std::size_t total, BatchResult& result);

// Frames waiting between two stages: the option, or deep enough to group writes within 256 MiB
// of frames.
std::size_t queue_depth(const BatchOptions& o, const GridSpec& grid);

// Computes the frames in todo (those `distribution` hands this process) into the sink: the
// process's share of the hardware, its backends, the frames' reader and the pipeline. Frame i of
// the sink's table is frame first_frame + i of a trajectory stream. Returns true when fail_fast
// stopped the run.
bool compute_frames(const BatchOptions& o, const BatchInputs& in, FrameSink& sink, std::size_t first_frame,
                    const FrameRuns& todo, BatchDistribution& distribution, BatchResult& result);

}  // namespace dcsgrid::app
