// run_batch: check the inputs, create or reopen the batch file, then read, compute, take the
// statistics of and write the frames in the pipeline (pipeline.hpp), and the ensemble maps last.
#include "dcsgrid/app/batch.hpp"

#include <cstdio>
#include <optional>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "app/batch/average.hpp"
#include "app/batch/distribution.hpp"
#include "app/batch/inputs.hpp"
#include "app/batch/pipeline.hpp"
#include "app/batch/resume.hpp"
#include "app/clock.hpp"
#include "dcsgrid/analysis/ensemble.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/hdf5/open.hpp"
#include "dcsgrid/io/files/output_checks.hpp"
#include "dcsgrid/io/files/output_lock.hpp"

namespace dcsgrid::app {

using analysis::BatchFile;
using analysis::BatchLayout;
using analysis::EnsembleAccumulator;
using analysis::FrameRecord;
using analysis::FrameStatus;

namespace fs = std::filesystem;

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

namespace {

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

// A new batch file: the frames of the inputs and the grid (given, or around their union box).
void create_file(const BatchOptions& o, const BatchInputs& in, const nlohmann::json& fingerprint, bool exists,
                 std::size_t& frames_decoded) {
  ScanFacts facts;
  BatchLayout layout = lay_out_batch(o, in, facts);
  frames_decoded = facts.frames_decoded;
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
      {"maps_on_device", maps_on_device},
      {"maps_through_device", maps_through_device},
  };
}

}  // namespace dcsgrid::app
