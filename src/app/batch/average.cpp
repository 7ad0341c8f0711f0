// batch --average: the frames go through the batch pipeline into running float64 sums instead of a
// batch file; the mean (and standard deviation) map is written at the end.
#include "app/batch/average.hpp"

#include <cmath>
#include <mutex>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "app/batch/pipeline.hpp"
#include "app/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/maps/io.hpp"

namespace dcsgrid::app {

using analysis::FrameRecord;
using analysis::FrameStatus;

namespace {

// Cells agree when every lattice vector's components do within this fraction of the longest.
constexpr double kSameCell = 1e-6;

bool same_cell(const UnitCell& a, const UnitCell& b) {
  double longest = 0, worst = 0;
  for (int i = 0; i < 3; ++i)
    for (int d = 0; d < 3; ++d) {
      longest = std::max(longest, std::abs(a.vectors[i][d]));
      worst = std::max(worst, std::abs(a.vectors[i][d] - b.vectors[i][d]));
    }
  return worst <= kSameCell * longest;
}

std::string describe_cell(const UnitCell& c) {
  return fmt::format("{:.4f},{:.4f},{:.4f},{:.3f},{:.3f},{:.3f}", c.lengths[0], c.lengths[1], c.lengths[2],
                     c.angles[0], c.angles[1], c.angles[2]);
}

// Sums over the frames, per point, of (v − s) and (v − s)² in float64, s being the first frame
// written (a shift that keeps the variance's subtraction well conditioned).
class AverageSink final : public FrameSink {
 public:
  explicit AverageSink(analysis::BatchLayout layout)
      : layout_(std::move(layout)), shift_(layout_.grid.point_count()), sum_(shift_.size()), squares_(shift_.size()) {}

  const GridSpec& grid() const override { return layout_.grid; }
  const analysis::FrameTable& frames() const override { return layout_.frames; }

  void write_frames(std::span<const analysis::BatchFile::FrameWrite> group) override {
    for (const auto& f : group) {
      if (count_ == 0) std::copy(f.data, f.data + shift_.size(), shift_.begin());
      add(f.data);
      ++count_;
      layout_.frames.set_outcome(f.index, FrameStatus::complete, f.record.atom_count, f.record.total_charge);
    }
  }
  void write_failure(std::size_t index, const FrameRecord& outcome) override {
    layout_.frames.set_outcome(index, FrameStatus::failed, outcome.atom_count, outcome.total_charge,
                               outcome.message);
  }
  // Every periodic frame's cell must be the first one's: the maps of one grid are averaged point by
  // point, which aligns the same place of the box only when the box does not change.
  void check_cell(std::size_t /*index*/, const UnitCell& cell) override {
    std::lock_guard lock(cell_mutex_);
    if (!cell_) {
      cell_ = cell;
      return;
    }
    if (!same_cell(*cell_, cell))
      throw Error(fmt::format("its cell ({}) differs from the first frame's ({}): --average needs one cell "
                              "(boxes that change, as under NPT, are not averaged on a common lattice yet)",
                              describe_cell(cell), describe_cell(*cell_)));
  }

  std::size_t count() const { return count_; }
  const std::optional<UnitCell>& cell() const { return cell_; }
  void mean_and_std(std::vector<float>& mean, std::vector<float>& stddev) const {
    const std::int64_t n = std::int64_t(shift_.size());
    const double frames = double(count_);
    mean.resize(shift_.size());
    stddev.resize(shift_.size());
#pragma omp parallel for num_threads(team_size()) schedule(static)
    for (std::int64_t p = 0; p < n; ++p) {
      const double d = sum_[p] / frames;
      mean[p] = float(shift_[p] + d);
      stddev[p] = float(std::sqrt(std::max(0.0, squares_[p] / frames - d * d)));
    }
  }

 private:
  void add(const float* v) {
    const std::int64_t n = std::int64_t(shift_.size());
#pragma omp parallel for num_threads(team_size()) schedule(static)
    for (std::int64_t p = 0; p < n; ++p) {
      const double d = double(v[p]) - double(shift_[p]);
      sum_[p] += d;
      squares_[p] += d * d;
    }
  }

  analysis::BatchLayout layout_;
  std::vector<float> shift_;
  std::vector<double> sum_, squares_;
  std::size_t count_ = 0;
  std::mutex cell_mutex_;
  std::optional<UnitCell> cell_;
};

void write_average(const BatchOptions& o, const AverageSink& sink) {
  std::vector<float> mean, stddev;
  sink.mean_and_std(mean, stddev);
  io::MapMetadata meta = batch_metadata(o);
  meta.parameters["frames_averaged"] = std::to_string(sink.count());
  if (sink.cell()) meta.parameters["cell"] = describe_cell(*sink.cell());
  if (!o.average_std) {
    if (const std::string warning = io::write_map(o.output, sink.grid(), mean.data(), meta); !warning.empty())
      spdlog::warn("{}", warning);
    return;
  }
  io::Hdf5MapWriter writer(o.output, sink.grid(), meta);
  const std::int64_t planes = sink.grid().nz();
  writer.write_planes(0, planes, mean.data());
  io::MapMetadata std_meta = meta;
  std_meta.parameters["statistic"] = "standard deviation over the frames (population)";
  writer.write_planes(writer.add_stream("potential_std", std_meta), 0, planes, stddev.data());
  writer.finish();
}

}  // namespace

BatchResult run_average(const BatchOptions& o, const BatchInputs& in, BatchDistribution& d) {
  if (!d.is_root() || d.every_process_writes())
    throw Error("batch --average runs in one process (not under mpirun): its sums are not shared between ranks yet");
  if (o.average_std && !io::map_format_from_path(o.output)->several_maps)
    throw Error("batch --std: the standard deviation is written as /potential_std beside the mean, which "
                "only HDF5 holds; give an output ending in .h5");
  const auto t_scan = clock_type::now();
  BatchResult result;
  result.output = o.output;
  AverageSink sink(lay_out_batch(o, in, result.scan_frames_decoded));
  result.scan_seconds = seconds_since(t_scan);
  result.grid = sink.grid();
  result.frames = sink.frames().size();
  require_host_memory(sink.grid(), 7);  // the sums (2 doubles a point), the shift, the mean and std
  FrameRuns todo;
  for (std::size_t i = 0; i < sink.frames().size(); ++i)
    if (sink.frames().status(i) != FrameStatus::missing) todo.add(i);
  spdlog::info("batch --average: {} frames on grid {}", todo.size(), sink.grid().describe());
  BatchOptions run = o;
  run.stats = false;  // no per-frame statistics: nothing keeps them
  if (compute_frames(run, in, sink, 0, todo, d, result)) {
    const FrameRecord& f = result.failures.back();
    throw Error(fmt::format("batch --average stopped (fail-fast): {} model {} failed: {}; nothing written",
                            f.source, f.model, f.message));
  }
  if (sink.count() == 0) throw Error("batch --average: no frame could be computed, so there is no mean to write");
  if (result.pipeline_seconds > 0) result.frames_per_second = result.computed / result.pipeline_seconds;
  const auto t_write = clock_type::now();
  write_average(o, sink);
  result.ensemble_seconds = seconds_since(t_write);
  return result;
}

}  // namespace dcsgrid::app
