// What a batch reads (private to src/app): its inputs checked, the frames laid out with the grid,
// and each frame's atoms read for the pipeline. Shared by the batch file and --average.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/batch/trajectory_frames.hpp"
#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/app/batch.hpp"

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
// What the first pass over the inputs found beside the layout.
struct ScanFacts {
  std::size_t frames_decoded = 0;      // trajectory frames whose coordinates the pass decoded
  std::optional<UnitCell> grid_cell;   // the cell a periodic grid refers to: --cell, else the first
                                       // frame's that records one
};

// The frames of the inputs (a first pass over them) and the grid: given, over the first frame's cell
// for a periodic method, else around the frames' union box. trajectory_checksums: the table records
// each trajectory file's SHA-256 (false: empty, for a caller that takes them itself).
analysis::BatchLayout lay_out_batch(const BatchOptions& o, const BatchInputs& in, ScanFacts& facts,
                                   bool trajectory_checksums = true);

// Reads the atoms of frame i of the table. It runs on the pipeline's one reading thread.
using FrameRead = std::function<FrameAtoms(std::size_t)>;
// The reader of the table's frames: frame i of the table is frame first_frame + i of a trajectory
// stream, or a structure file's model. The table outlives the reader.
FrameRead frame_reader(const BatchOptions& o, const BatchInputs& in, const analysis::FrameTable& table,
                       std::size_t first_frame);

}  // namespace dcsgrid::app
