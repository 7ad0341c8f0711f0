// run_batch: scan the inputs, create or reopen the batch file, then read, compute, take the
// statistics of and write the frames in a four-stage pipeline.
#include "dcsgrid/app/batch.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <mutex>
#include <thread>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "batch_distribution.hpp"
#include "batch_average.hpp"
#include "batch_pipeline.hpp"
#include "batch_steps.hpp"
#include "trajectory_frames.hpp"
#include "atom_checks.hpp"
#include "dcsgrid/analysis/ensemble.hpp"
#include "clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/atomic_file.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/io/hdf5_open.hpp"
#include "dcsgrid/io/map_io.hpp"
#include "dcsgrid/io/read.hpp"
#include "dcsgrid/io/sha256.hpp"
#include "dcsgrid/io/output_checks.hpp"
#include "dcsgrid/io/output_lock.hpp"

namespace dcsgrid::app {

using analysis::BatchLayout;
using analysis::EnsembleAccumulator;
using analysis::FrameStatus;
using analysis::MapStats;

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
  const std::string text = io::read_text_input(list);
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    const std::string line = trim(text.substr(begin, std::min(end, text.find('#', begin)) - begin));
    begin = end + 1;
    if (line.empty()) continue;
    const fs::path p(line);
    out.push_back(p.is_absolute() || list.parent_path().empty() ? line
                                                                : (list.parent_path() / p).string());
  }
}

// The options a resume must agree with, as JSON (stored in the file).
nlohmann::json options_fingerprint(const BatchOptions& o, const std::vector<std::string>& files) {
  const Physics& p = o.compute.physics;
  nlohmann::json j = {
      {"inputs", files},
      {"models_all", o.models_all},
      {"model", o.read.model},
      {"forcefield", o.read.forcefield},
      {"unknown_zero", o.read.unknown_zero},
      {"physics",
       {{"dielectric", p.dielectric}, {"distance_dependent", p.distance_dependent},
        {"ionic_strength", p.ionic_strength}, {"temperature", p.temperature},
        {"min_distance", p.min_distance}, {"unit", unit_name(p.unit)}}},
      {"method", engine::method_name(o.compute.methods.front())},
      {"stats", o.stats},
      {"histogram", {{"bins", o.histogram.bins}, {"lo", o.histogram.lo}, {"hi", o.histogram.hi}}},
      {"ensemble", o.ensemble},
  };
  if (o.grid_from_first) j["grid_from_first"] = true;  // absent when off: older files resume
  if (o.shard) j["shard"] = fmt::format("{}/{}", o.shard->index, o.shard->count);
  if (o.frames)
    j["frames"] = {{"start", o.frames->start}, {"stop", o.frames->stop ? *o.frames->stop : -1},
                   {"step", o.frames->step}};
  const engine::CutoffOptions& c = o.compute.cutoff;
  if (o.compute.methods.front() == engine::Method::cutoff)
    j["cutoff"] = {{"radius", c.radius},
                   {"form", engine::cutoff_form_name(c.form)},
                   {"switch_start", c.switch_start}};
  if (const auto& m = o.compute.msm; o.compute.methods.front() == engine::Method::msm)
    j["msm"] = {{"cutoff", m.cutoff}, {"spacing", m.spacing}, {"order", m.order},
                {"softening_order", engine::softening_order_used(m)}};
  if (is_periodic(o.compute.methods)) {
    const engine::PeriodicOptions& p = o.compute.periodic;
    j["periodic"] = {{"real_cutoff", p.real_cutoff}, {"tolerance", p.tolerance}, {"pme_order", p.pme_order},
                     {"mesh_spacing", p.mesh_spacing}, {"smooth_beta", p.smooth_beta}};
    if (const auto& c = o.compute.cell) j["periodic"]["cell"] = {c->lengths, c->angles};
  }
  if (const auto& box = o.grid.box)
    j["grid"] = {{"origin", box->origin}, {"spacing", box->spacing}, {"dims", box->dims}};
  else
    j["grid"] = {{"spacing", o.grid.spacing}, {"padding", o.grid.padding}};
  return j;
}

// Names the first key whose value differs, or "" when they agree. Values compare as JSON text
// (NaN, an unset histogram end, is stored as null).
std::string first_difference(const nlohmann::json& recorded, const nlohmann::json& now) {
  for (const auto& [key, value] : now.items())
    if (!recorded.contains(key) || recorded[key].dump() != value.dump()) return key;
  for (const auto& [key, value] : recorded.items())
    if (!now.contains(key)) return key;
  return {};
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

// Frames waiting between two stages: the option, or deep enough to group writes within 256 MiB
// of frames.
std::size_t queue_depth(const BatchOptions& o, const GridSpec& grid) {
  if (o.queue_depth > 0) return o.queue_depth;
  return std::clamp<std::size_t>((std::size_t(256) << 20) / grid_bytes(grid), 2, 16);
}

// Memory for the pipeline's frame buffers, and disk for every frame and the ensemble maps, checked
// before the batch file is made. An old file that is replaced is removed first: its bytes count
// as free.
void require_batch_room(const BatchOptions& o, const GridSpec& grid, std::size_t frames) {
  require_host_memory(grid, frame_buffers(queue_depth(o, grid), std::max<std::size_t>(1, o.frame_workers)));
  const std::uint64_t need = std::uint64_t(grid_bytes(grid)) * (frames + (o.ensemble ? 2 : 0));
  std::error_code ec;
  const std::uint64_t old = fs::is_regular_file(o.output, ec) ? fs::file_size(o.output, ec) : 0;
  io::require_free_space({{o.output, need > old ? need - old : 0}});
}

// The checksum of each input file as it is now ("" when it cannot be read).
using Checksums = std::map<std::string, std::string>;

// Checks an existing batch for resume: the options must match what made it, and the inputs of
// complete frames must be unchanged. Returns the inputs' checksums now, for the frames to come.
Checksums check_resume(const BatchFile& file, const nlohmann::json& fingerprint,
                       const std::vector<std::string>& files) {
  nlohmann::json recorded;
  try {
    recorded = nlohmann::json::parse(file.options_json());
  } catch (const nlohmann::json::exception&) {
    throw Error(file.path().string() + ": its batch_options attribute is not valid JSON");
  }
  const std::string key = first_difference(recorded, fingerprint);
  if (!key.empty())
    throw Error(fmt::format("cannot resume {}: '{}' differs from the run that made it (was {}, now "
                            "{}); use the same options, or --overwrite to start again",
                            file.path().string(), key,
                            recorded.contains(key) ? recorded[key].dump() : "absent",
                            fingerprint.contains(key) ? fingerprint[key].dump() : "absent"));
  Checksums sha;
  for (const auto& f : files) {
    try {
      sha[f] = io::sha256_file(f);
    } catch (const std::exception&) {
      sha[f] = "";
    }
  }
  const analysis::FrameTable& frames = file.frames();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const analysis::FrameSource& source = frames.source(i);
    if (frames.status(i) == FrameStatus::complete && sha[source.path] != source.sha256)
      throw Error(fmt::format("cannot resume {}: input {} changed since frame {} was computed "
                              "(SHA-256 differs); use --overwrite to start again",
                              file.path().string(), source.path, i));
  }
  return sha;
}

}  // namespace

Shard parse_shard(const std::string& text) {
  Shard shard;
  char slash = 0, rest = 0;
  long long index = -1, count = -1;
  if (std::sscanf(text.c_str(), "%lld %c %lld %c", &index, &slash, &count, &rest) != 3 ||
      slash != '/' || count < 1 || index < 0 || index >= count)
    throw Error("--shard '" + text + "': expected I/N with 0 <= I < N (e.g. 0/4 ... 3/4)");
  shard.index = std::size_t(index);
  shard.count = std::size_t(count);
  return shard;
}

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
  if (o.average && (o.shard || o.ensemble || o.resume))
    throw Error(std::string("batch: --average writes one mean map and no per-frame maps, so it cannot ") +
                (o.shard ? "take a --shard part" : o.ensemble ? "also write --ensemble maps (a batch file's)"
                                                              : "--resume (an interrupted --average run starts again)"));
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

namespace {

// Keeps the shard's block of the frames; the grid was laid from all of them, as in a whole run.
analysis::ShardInfo keep_shard(const Shard& shard, analysis::FrameTable& frames) {
  const std::size_t n = frames.size();
  if (const std::size_t gaps = frames.count(FrameStatus::missing))
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

BatchLayout lay_out_batch(const BatchOptions& o, const BatchInputs& in, std::size_t& frames_decoded) {
  Scan scan;
  if (in.trajectory) {
    // A periodic grid comes from the first frame's cell: that frame is decoded for it.
    const BoxFrom box_from = o.grid.box                                           ? BoxFrom::none
                             : o.grid_from_first || is_periodic(o.compute.methods) ? BoxFrom::first_frame
                                                                                   : BoxFrom::all_frames;
    TrajectoryScan t = scan_trajectory(*in.trajectory, *in.topology, o.frames, box_from);
    scan.frames = std::move(t.frames);
    scan.box = t.box;
    scan.first_cell = t.first_cell;
    frames_decoded = t.frames_decoded;
  } else {
    scan = scan_inputs(in.files, o);
  }
  if (!o.grid.box && !scan.box)
    throw Error(fmt::format("batch: none of the {} inputs could be read, so there is no box for "
                            "the grid (first error: {})",
                            in.files.size(), scan.first_error));
  BatchLayout layout;
  layout.grid = o.grid.resolve(scan.box.value_or(Box{}));
  if (is_periodic(o.compute.methods) && !o.grid.box) {
    const std::optional<UnitCell> cell = o.compute.cell ? o.compute.cell : scan.first_cell;
    if (!cell)
      throw Error("batch --method " + method_list_name(o.compute.methods) +
                  ": the first frame records no unit cell to lay the grid over: give --cell "
                  "A,B,C[,ALPHA,BETA,GAMMA], or the grid (--center and --size, or --origin and --dims)");
    layout.grid = grid_over_cell(*cell, o.grid.spacing);
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

namespace {

// A new batch file: the frames of the inputs and the grid (given, or around their union box).
void create_file(const BatchOptions& o, const BatchInputs& in, const nlohmann::json& fingerprint, bool exists,
                 std::size_t& frames_decoded) {
  BatchLayout layout = lay_out_batch(o, in, frames_decoded);
  layout.options_json = fingerprint.dump();
  require_batch_room(o, layout.grid, layout.frames.size());
  if (exists) fs::remove(o.output);
  BatchFile::create(o.output, layout);
}

// The batch file as the pipeline's sink.
class BatchFileSink final : public FrameSink {
 public:
  BatchFileSink(BatchFile& file, const BatchFile::StepHook& hook) : file_(file), hook_(hook) {}
  const GridSpec& grid() const override { return file_.grid(); }
  const analysis::FrameTable& frames() const override { return file_.frames(); }
  void write_frames(std::span<const BatchFile::FrameWrite> group) override { file_.write_frames(group, hook_); }
  void write_failure(std::size_t index, const FrameRecord& outcome) override { file_.write_failure(index, outcome); }

 private:
  BatchFile& file_;
  const BatchFile::StepHook& hook_;
};

}  // namespace

bool compute_frames(const BatchOptions& o, const BatchInputs& in, FrameSink& sink, std::size_t first_frame,
                    const FrameRuns& todo, BatchDistribution& distribution, BatchResult& result) {
  BatchOptions run = o;
  distribution.choose_hardware(run.compute);
  run.queue_depth = queue_depth(o, sink.grid());
  set_openmp_threads(run.compute.threads);
  std::vector<std::unique_ptr<engine::Backend>> backends =
      engine::make_frame_backends(run.compute.device, run.compute.gpus, run.compute.methods, o.frame_workers);
  require_host_memory(sink.grid(), frame_buffers(run.queue_depth, backends.size()));
  const engine::Method method = o.compute.methods.front();
  if (!backends.front()->supports(method))
    throw Error("the " + backends.front()->name() + " backend does not support --method " +
                engine::method_name(method));
  result.device = backends.front()->name();
  if (backends.size() > 1)
    spdlog::info("batch: frames dealt to {} workers ({})", backends.size(),
                 backends.front()->name() == "cpu" ? "sharing the CPU's cores" : "GPUs of --gpus in turn");
  FileFrames file_frames(o);
  std::optional<TrajectoryFrames> trajectory_frames;
  if (in.trajectory) trajectory_frames.emplace(*in.trajectory, *in.topology, o.frames);
  const analysis::FrameTable& table = sink.frames();
  // A row's frame in the trajectory stream: missing rows (cut-off frames) hold no stream frame.
  std::vector<std::size_t> stream_frame(table.size());
  for (std::size_t i = 0, next = first_frame; i < table.size(); ++i) {
    stream_frame[i] = next;
    next += table.status(i) != FrameStatus::missing;
  }
  const FrameRead read = [&](std::size_t index) {
    const std::string& source = table.source(index).path;
    return trajectory_frames ? trajectory_frames->read(stream_frame[index], source, table.frame_index(index))
                             : file_frames.read(source, table.model(index));
  };
  const std::unique_ptr<FrameDispenser> frames = distribution.dispense(todo);
  const bool stopped = run_pipeline(run, read, sink, backends, *frames, todo.size(), result);
  if (stopped) frames->stop_all();
  return stopped;
}

namespace {

// Computes the frames in todo (those `frames` hands this process) into the batch file.
void compute_file_frames(const BatchOptions& o, const BatchInputs& in, BatchFile& file, const FrameRuns& todo,
                         BatchDistribution& distribution, BatchResult& result) {
  BatchFileSink sink(file, o.step_hook);
  const std::size_t first_frame = file.shard() ? file.shard()->first_frame : 0;  // in the stream
  if (compute_frames(o, in, sink, first_frame, todo, distribution, result)) {
    const FrameRecord& f = result.failures.back();
    throw Error(fmt::format("batch stopped (fail-fast): {} model {} failed: {}; {} frames are "
                            "complete in {} (--resume continues)",
                            f.source, f.model, f.message, result.skipped + result.computed,
                            o.output.string()));
  }
}

// The mean and standard deviation maps over the complete frames.
void write_ensemble(BatchFile& file, BatchResult& result) {
  const auto t0 = clock_type::now();
  EnsembleAccumulator acc(file.grid().point_count());
  std::vector<float> frame(file.grid().point_count());
  for (std::size_t i = 0; i < file.frames().size(); ++i) {
    if (file.frames().status(i) != FrameStatus::complete) continue;
    file.read_frame(i, frame.data());
    acc.add(frame.data());
  }
  if (acc.count() == 0) {
    spdlog::warn("batch: no complete frame, so no ensemble maps");
    return;
  }
  file.write_ensemble(acc.mean().data(), acc.stddev().data(), acc.count());
  result.ensemble_seconds = seconds_since(t0);
}

}  // namespace

namespace {

// The batch file, created by the root process or checked by every process for a resume (whose
// checksums of the inputs now are returned; empty for a new file).
Checksums set_up_file(const BatchOptions& o, const BatchInputs& in, const nlohmann::json& fingerprint,
                      BatchDistribution& d, std::size_t& frames_decoded) {
  const bool exists = fs::exists(o.output);
  if (exists && !o.resume && !o.overwrite)
    throw Error(o.output.string() + " exists: use --resume to continue it or --overwrite");
  d.barrier();  // every process has looked before the root replaces the file
  const bool resume = exists && o.resume;
  Checksums sha;
  if (d.is_root()) {
    if (resume) {
      io::hdf5::clear_write_mark(o.output);  // a writer killed with the file open: reopenable
      sha = check_resume(BatchFile(o.output), fingerprint, in.files);
    } else {
      create_file(o, in, fingerprint, exists, frames_decoded);
    }
  }
  d.barrier();  // the root's file is in place
  if (!d.is_root() && resume) sha = check_resume(BatchFile(o.output), fingerprint, in.files);
  d.barrier();  // every reading handle is closed: HDF5's lock refuses the writable open beside one
  return sha;
}

// The frame-index cache serves the batch file beside it: a run that fails before that file exists
// (a grid too large, a shard with no frame) leaves no cache of its own behind.
void remove_cache_without_output(const BatchOptions& o, const BatchInputs& in) {
  if (!in.trajectory || fs::exists(o.output)) return;
  std::error_code ec;
  fs::remove(in.trajectory->index_cache, ec);
}

}  // namespace

BatchResult run_batch(const BatchOptions& o) {
  if (BatchDistribution* ranks = mpi_ranks()) return run_batch(o, *ranks);
  return run_batch(o, single_process());
}

BatchResult run_batch(const BatchOptions& o, BatchDistribution& d) {
  const BatchInputs in = check_batch(o);
  if (o.average) return run_average(o, in, d);
  // Held until the batch ends: a second writer of the path is refused, whatever its options.
  std::optional<io::OutputLock> one_writer;
  if (d.is_root()) one_writer.emplace(o.output);
  const nlohmann::json fingerprint = options_fingerprint(o, in.files);
  BatchResult result;
  result.output = o.output;
  const auto t_scan = clock_type::now();
  Checksums sha;
  try {
    sha = set_up_file(o, in, fingerprint, d, result.scan_frames_decoded);
  } catch (...) {
    if (d.is_root()) remove_cache_without_output(o, in);
    throw;
  }
  result.scan_seconds = seconds_since(t_scan);

  // The file's table is the run's: one copy of it, updated by the file as frames are written.
  std::optional<BatchFile> file(std::in_place, o.output, true, d.every_process_writes());
  const analysis::FrameTable& frames = file->frames();
  for (std::uint32_t k = 0; k < frames.sources().size() && !sha.empty(); ++k) {
    const auto now = sha.find(frames.sources()[k].path);
    file->set_source_sha256(k, now == sha.end() ? "" : now->second);
  }
  result.grid = file->grid();
  result.frames = frames.size();
  FrameRuns todo;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (frames.status(i) == FrameStatus::complete)
      ++result.skipped;
    else if (frames.status(i) == FrameStatus::missing)
      ++result.missing;
    else
      todo.add(i);
  }
  if (d.is_root())
    spdlog::info("batch: {} frames on grid {}; {} to compute", frames.size(),
                 file->grid().describe(), todo.size());
  if (!todo.empty()) compute_file_frames(o, in, *file, todo, d, result);
  if (d.every_process_writes()) {  // the root reports from the file every process wrote
    file.reset();
    d.sum_on_root(result);
    if (!d.is_root()) return result;
    file.emplace(o.output, true);
    const analysis::FrameTable& written = file->frames();
    result.failures.clear();
    for (std::size_t i = 0; i < written.size(); ++i)
      if (written.status(i) == FrameStatus::failed && result.failures.size() < kMaxListedFailures)
        result.failures.push_back(written[i]);
    result.failed = written.count(FrameStatus::failed);
  }
  if (result.pipeline_seconds > 0) result.frames_per_second = result.computed / result.pipeline_seconds;
  result.pending = file->frames().count(FrameStatus::pending);
  if (o.ensemble) write_ensemble(*file, result);
  return result;
}

nlohmann::json BatchResult::to_json() const {
  nlohmann::json failed_frames = nlohmann::json::array();
  for (const auto& f : failures)
    failed_frames.push_back({{"source", f.source}, {"model", f.model}, {"message", f.message}});
  auto share = [&](double busy) { return pipeline_seconds > 0 ? busy / pipeline_seconds : 0.0; };
  return {
      {"output", output.string()},
      {"grid", {{"dims", grid.dims}, {"origin", grid.origin}, {"spacing", grid.spacing}}},
      {"device", device},
      {"frames", frames},
      {"computed", computed},
      {"skipped", skipped},
      {"failed", failed},
      {"pending", pending},
      {"missing", missing},
      {"failures", failed_frames},
      {"scan_frames_decoded", scan_frames_decoded},
      {"seconds", {{"scan", scan_seconds}, {"pipeline", pipeline_seconds},
                   {"ensemble", ensemble_seconds}}},
      {"frames_per_second", frames_per_second},
      {"stage_busy_share", {{"read", share(read_busy)}, {"compute", share(compute_busy)},
                            {"stats", share(stats_busy)}, {"write", share(write_busy)}}},
      {"engine_seconds", {{"setup", engine_setup}, {"kernels", engine_kernels}}},
  };
}

}  // namespace dcsgrid::app
