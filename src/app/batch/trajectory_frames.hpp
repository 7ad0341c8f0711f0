// The frames of a trajectory batch (private to src/app): a topology that gives the atoms and
// charges, and trajectory files read one after the other as one stream, one frame in memory.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "dcsgrid/io/trajectory/trajectory.hpp"

namespace dcsgrid::app {

struct TrajectoryInputs {
  std::string topology;
  std::vector<std::string> trajectories;
  // Where the XTC/TRR frame indexes are kept between runs (io/frame_index_cache.hpp); empty:
  // indexed only when a seek needs it, and not kept.
  std::filesystem::path index_cache;
  // A file cut mid-frame is an error (file, frame, byte offset) unless allowed: then the frames
  // before the cut are used, with a warning.
  bool allow_truncated = false;
  // Each decoded frame is checked as the main command checks its input (atom_checks.hpp); an atom
  // far from all the others is refused too when this is set.
  bool refuse_far_atoms = true;
};
// The index cache of a batch output: next to it, so that it outlives --overwrite and serves a
// re-run with another --frames as well as a --resume.
std::filesystem::path frame_index_cache_path(const std::filesystem::path& output);
// A topology then trajectories, when any input after the first has a trajectory extension;
// nullopt for a batch of structure files. Throws Error when trajectories and structure files mix.
std::optional<TrajectoryInputs> trajectory_inputs(const std::vector<std::string>& files);

// Atoms and charges of the topology: PSF and PRMTOP through io::read_topology, the structure
// formats (PQR, PDB/mmCIF with force-field charges, PDBQT, mol2) through io::read_structure.
AtomSet read_topology_atoms(const std::string& file, const io::ReadOptions& read);

// The selected frames of the stream, their atom count checked against the topology's, the
// XTC/TRR files indexed (from the cache where it fits) so that a selection seeks.
std::unique_ptr<io::TrajectoryReader> open_frames(const TrajectoryInputs& in, std::size_t atoms,
                                                  const std::optional<io::FrameSelection>& frames);

// Which frames the grid's box is made from: none (the user gave the box), every selected frame
// (their union box), or the first selected frame only (--grid-from-first).
enum class BoxFrom { none, all_frames, first_frame };
// One record per selected frame (its file, number in the file, time, the file's SHA-256) and the
// box of the frames `box_from` names. A truncated last frame is an InputError unless
// in.allow_truncated (then logged and left out); each decoded frame's atoms are checked. Only the
// frames of the box are decoded: the others are passed by headers (TrajectoryReader::skip).
struct TrajectoryScan {
  analysis::FrameTable frames;
  std::optional<Box> box;
  std::optional<UnitCell> first_cell;  // the first decoded frame's cell, where it has one
  std::size_t frames_decoded = 0;  // 1 with BoxFrom::first_frame, 0 with BoxFrom::none
};
// checksums: record each file's SHA-256 in the table (false: left empty, for a caller that takes
// them itself).
TrajectoryScan scan_trajectory(const TrajectoryInputs& in, const AtomSet& topology,
                               const std::optional<io::FrameSelection>& frames, BoxFrom box_from,
                               bool checksums = true);

// One frame's atoms and, where the frame records one, its unit cell.
struct FrameAtoms {
  AtomSet atoms;
  std::optional<UnitCell> cell;
};

// Reads the frames in stream order, passing over (without decoding) the ones not asked for.
class TrajectoryFrames {
 public:
  TrajectoryFrames(const TrajectoryInputs& in, AtomSet topology,
                   const std::optional<io::FrameSelection>& frames);
  // The atoms of the stream's frame `index`, which scan_trajectory found as frame `frame_index`
  // of `source`; indexes rise between calls, a gap is crossed by a seek where the stream can (a
  // resume), else by skipping. Throws InputError when the stream no longer has that frame there.
  FrameAtoms read(std::size_t index, const std::string& source, std::int64_t frame_index);

 private:
  std::unique_ptr<io::TrajectoryReader> reader_;
  bool refuse_far_atoms_;
  std::vector<std::string> files_;  // the stream's, to check each frame's source
  AtomSet topology_;
  std::vector<float> xyz_;
  std::size_t next_ = 0;
};

}  // namespace dcsgrid::app
