// The inputs of a batch: list files expanded, the options checked against the inputs, a first pass
// over the frames that lays out the grid, and the reading of each frame's atoms.
#include "app/batch/inputs.hpp"

#include <algorithm>
#include <exception>
#include <memory>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "app/atom_checks.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/files/output_checks.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "dcsgrid/io/files/sha256.hpp"

namespace dcsgrid::app {

using analysis::BatchLayout;

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// One input a line; '#' starts a comment. The list is read as every text input is (judged as it
// streams, so a binary or endless file is refused at once, naming the byte).
void read_list_file(const fs::path& list, std::vector<std::string>& out) {
  const io::TextBuffer text = io::read_text_input(list);
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    const std::string line = trim(std::string(text.view().substr(begin, std::min(end, text.find('#', begin)) - begin)));
    begin = end + 1;
    if (line.empty()) continue;
    const fs::path p(line);
    out.push_back(p.is_absolute() || list.parent_path().empty() ? line
                                                                : (list.parent_path() / p).string());
  }
}

// The frames of the inputs and, when the grid must come from them, their union box.
struct Scan {
  analysis::FrameTable frames;
  std::optional<Box> box;
  std::optional<UnitCell> first_cell;  // the first frame's, where it records one
  std::string first_error;
};

// Whether a frame with an atom far from all the others fails, as in the main command (a periodic
// map wraps such atoms into the cell instead).
bool refuse_far_atoms(const BatchOptions& o) {
  return !o.grid.box && !o.allow_far_atoms && !is_periodic(o.compute.methods);
}

// The atoms of a structure frame, checked as the main command checks its input (atom_checks.hpp).
const AtomSet& checked_atoms(const io::Structure& s, const BatchOptions& o) {
  check_atoms(s.atoms, {s.source, -1, &s.lines}, refuse_far_atoms(o));
  return s.atoms;
}

Scan scan_inputs(const std::vector<std::string>& files, const BatchOptions& o) {
  const bool need_box = !o.grid.box.has_value();
  Scan scan;
  auto add_box = [&](const io::Structure& s) {
    const Box b = bounding_box(checked_atoms(s, o));
    scan.box = scan.box ? union_box(*scan.box, b) : b;
    if (!scan.first_cell) scan.first_cell = s.cell;
  };
  auto note_failure = [&](const std::string& file, const std::exception& e) {
    spdlog::warn("{}: {} (the frame will be recorded as failed)", file, e.what());
    if (scan.first_error.empty()) scan.first_error = e.what();
  };
  for (const auto& file : files) {
    FrameRecord record;
    record.source = file;
    record.model = o.read.model;
    try {
      record.input_sha256 = io::sha256_file(file);
    } catch (const std::exception& e) {
      note_failure(file, e);
      scan.frames.push_back(record);
      continue;
    }
    if (o.models_all) {
      try {
        for (const auto& m : io::read_each_model(file, o.read)) {  // a broken model fails alone
          record.model = m.model;
          scan.frames.push_back(record);
          try {
            if (!m.structure) throw Error(m.error);
            add_box(*m.structure);
          } catch (const std::exception& e) {
            note_failure(file, e);
          }
        }
      } catch (const std::exception& e) {
        note_failure(file, e);
        record.model = 0;  // models unknown
        scan.frames.push_back(record);
      }
      continue;
    }
    if (need_box) {
      try {
        add_box(io::read_structure(file, o.read));
      } catch (const std::exception& e) {
        note_failure(file, e);
      }
    }
    scan.frames.push_back(record);
  }
  return scan;
}

// Reads the atoms of one frame of structure files; with models_all, a file's models are read once
// and kept while its frames come by.
class FileFrames {
 public:
  explicit FileFrames(const BatchOptions& o) : options_(o) {}
  FrameAtoms read(const std::string& source, int model) {
    if (!options_.models_all) {
      io::ReadOptions read = options_.read;
      read.model = model;
      const io::Structure s = io::read_structure(source, read);
      return {checked_atoms(s, options_), s.cell};
    }
    if (model == 0)
      throw Error(source + ": could not be read when the batch was set up, so its models are "
                           "unknown; start a new batch");
    if (cached_source_ != source) {
      cached_.clear();
      cached_source_.clear();
      cached_ = io::read_each_model(source, options_.read);
      cached_source_ = source;
    }
    for (const auto& m : cached_) {
      if (m.model != model) continue;
      if (!m.structure) throw Error(m.error);
      return {checked_atoms(*m.structure, options_), m.structure->cell};
    }
    throw Error(fmt::format("{}: has no model {} any more", source, model));
  }

 private:
  const BatchOptions& options_;
  std::string cached_source_;
  std::vector<io::ModelRead> cached_;
};

// Keeps the shard's block of the frames; the grid was laid from all of them, as in a whole run.
analysis::ShardInfo keep_shard(const Shard& shard, analysis::FrameTable& frames) {
  const std::size_t n = frames.size();
  if (const std::size_t gaps = frames.count(analysis::FrameStatus::missing))
    throw Error(fmt::format("batch --shard: the trajectories lost {} cut-off frame{} (--allow-truncated), "
                            "and a part's frames are counted in the stream without them: run the batch "
                            "whole, or cut the damaged file to its complete frames", gaps, gaps > 1 ? "s" : ""));
  const std::size_t first = shard.index * n / shard.count, end = (shard.index + 1) * n / shard.count;
  if (first == end)
    throw Error(fmt::format("batch: shard {}/{} holds no frame (the batch has {}): use at most {} "
                            "shards", shard.index, shard.count, n, n));
  frames = frames.slice(first, end);
  return {shard.index, shard.count, first, n};
}

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (const auto& in : inputs) {
    if (!in.empty() && in[0] == '@')
      read_list_file(in.substr(1), out);
    else
      out.push_back(in);
  }
  return out;
}

io::MapMetadata batch_metadata(const BatchOptions& o) {
  io::MapMetadata meta = map_metadata(o.compute, o.compute.methods.front());
  std::string inputs;
  for (const auto& in : o.inputs) inputs += (inputs.empty() ? "" : " ") + in;
  meta.input_file = inputs;  // per-frame sources and checksums are in /frames
  meta.command_line = o.command_line;
  return meta;
}

BatchInputs check_batch(const BatchOptions& o) {
  if (o.inputs.empty()) throw Error("batch: no inputs given");
  if (o.output.empty()) throw Error("batch: no output file given");
  if (o.stats) validate(o.histogram);
  validate(o.compute);
  validate(o.grid, o.compute.methods);
  if (o.compute.auto_method)
    throw Error("batch: --method auto chooses for one map; choose direct or msm for the frames (a "
                "single-frame run with --method auto says which is cheaper)");
  if (o.compute.methods.size() != 1)
    throw Error("batch: one method a run (a batch file holds one map a frame), not --method " +
                method_list_name(o.compute.methods));
  io::require_writable_output(o.output);
  BatchInputs in;
  in.files = expand_inputs(o.inputs);
  if (in.files.empty()) throw Error("batch: the input lists name no files");
  in.trajectory = trajectory_inputs(in.files);
  if (in.trajectory && o.models_all) throw Error("batch: --models all is for multi-model files, not trajectories");
  if (!in.trajectory && o.frames) throw Error("batch: --frames selects trajectory frames; no input is a trajectory");
  if (o.grid_from_first && !in.trajectory)
    throw Error("batch: --grid-from-first is for trajectories; no input is a trajectory");
  if (o.grid_from_first && o.grid.box)
    throw Error("batch: --grid-from-first makes the grid around the first frame, but a box is given too");
  if (o.shard && o.ensemble)
    throw Error("batch: --ensemble needs every frame, and a --shard part holds some: compute the "
                "ensemble maps after merging the parts");
  if (o.average && (o.shard || o.ensemble))
    throw Error(std::string("batch: --average writes one mean map and no per-frame maps, so it cannot ") +
                (o.shard ? "take a --shard part" : "also write --ensemble maps (a batch file's)"));
  if (o.average_std && !o.average) throw Error("batch: --std goes with --average");
  std::vector<fs::path> read_paths(in.files.begin(), in.files.end());
  for (const auto& input : o.inputs)
    if (!input.empty() && input[0] == '@') read_paths.push_back(input.substr(1));  // list files
  io::require_not_an_input(o.output, read_paths);
  if (in.trajectory) {
    in.trajectory->index_cache = frame_index_cache_path(o.output);
    in.trajectory->allow_truncated = o.allow_truncated;
    in.trajectory->refuse_far_atoms = refuse_far_atoms(o);
    in.topology = read_topology_atoms(in.trajectory->topology, o.read);
  }
  return in;
}

BatchLayout lay_out_batch(const BatchOptions& o, const BatchInputs& in, ScanFacts& facts,
                          bool trajectory_checksums) {
  Scan scan;
  if (in.trajectory) {
    // A periodic grid comes from the first frame's cell: that frame is decoded for it.
    const BoxFrom box_from = o.grid.box                                           ? BoxFrom::none
                             : o.grid_from_first || is_periodic(o.compute.methods) ? BoxFrom::first_frame
                                                                                   : BoxFrom::all_frames;
    TrajectoryScan t = scan_trajectory(*in.trajectory, *in.topology, o.frames, box_from, trajectory_checksums);
    scan.frames = std::move(t.frames);
    scan.box = t.box;
    scan.first_cell = t.first_cell;
    facts.frames_decoded = t.frames_decoded;
  } else {
    scan = scan_inputs(in.files, o);
  }
  if (!o.grid.box && !scan.box)
    throw Error(fmt::format("batch: none of the {} inputs could be read, so there is no box for "
                            "the grid (first error: {})",
                            in.files.size(), scan.first_error));
  BatchLayout layout;
  layout.grid = o.grid.resolve(scan.box.value_or(Box{}));
  facts.grid_cell = o.compute.cell ? o.compute.cell : scan.first_cell;
  if (is_periodic(o.compute.methods) && !o.grid.box) {
    const std::optional<UnitCell>& cell = facts.grid_cell;
    if (!cell)
      throw Error("batch --method " + method_list_name(o.compute.methods) +
                  ": the first frame records no unit cell to lay the grid over: give --cell "
                  "A,B,C[,ALPHA,BETA,GAMMA], or the grid (--center and --size, or --origin and --dims)");
    layout.grid = o.grid.resolve(*cell);
  }
  if (!o.grid.box) layout.grid = engine::grid_for_methods(layout.grid, o.compute.methods);
  validate(layout.grid);
  layout.meta = batch_metadata(o);
  layout.frames = std::move(scan.frames);
  layout.histogram_bins = o.stats ? o.histogram.bins : 0;
  layout.ensemble = o.ensemble;
  if (o.shard) layout.shard = keep_shard(*o.shard, layout.frames);
  return layout;
}

FrameRead frame_reader(const BatchOptions& o, const BatchInputs& in, const analysis::FrameTable& table,
                       std::size_t first_frame) {
  if (in.trajectory) {
    auto frames = std::make_shared<TrajectoryFrames>(*in.trajectory, *in.topology, o.frames);
    // A row's frame in the trajectory stream: missing rows (cut-off frames) hold no stream frame.
    auto stream_frame = std::make_shared<std::vector<std::size_t>>(table.size());
    for (std::size_t i = 0, next = first_frame; i < table.size(); ++i) {
      (*stream_frame)[i] = next;
      next += table.status(i) != analysis::FrameStatus::missing;
    }
    return [frames, stream_frame, &table](std::size_t index) {
      return frames->read((*stream_frame)[index], table.source(index).path, table.frame_index(index));
    };
  }
  auto files = std::make_shared<FileFrames>(o);
  return [files, &table](std::size_t index) { return files->read(table.source(index).path, table.model(index)); };
}

}  // namespace dcsgrid::app
