// MD trajectories as frame streams: one frame in memory at a time, whatever the file's length.
// Formats, from the extension: .dcd (CHARMM/NAMD/X-PLOR, either endianness, 4- or 8-byte
// record markers), .xtc and .trr (GROMACS), .nc .ncdf (AMBER NetCDF, when built with libnetcdf).
// Coordinates come out in Å, float32, interleaved x0 y0 z0 x1 ...; frames are numbered from 0
// in each file. Errors are InputError naming the file, the frame and the byte offset.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dcsgrid/core/cell.hpp"

namespace dcsgrid::io {

// Unit cell as lengths (Å) and angles (degrees): a, b, c, alpha, beta, gamma.
using CellParameters = std::array<double, 6>;

struct FrameInfo {
  std::size_t file = 0;     // which file of a concatenation (its position in the list)
  std::int64_t index = 0;   // frame number within that file, from 0
  std::int64_t serial = 0;  // frame number in the whole stream (across files), from 0
  std::int64_t step = -1;   // MD step where the format stores one, else -1
  double time_ps = 0;       // NaN where the format has no time
  std::optional<CellParameters> box;  // absent where the file has no (or a zero) unit cell
};

// A last frame cut short: the frames before it were returned, this one was not.
struct Truncation {
  std::string file;
  std::int64_t frame = 0;     // the incomplete frame's number in its file
  std::uint64_t offset = 0;   // byte offset where that frame starts
  std::string problem;        // e.g. "file ends 1200 bytes into a 4812-byte frame"
  std::string message() const;  // "FILE: frame F at byte offset O is truncated (PROBLEM); ..."
};

class TrajectoryReader {
 public:
  virtual ~TrajectoryReader() = default;
  virtual std::size_t atom_count() const = 0;
  // Reads the next frame into xyz (3·atom_count floats). Returns false at the end of the data:
  // a clean end, or a truncated last frame, which is then listed in truncations(). A corrupt
  // frame throws InputError (file, frame, byte offset).
  virtual bool next(float* xyz, FrameInfo& info) = 0;
  // Passes over the next frame without decoding its coordinates where the format allows, and
  // fills info's numbering and the step and time the format keeps outside the coordinates (DCD:
  // from the header's ISTART, NSAVC and DELTA; XTC, TRR: the frame header; NetCDF: the time
  // variable); info.box stays absent where reading it would mean decoding. Returns false at
  // the end, like next().
  virtual bool skip(FrameInfo& info);
  bool skip() {
    FrameInfo info;
    return skip(info);
  }
  // Random access: seek(f) makes the next next() return frame f (of the whole stream; past the
  // end, next() returns false). Formats without fixed-size frames index the file first.
  virtual bool can_seek() const { return false; }
  virtual void seek(std::int64_t frame);
  // Frames in the stream when known without a pass over the file (DCD from its size, NetCDF
  // from its header, XTC/TRR once indexed), counting only complete frames.
  virtual std::optional<std::int64_t> frame_count() const { return std::nullopt; }
  // The files read, in order (one for a single file).
  virtual std::vector<std::string> files() const = 0;
  // Truncated last frames met so far (at most one per file).
  const std::vector<Truncation>& truncations() const { return truncations_; }

 protected:
  std::vector<Truncation> truncations_;
};

// Whether the extension is a trajectory format's (.dcd .xtc .trr .nc .ncdf, any case).
bool is_trajectory_path(const std::filesystem::path& path);
// Opens one trajectory by its extension. Throws InputError for an unknown extension, a missing
// file, a malformed header, a DCD with fixed atoms, or NetCDF without libnetcdf in the build.
std::unique_ptr<TrajectoryReader> open_trajectory(const std::filesystem::path& path);
// Several files read one after the other as one stream (any mix of formats). Every file must
// have the same atom count (InputError naming both files and both counts): every header is read
// here, so a wrong file fails before any work; the data are then read one file at a time.
// frame_count() and seek() need every file's frame count (XTC/TRR files are indexed for it).
std::unique_ptr<TrajectoryReader> open_trajectories(const std::vector<std::filesystem::path>& paths);

// Whether this build reads AMBER NetCDF (libnetcdf found at configure time).
bool netcdf_supported();

// Frame offsets of XTC and TRR files (byte offset of each complete frame), to cache between
// runs. A stream of several files has one index per file, numbered as in FrameInfo::file.
// frame_offsets(file) builds the index on the first call (a pass over the frame headers only);
// set_frame_offsets(offsets, file) installs a cached one after checking that it fits the file
// (the first frame at offset 0, the last one whole, no whole frame after it; else InputError).
// Either makes frame_count() known, so that a selection seeks instead of skipping.
class IndexedTrajectory {
 public:
  virtual ~IndexedTrajectory() = default;
  // Whether file `file` is one that needs an index to seek (XTC, TRR; not DCD or NetCDF).
  virtual bool needs_index(std::size_t file = 0) const = 0;
  virtual const std::vector<std::uint64_t>& frame_offsets(std::size_t file = 0) = 0;
  virtual void set_frame_offsets(std::vector<std::uint64_t> offsets, std::size_t file = 0) = 0;
};
// The reader's index interface (single XTC/TRR files and streams of several files), or nullptr
// (a single DCD or NetCDF file, a frame selection: index the stream before selecting).
IndexedTrajectory* as_indexed(TrajectoryReader& reader);

// Frame selection START:STOP:STEP over a stream's frame numbers (from 0; STOP exclusive, empty =
// to the end; STEP ≥ 1), as "--frames" gives it: "10:", ":100", "::5", "3:90:2", or "7" alone.
struct FrameSelection {
  std::int64_t start = 0;
  std::optional<std::int64_t> stop;
  std::int64_t step = 1;
  bool contains(std::int64_t frame) const;
};
// Throws Error naming the text for a malformed one (negative, zero step, stop before start).
FrameSelection parse_frame_selection(const std::string& text);
// The selected frames of `reader`: skipped frames are passed by seeking where the stream can
// seek and knows its length, else by skip() (no decoding for DCD, XTC, TRR and NetCDF).
// FrameInfo keeps the stream's numbering (file, index, serial); frame_count() counts the
// selected frames and seek(k) goes to the k-th selected one.
std::unique_ptr<TrajectoryReader> select_frames(std::unique_ptr<TrajectoryReader> reader,
                                                const FrameSelection& selection);

// Throws InputError naming both files and both counts when they differ.
void check_atom_count(const std::string& topology_file, std::size_t topology_atoms,
                      const TrajectoryReader& trajectory);

// Lengths and angles of the cell spanned by three vectors (rows of `vectors`, any length unit);
// nullopt for a zero or degenerate cell.
std::optional<CellParameters> cell_parameters_from_vectors(const std::array<std::array<double, 3>, 3>& vectors);
// The frame's cell as the engine takes it; nullopt where the frame has none or an impossible one
// (zero volume, angles out of range).
std::optional<UnitCell> frame_cell(const FrameInfo& frame);

}  // namespace dcsgrid::io
