// The batch file: many potential maps on one grid in one HDF5 file, written so that a process
// killed at any moment leaves a file that opens, whose complete frames are intact.
//
// Layout (all datasets created, with their storage allocated, before the first frame; afterwards
// only raw data is written, never HDF5 metadata, so a kill cannot leave half-updated structure):
//   /potential             float32 [frames][nz][ny][nx], chunks of one frame's few planes; the
//                          grid and map metadata as attributes, as in single-map files, and
//                          batch_options: JSON of the options that made the file. A part of a
//                          sharded batch (--shard) also has shard_index, shard_count,
//                          shard_first_frame and batch_frames (int64); its /frame coordinate
//                          holds the frames' numbers in the whole batch. A merged file's
//                          /potential may be an HDF5 virtual dataset over the parts' (no copy).
//   /frames/source         fixed-length string: input file as given
//   /frames/model          int32: model number (0: every model of a file that failed to read)
//   /frames/input_sha256   fixed-length string: SHA-256 of the input file
//   /frames/atom_count     int64
//   /frames/total_charge   float64, e
//   /frames/frame_index    int64: a trajectory frame's number in its file, from 0 (-1: not one)
//   /frames/time_ps        float64: its simulation time, ps (NaN where the format has none)
//   /frames/energy_kj_per_mol, /frames/solvation_kj_per_mol  float64: a solved frame's (pb)
//                          total electrostatic and solvation energies (NaN for other methods, and
//                          solvation without --solvation); absent from files of earlier versions
//   /frames/cell           float64 [frames][6]: a, b, c (Å), alpha, beta, gamma (degrees) of the
//                          frame's unit cell (a periodic method's, else the frame's own box or
//                          CRYST1); NaN for a frame without one; absent from earlier versions
//   /frames/status         enum int8 {pending = 0, complete = 1, failed = 2}
//   /frames/message        fixed-length string (up to 255 bytes): why a frame failed
//   /analysis/stats        float64 [frames][6]: min, max, mean, std, count, non_finite
//                          (when stats are on)
//   /analysis/histogram    uint64 [frames][bins + 2]: bins, then below and above the range
//   /analysis/histogram_edges float64 [frames][bins + 1]
//   /analysis/mean, /analysis/std  float32 [nz][ny][nx] over the complete frames (when ensemble
//                          maps are on) and /analysis/ensemble_frames int64: how many frames they
//                          cover (0: not computed yet)
// A frame's status turns complete only after its data (potential, stats, table row) has been
// flushed; the status is flushed again after. Contents of frames not complete are undefined.
// In memory the table is a FrameTable (frame_table.hpp), read and written a block of rows at a
// time; an open file caps HDF5's metadata cache, so neither grows by more than tens of bytes a
// frame.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dcsgrid/analysis/frame_table.hpp"
#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/maps/metadata.hpp"

namespace dcsgrid::engine {
class DeviceMap;
}

namespace dcsgrid::analysis {

// Where a part of a sharded batch sits in the whole: shard `index` of `count` holds the
// contiguous block of frames [first_frame, first_frame + its frames) of total_frames.
struct ShardInfo {
  std::size_t index = 0, count = 1, first_frame = 0, total_frames = 0;
};
// Frames [first_frame, first_frame + frames) of a merged /potential are the /potential of `file`
// (a path relative to the merged file's folder, or absolute).
struct VirtualPart {
  std::string file;
  std::size_t first_frame = 0, frames = 0;
};

// What a batch file is created with.
struct BatchLayout {
  GridSpec grid;
  io::MapMetadata meta;
  FrameTable frames;
  int histogram_bins = 0;  // 0: no /analysis/stats and histograms
  bool ensemble = false;   // reserve /analysis/mean and /analysis/std
  std::string options_json;  // what made the file (run_batch checks it on resume)
  std::optional<ShardInfo> shard;  // a part of a sharded batch
  // Not empty: /potential is a virtual dataset over these parts (which cover every frame), never
  // written through this file.
  std::vector<VirtualPart> virtual_parts;
};

// Points in the writer's sequence of steps for one frame; a test hook can stop the process at
// any of them to check that the file survives.
enum class WriteStep { data_written, data_flushed, status_written, status_flushed };

// An open batch file. Not thread-safe (HDF5 is not): one thread uses it.
class BatchFile {
 public:
  // Creates the file with every dataset allocated, under a temporary name renamed into place when
  // complete. Throws Error when it exists (callers decide about overwriting).
  static void create(const std::filesystem::path& path, const BatchLayout& layout);
  // Opens an existing batch file; throws Error naming the file when it is not one. every_rank:
  // opened by every rank of the MPI job at once, each writing its own frames through MPI-IO (a
  // collective open and close; frames are then complete without HDF5 flushes, which would be
  // collective).
  explicit BatchFile(const std::filesystem::path& path, bool writable = false, bool every_rank = false);
  ~BatchFile();
  BatchFile(BatchFile&&) noexcept;
  BatchFile& operator=(BatchFile&&) noexcept;

  const std::filesystem::path& path() const;
  const GridSpec& grid() const;
  const io::MapMetadata& meta() const;
  // The frame table, as read at open (in blocks of rows) and updated by this object's writes.
  const FrameTable& frames() const;
  int histogram_bins() const;  // 0 when the file has no stats datasets
  bool has_ensemble() const;
  const std::string& options_json() const;
  const std::optional<ShardInfo>& shard() const;  // set for a part of a sharded batch
  // Every frame's stats row (NaN/0 for frames not complete); empty when the file has no stats.
  std::vector<MapStats> stats() const;

  // The checksum written into the rows of the frames of source `source` (frames().sources()) from
  // now on: a resume records the inputs as they are now.
  void set_source_sha256(std::uint32_t source, std::string sha256);

  // Writes frame `index` (the grid's point_count floats, x fastest), its stats when the file has
  // them, and its table row, then marks it complete as the header describes. The row's source,
  // model, frame index and time are the table's; `record` gives its atom count and total charge.
  // hook, when set, is called after each step.
  using StepHook = std::function<void(std::size_t index, WriteStep step)>;
  void write_frame(std::size_t index, const float* data, const FrameRecord& record,
                   const MapStats* stats, const StepHook& hook = {});
  // Several frames at once (any order, distinct), with two flushes for the whole group instead of
  // two a frame and one write a table column (the statuses too) for the group; the hook is called
  // for every frame of the group after each step.
  struct FrameWrite {
    std::size_t index;
    const float* data;  // null where the map is on a GPU (a sink's own frames; never a file's)
    FrameRecord record;
    const MapStats* stats;
    const engine::DeviceMap* on_device = nullptr;  // a map the pipeline left on its GPU
  };
  void write_frames(std::span<const FrameWrite> frames, const StepHook& hook = {});
  // Writes frame `index`'s stats row only (merge: a frame whose data lies in a part).
  void write_stats(std::size_t index, const MapStats& stats);
  // Records a failed frame (table row with status failed, the record's atom count, total charge
  // and message), flushed.
  void write_failure(std::size_t index, const FrameRecord& record);
  // Reads frame `index` into out (point_count floats).
  void read_frame(std::size_t index, float* out) const;
  // The ensemble maps (point_count floats each) and how many frames they cover, flushed.
  void write_ensemble(const float* mean, const float* stddev, std::size_t frames);
  std::size_t ensemble_frames() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when the file has the batch layout (a 4-D /potential and /frames).
bool is_batch_file(const std::filesystem::path& path);

}  // namespace dcsgrid::analysis
