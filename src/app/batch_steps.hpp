// The steps of a batch run that the batch file and --average share. Internal to the app layer.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "batch_distribution.hpp"
#include "batch_pipeline.hpp"
#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/app/batch.hpp"
#include "trajectory_frames.hpp"

namespace dcsgrid::app {

// What a batch reads: the files (lists expanded) and, for a trajectory batch, its parts and the
// topology's atoms (read once: a bad topology fails the batch, not each frame).
struct BatchInputs {
  std::vector<std::string> files;
  std::optional<TrajectoryInputs> trajectory;
  std::optional<AtomSet> topology;
};

// Checks the options and the inputs' names and reads the topology. Throws Error.
BatchInputs check_batch(const BatchOptions& o);
// The frames of the inputs (a first pass over them) and the grid: given, over the first frame's cell
// for a periodic method, else around the frames' union box. frames_decoded: trajectory frames whose
// coordinates that pass decoded.
analysis::BatchLayout lay_out_batch(const BatchOptions& o, const BatchInputs& in, std::size_t& frames_decoded);
// Computes the frames in todo (those `distribution` hands this process) into the sink; frame i of
// the sink's table is frame first_frame + i of a trajectory stream. Returns true when fail_fast
// stopped the run.
bool compute_frames(const BatchOptions& o, const BatchInputs& in, FrameSink& sink, std::size_t first_frame,
                    const FrameRuns& todo, BatchDistribution& distribution, BatchResult& result);

}  // namespace dcsgrid::app
