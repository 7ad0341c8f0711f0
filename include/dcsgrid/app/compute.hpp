// Maps from atoms held in memory, without files: one map into a caller's buffer (compute_map), and
// the maps of many frames of one system (a trajectory) computed on a worker thread while the caller
// prepares the next frame (FrameMaps), optionally recorded in a batch file (batch_file.hpp). The
// Python module's entry points; the main job (job.hpp) streams maps into files instead.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/app/job.hpp"
#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::app {

// A backend for the settings' device and GPUs, started (warm_up), that supports every method of
// the settings. On the CPU its slabs are small (4 MiB), so progress, and with it a front end's check
// for an interrupt, comes often. Throws Error.
std::unique_ptr<engine::Backend> start_backend(const ComputeSettings& settings);

// The potential of atoms on grid by method (one of the settings') into out: grid.point_count()
// floats, x fastest. The observer sees one pass; an exception thrown from its progress() stops the
// run after the current slab and propagates (how a front end interrupts). Throws Error for empty
// atoms, a bad grid or settings, or a method the backend lacks.
engine::RunStats compute_map(engine::Backend& backend, const AtomSet& atoms, const GridSpec& grid,
                             const ComputeSettings& settings, engine::Method method, float* out,
                             Observer& observer);
// The same, handing each slab to sink (in z order) instead of copying it into a buffer.
engine::RunStats compute_map(engine::Backend& backend, const AtomSet& atoms, const GridSpec& grid,
                             const ComputeSettings& settings, engine::Method method,
                             const engine::SlabSink& sink, Observer& observer);

// Where FrameMaps records its frames: a batch file (run_batch's layout) created at the start with
// `frames` frames, each recorded with `source` as its input and its number (from 1) as its model.
struct FrameFile {
  std::filesystem::path path;  // .h5; empty: no file
  std::size_t frames = 0;
  std::string source;
  bool overwrite = false;
  bool stats = true;     // per-frame statistics and histogram under /analysis
  analysis::HistogramOptions histogram;
  bool ensemble = false; // mean and std maps over the frames, written by finish()
  std::string command_line;  // provenance
};

struct FrameMap {
  std::size_t index = 0;     // in submission order, from 0
  std::vector<float> data;   // the map, x fastest
  engine::RunStats stats;
};

struct FramesSummary {
  std::size_t frames = 0;          // computed
  double seconds = 0;              // from construction to the end of finish()
  double compute_seconds = 0;      // in compute_map, summed
  double write_seconds = 0;        // recording frames in the file, summed
  double frames_per_second = 0;
  std::string device;
};

// Called about every 0.1 s while a FrameMaps call waits, without any lock held; an exception from
// it propagates out of the call (a front end's interrupt).
using WaitPoll = std::function<void()>;

// Frames computed in submission order by one worker thread, on one backend, with the settings'
// first method. The caller submits frame i+1 (reading and converting it meanwhile) while frame i
// computes; at most `depth` frames wait on each side, so memory stays bounded. With keep_maps the
// caller takes each map with next(), else maps go only into the file. The first error stops the
// worker and is rethrown by the next call. Destroying it without finish() stops the worker at the
// next slab of its current frame; a file then keeps the frames done so far (the rest are pending).
class FrameMaps {
 public:
  FrameMaps(std::shared_ptr<engine::Backend> backend, const ComputeSettings& settings,
            const GridSpec& grid, const FrameFile& file = {}, bool keep_maps = true,
            std::size_t depth = 2);
  ~FrameMaps();
  FrameMaps(const FrameMaps&) = delete;
  FrameMaps& operator=(const FrameMaps&) = delete;

  const GridSpec& grid() const;
  // Queues a frame (the atoms of the system at one time, and the frame's unit cell where it has
  // one: a periodic method computes in it unless the settings give a cell, as batch does), waiting
  // while `depth` frames wait.
  void submit(AtomSet atoms, std::optional<UnitCell> cell = {}, const WaitPoll& poll = {});
  // The oldest map not yet taken (keep_maps only), waiting for it; nullopt once every submitted
  // frame has been taken.
  std::optional<FrameMap> next(const WaitPoll& poll = {});
  // No more frames: waits until every frame is computed and recorded, writes the ensemble maps,
  // and reports. Throws Error when a file was given and the frames submitted differ from its count.
  FramesSummary finish(const WaitPoll& poll = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dcsgrid::app
