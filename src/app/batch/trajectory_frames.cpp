#include "app/batch/trajectory_frames.hpp"

#include "app/atom_checks.hpp"

#include <map>

#include <spdlog/spdlog.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/trajectory/frame_index_cache.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/files/sha256.hpp"
#include "dcsgrid/io/topology/topology.hpp"

namespace dcsgrid::app {

std::optional<TrajectoryInputs> trajectory_inputs(const std::vector<std::string>& files) {
  std::size_t trajectories = 0;
  for (std::size_t i = 1; i < files.size(); ++i) trajectories += io::is_trajectory_path(files[i]);
  if (trajectories == 0) return std::nullopt;
  if (trajectories + 1 != files.size() || io::is_trajectory_path(files.front()))
    throw Error("batch: a trajectory batch is one topology (PSF, PRMTOP, PQR, PDB, ...) followed by "
                "trajectory files (.dcd .xtc .trr .nc .ncdf) only; got " +
                std::to_string(files.size()) + " inputs of which " + std::to_string(trajectories) +
                " after the first are trajectories");
  return TrajectoryInputs{files.front(), {files.begin() + 1, files.end()}, {}};
}

AtomSet read_topology_atoms(const std::string& file, const io::ReadOptions& read) {
  if (io::is_topology_path(file)) return io::read_topology(file).atoms;
  return io::read_structure(file, read).atoms;
}

std::filesystem::path frame_index_cache_path(const std::filesystem::path& output) {
  return output.string() + ".frame-index";
}

std::unique_ptr<io::TrajectoryReader> open_frames(const TrajectoryInputs& in, std::size_t atoms,
                                                  const std::optional<io::FrameSelection>& frames) {
  std::vector<std::filesystem::path> paths(in.trajectories.begin(), in.trajectories.end());
  std::unique_ptr<io::TrajectoryReader> reader = io::open_trajectories(paths);
  io::check_atom_count(in.topology, atoms, *reader);
  if (!in.index_cache.empty()) {
    const io::FrameIndexUse use = io::apply_frame_index_cache(*reader, in.index_cache);
    if (use.cached + use.built > 0)
      spdlog::info("batch: XTC/TRR frame indexes: {} from {}, {} built", use.cached,
                   in.index_cache.string(), use.built);
  }
  if (frames) reader = io::select_frames(std::move(reader), *frames);
  return reader;
}

TrajectoryScan scan_trajectory(const TrajectoryInputs& in, const AtomSet& topology,
                               const std::optional<io::FrameSelection>& frames, BoxFrom box_from,
                               bool checksums) {
  auto reader = open_frames(in, topology.size(), frames);
  std::vector<float> xyz(3 * topology.size());
  AtomSet atoms = topology;
  TrajectoryScan scan;
  io::FrameInfo info;
  // Only the frames whose box is wanted are decoded; the others are passed with skip(), which
  // gives their number and time from the headers (DCD, XTC, TRR, NetCDF) without decoding. The
  // XTC/TRR index (cached) holds offsets only, so their times take one read of each frame header.
  const auto advance = [&] {
    const bool decode = box_from == BoxFrom::all_frames || (box_from == BoxFrom::first_frame && !scan.box);
    if (!decode) return reader->skip(info);
    if (!reader->next(xyz.data(), info)) return false;
    if (scan.frames_decoded++ == 0) scan.first_cell = io::frame_cell(info);
    io::set_coordinates(atoms, xyz.data());
    check_atoms(atoms, {in.trajectories.at(info.file), info.index}, in.refuse_far_atoms);
    const Box b = bounding_box(atoms);
    scan.box = scan.box ? union_box(*scan.box, b) : b;
    return true;
  };
  if (const auto count = reader->frame_count()) scan.frames.reserve(std::size_t(*count));
  std::map<std::string, std::uint32_t> sources;  // the table's source of each file of the stream
  const auto source_of = [&](const std::string& path) {
    if (!sources.contains(path)) sources[path] = scan.frames.source_index(path, checksums ? io::sha256_file(path) : "");
    return sources[path];
  };
  // A cut-off frame is refused, or (allowed) kept as a missing row where the stream lost it, so
  // the table shows the gap: the reader reports a file's cut when it has moved past that file.
  std::size_t cuts_seen = 0;
  const auto record_cuts = [&] {
    for (; cuts_seen < reader->truncations().size(); ++cuts_seen) {
      const io::Truncation& t = reader->truncations()[cuts_seen];
      if (!in.allow_truncated)
        throw Error(t.message() + ": a trajectory cut short is refused (--allow-truncated uses the frames "
                    "before the cut)");
      spdlog::warn("{} (the frames before it are used, and the table holds a missing row for it: "
                   "--allow-truncated)", t.message());
      scan.frames.add(source_of(t.file), 1, t.frame);
      scan.frames.set_outcome(scan.frames.size() - 1, analysis::FrameStatus::missing, 0, 0, t.message());
    }
  };
  while (advance()) {
    record_cuts();
    scan.frames.add(source_of(in.trajectories.at(info.file)), 1, info.index, info.time_ps);
  }
  record_cuts();
  if (scan.frames.empty()) throw Error("batch: the trajectories hold no (selected) frame");
  scan.frames.shrink_to_fit();
  return scan;
}

TrajectoryFrames::TrajectoryFrames(const TrajectoryInputs& in, AtomSet topology,
                                   const std::optional<io::FrameSelection>& frames)
    : reader_(open_frames(in, topology.size(), frames)),
      refuse_far_atoms_(in.refuse_far_atoms),
      files_(reader_->files()),
      topology_(std::move(topology)),
      xyz_(3 * topology_.size()) {}

FrameAtoms TrajectoryFrames::read(std::size_t index, const std::string& source, std::int64_t frame_index) {
  if (index < next_) throw Error("internal: trajectory frames read out of order");
  if (index > next_ + 1 && reader_->can_seek() && reader_->frame_count()) {
    reader_->seek(std::int64_t(index));
    next_ = index;
  }
  for (; next_ < index; ++next_)
    if (!reader_->skip()) break;
  io::FrameInfo info;
  const bool have = next_ == index && reader_->next(xyz_.data(), info);
  ++next_;
  if (!have || info.index != frame_index || files_.at(info.file) != source)
    throw InputError(source, 0,
                     "frame " + std::to_string(frame_index) +
                         " is no longer where the batch found it (the trajectory changed?)");
  FrameAtoms frame{topology_, io::frame_cell(info)};
  io::set_coordinates(frame.atoms, xyz_.data());
  check_atoms(frame.atoms, {source, frame_index}, refuse_far_atoms_);
  return frame;
}

}  // namespace dcsgrid::app
