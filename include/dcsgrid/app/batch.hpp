// run_batch: the potential of many structures (files, a list file, or every model of a
// multi-model PDB/mmCIF) on one shared grid, into one batch file (batch_file.hpp).
//
// Four stages run at once, joined by bounded queues: reading frames, computing them (one thread
// per worker: a backend each, one per GPU by default), their statistics, and writing them (the
// only thread that touches HDF5). Resumable: with resume, the file is reopened, its inputs, grid and physics
// checked against the options, and only frames not marked complete are computed.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "dcsgrid/io/trajectory/trajectory.hpp"

namespace dcsgrid::app {

using analysis::BatchFile;
using analysis::FrameRecord;
using analysis::HistogramOptions;

// Shard `index` of `count` (--shard I/N, for job arrays): of the n frames a whole run would hold,
// the contiguous block [index·n/count, (index+1)·n/count), in a batch file of its own that keeps
// the frames' numbers in the whole batch; analysis::merge_batch_parts joins the parts. Contiguous
// blocks, so that each part reads one stretch of a trajectory.
struct Shard {
  std::size_t index = 0, count = 1;
};
// "I/N" with 0 <= I < N; throws Error otherwise.
Shard parse_shard(const std::string& text);

struct BatchOptions {
  // Structure files; an entry "@list.txt" stands for the paths listed in that file (one a line,
  // blank lines and # comments ignored, relative paths taken from the list's folder).
  std::vector<std::string> inputs;
  std::filesystem::path output;  // .h5
  bool models_all = false;       // every model of multi-model files, one frame each
  // Trajectories: when inputs after the first are trajectory files (.dcd .xtc .trr .nc .ncdf),
  // the first input is the topology (PSF, PRMTOP, PQR, PDB/mmCIF, ...: atoms and charges) and the
  // trajectories are read one after the other as one stream, a frame each, in constant memory.
  std::optional<io::FrameSelection> frames;  // START:STOP:STEP of the stream's frames
  // The grid around the first selected frame (grown by padding) instead of the union of every
  // frame's box; atoms of later frames outside it still contribute to every grid point.
  bool grid_from_first = false;
  // A trajectory cut mid-frame is an error naming the file, frame and byte offset; allowed, its
  // frames before the cut are used, with a warning (the rows name each frame's file and number).
  bool allow_truncated = false;
  // As the main command: an atom far from all the others (a mistyped coordinate) fails its frame,
  // unless allowed or a box is given.
  bool allow_far_atoms = false;
  io::ReadOptions read;

  // The shared grid: the user's box when given, else the union of every input's box grown by
  // padding.
  GridChoice grid;
  // One method (a batch file holds one map a frame).
  ComputeSettings compute;

  std::optional<Shard> shard;  // compute and write only this part of the frames
  bool resume = false;     // continue an existing output
  bool overwrite = false;  // replace an existing output (without resume)
  bool fail_fast = false;  // stop at the first frame that fails (it is still recorded)

  bool stats = true;  // per-frame min/max/mean/std and histogram under /analysis
  HistogramOptions histogram;
  bool ensemble = false;  // mean and std maps over the complete frames (when all are complete)
  // No batch file: the mean map over the frames that compute (float64 sums), written to `output`
  // in any map format; with average_std also the standard deviation (/potential_std, HDF5).
  // A periodic method's frames must share one cell (within 1e-6 relative).
  bool average = false;
  bool average_std = false;

  // Frames waiting between two stages; 0: as many as fit in 256 MiB, 2 to 16 (the writer groups
  // the frames waiting for it, so a deeper queue means fewer flushes).
  std::size_t queue_depth = 0;
  // Frames computed at once, each by a backend of its own (engine::make_frame_backends): 0 for one
  // per GPU of --gpus (every visible one), or one on the CPU. More workers than GPUs overlap one
  // frame's copies and host work with another's kernels. The file is the same whatever the count.
  std::size_t frame_workers = 0;
  std::string command_line;     // provenance, stored with the metadata

  // Called by the writer thread after each frame it records: (frames done in this run, to do).
  std::function<void(std::size_t done, std::size_t total)> progress;
  // For tests: called by the writer thread after each step of each frame it writes.
  BatchFile::StepHook step_hook;
};

struct BatchResult {
  std::filesystem::path output;
  GridSpec grid;
  std::string device;
  std::size_t frames = 0;      // in the file
  std::size_t computed = 0;    // written complete in this run
  std::size_t skipped = 0;     // already complete (resume)
  std::size_t failed = 0;      // failed in this run
  std::size_t pending = 0;     // left pending (fail_fast stopped the run)
  std::size_t missing = 0;     // rows of cut-off trajectory frames (--allow-truncated)
  std::vector<FrameRecord> failures;  // the first 100 frames that failed in this run
  double scan_seconds = 0;     // first pass over the inputs (boxes, checksums)
  // Trajectory frames whose coordinates that pass decoded: every frame for the union box, one
  // with grid_from_first, none with a given box (the others are passed by their headers).
  std::size_t scan_frames_decoded = 0;
  double pipeline_seconds = 0; // the four-stage pipeline, wall clock
  double ensemble_seconds = 0;
  double frames_per_second = 0;  // computed / pipeline_seconds
  // Busy time of each stage, seconds; share = busy / pipeline_seconds. stats: each frame's
  // statistics and histogram (none without stats).
  double read_busy = 0, compute_busy = 0, stats_busy = 0, write_busy = 0;
  // Inside compute: the engine's set-up (device start, uploads) and kernel seconds, summed.
  double engine_setup = 0, engine_kernels = 0;
  // The frames' maps stayed on the GPUs (--average's sums were added there).
  bool maps_on_device = false;
  // Each frame's map was computed whole on its GPU, its statistics taken there, and copied to the
  // host once (methods that need no host work, on backends of one GPU each).
  bool maps_through_device = false;
  nlohmann::json to_json() const;
};

// Runs (or resumes) a batch, holding io::OutputLock on the output throughout. Throws Error for bad
// options, unreadable list files, an output another process is writing, an existing output
// without overwrite/resume, a resume whose file does not match the options, a truncated
// trajectory (unless allowed), and (with fail_fast) the first failed frame, after recording it.
BatchResult run_batch(const BatchOptions& options);

// The inputs with every @list expanded. Throws InputError for a list file that cannot be read.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs);

// Metadata stored with batch maps: the options' physics and method, the program version.
io::MapMetadata batch_metadata(const BatchOptions& options);

}  // namespace dcsgrid::app
