// batch --average: the frames go through the batch pipeline into running float64 sums instead of a
// batch file; the mean (and standard deviation) map is written at the end.
#include "app/batch/average.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "app/batch/average_sums.hpp"
#include "app/batch/pipeline.hpp"
#include "app/batch/resume.hpp"
#include "app/clock.hpp"
#include "dcsgrid/analysis/device_sums.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/maps/io.hpp"

namespace dcsgrid::app {

namespace fs = std::filesystem;
using analysis::FrameRecord;
using analysis::FrameStatus;

namespace {

// Entries of the map between two cells' lattices below this fraction of its largest are rounding
// (cells read from single-precision trajectories carry ~1e-7), and set to 0.
constexpr double kRounding = 1e-5;
// A frame whose lattice is sheared from the reference's by more than this (an off-diagonal entry of
// the map) is not the same system's box fluctuating under pressure coupling: it is refused.
constexpr double kMostShear = 0.1;

std::string describe_cell(const UnitCell& c) {
  return fmt::format("{:.4f},{:.4f},{:.4f},{:.3f},{:.3f},{:.3f}", c.lengths[0], c.lengths[1], c.lengths[2],
                     c.angles[0], c.angles[1], c.angles[2]);
}

// M = V_ref⁻¹ · V (lattice vectors as rows, so a point p of fractional coordinates f is f · V): a
// point p of the reference cell sits at p · M in `cell`. Both lattices are lower triangular, so M is
// too. Throws Error when M shears beyond kMostShear.
Mat3 lattice_map(const UnitCell& reference, const UnitCell& cell) {
  Mat3 m{};
  for (int d = 0; d < 3; ++d)
    for (int e = 0; e < 3; ++e)
      for (int i = 0; i < 3; ++i) m[d][e] += reference.reciprocal[i][d] * cell.vectors[i][e];  // V_ref⁻¹ = R_refᵀ
  const double largest = std::max({std::abs(m[0][0]), std::abs(m[1][1]), std::abs(m[2][2])});
  for (int d = 0; d < 3; ++d)
    for (int e = 0; e < 3; ++e) {
      if (d == e) continue;
      if (std::abs(m[d][e]) <= kRounding * largest) m[d][e] = 0;
      if (std::abs(m[d][e]) > kMostShear * largest)
        throw Error(fmt::format(
            "its cell ({}) differs from the first frame's ({}) in shape by more than a box's fluctuation "
            "(a shear of {:.3f}): --average takes each frame at the same fractional coordinates of its own "
            "cell, for the frames of one simulation",
            describe_cell(cell), describe_cell(reference), m[d][e] / largest));
    }
  // The reference's own cell gives V⁻¹·V, 1 to rounding: exactly 1, so that its grid is the laid-out one.
  for (int d = 0; d < 3; ++d)
    if (std::abs(m[d][d] - 1) <= 1e-12) m[d][d] = 1;
  return m;
}

bool is_identity(const Mat3& m) { return m == Mat3{Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}}; }

// The grid's points moved to p · M: the same fractional coordinates in the frame's cell. M lower
// triangular keeps the grid's rows along x (a skewed grid when M shears).
GridSpec mapped_grid(GridSpec grid, const Mat3& m) {
  const auto times_m = [&](const Vec3& v) {
    return Vec3{v[0] * m[0][0] + v[1] * m[1][0] + v[2] * m[2][0], v[1] * m[1][1] + v[2] * m[2][1], v[2] * m[2][2]};
  };
  const Mat3 steps = grid.steps();
  const Vec3 a = times_m(steps[0]), b = times_m(steps[1]), c = times_m(steps[2]);
  grid.origin = times_m(grid.origin);
  grid.spacing = {a[0], b[1], c[2]};
  grid.skew = {b[0], c[0], c[1]};
  return grid;
}

// Sums over the frames, per point, of (v − s) and (v − s)² in float64, s being the first frame
// written (a shift that keeps the variance's subtraction well conditioned). Frames the pipeline
// leaves on GPUs are added there, into sums on the GPU of the first such frame (DeviceMapSums,
// which copies in the maps of other GPUs), in the same order: the sums are the host loop's term by
// term, the same whatever the GPUs, and a resumed run's continue the saved ones exactly. A save or
// the mean downloads them. Periodic frames whose
// cells differ (NPT) are each computed at the grid's fractional coordinates in their own cell, as
// PMEpot averages, and the mean is placed in the mean cell. The sums go to their file (`save`)
// every kSaveSeconds and when the run stops early, so that --resume continues from them; a save
// that takes long (the sums are 16 bytes a point) pushes the next one back, so that saving holds
// the writer at most a tenth of the time.
class AverageSink final : public FrameSink {
 public:
  static constexpr double kSaveSeconds = 60;
  // Writes the sums; returns the seconds the writing took (not waiting for the inputs' checksums).
  using Save = std::function<double(const AverageSums&)>;

  AverageSink(analysis::BatchLayout layout, std::optional<UnitCell> grid_cell)
      : layout_(std::move(layout)), sums_(layout_.grid.point_count(), layout_.frames.size()),
        reference_(std::move(grid_cell)) {}

  const GridSpec& grid() const override { return layout_.grid; }
  const analysis::FrameTable& frames() const override { return layout_.frames; }
  // The sums (and the first frame, their shift) in frame order: the mean is the same bit for bit
  // whatever the number of workers.
  bool wants_frame_order() const override { return true; }

  void write_frames(std::span<const analysis::BatchFile::FrameWrite> group) override {
    for (const auto& f : group) {
      if (f.on_device) {
        add_on_device(*f.on_device);
      } else {
        if (sums_.count == 0) std::copy(f.data, f.data + sums_.shift.size(), sums_.shift.begin());
        add(f.data);
      }
      ++sums_.count;
      sums_.added[f.index] = 1;
      take_scale(f.index, true);
      layout_.frames.set_outcome(f.index, FrameStatus::complete, f.record.atom_count, f.record.total_charge);
    }
    synchronize_devices();  // the pipeline reuses the maps once this returns
    if (save_ && seconds_since(last_save_) >= std::max(kSaveSeconds, 10 * last_save_seconds_)) save();
  }
  std::size_t device_bytes() const override {
#ifdef DCSGRID_HAVE_CUDA
    return sums_.shift.size() * (2 * sizeof(float) + 2 * sizeof(double));  // shift, sums, a staged map
#else
    return 0;
#endif
  }
  void write_failure(std::size_t index, const FrameRecord& outcome) override {
    layout_.frames.set_outcome(index, FrameStatus::failed, outcome.atom_count, outcome.total_charge,
                               outcome.message);
    take_scale(index, false);
  }
  // The grid's points at their fractional coordinates of the reference cell (the one the grid was
  // laid over), moved into this frame's cell.
  GridSpec grid_for_cell(std::size_t index, const UnitCell& cell) override {
    std::lock_guard lock(cell_mutex_);
    if (!reference_) reference_ = cell;  // no frame before this one had a cell
    const Mat3 m = lattice_map(*reference_, cell);
    pending_maps_[index] = m;
    return mapped_grid(layout_.grid, m);
  }

  // Continues from the sums a stopped run saved (read into this sink's own): their frames are not
  // computed again, and their scalings keep the cell they were measured from.
  void resume_from(const fs::path& path, const nlohmann::json& fingerprint, const Checksums& inputs) {
    load_average_sums(path, sums_, layout_.grid, layout_.frames, fingerprint, inputs);
    if (!sums_.reference) return;
    if (reference_ && !is_identity(lattice_map(*sums_.reference, *reference_)))
      throw Error(fmt::format("cannot resume {}: its frames were scaled from the cell {}, and this run's "
                              "reference cell is {}; use --overwrite to start again",
                              path.string(), describe_cell(*sums_.reference), describe_cell(*reference_)));
    reference_ = sums_.reference;
  }
  void save_with(Save save) {
    save_ = std::move(save);
    last_save_ = clock_type::now();
  }
  void save() {
    gather();
    {
      std::lock_guard lock(cell_mutex_);
      sums_.reference = reference_;
    }
    last_save_seconds_ = save_(sums_);
    last_save_ = clock_type::now();
  }
  bool added(std::size_t index) const { return sums_.added[index] == 1; }
  std::size_t count() const { return sums_.count; }
  // The mean of the averaged frames' cells (V_ref · the mean map: the mean of their lattice
  // vectors), with the grid at the same fractional coordinates in it; the grid as laid out when no
  // frame was periodic.
  std::optional<UnitCell> mean_cell() const {
    if (!sums_.scaled_frames || !reference_) return std::nullopt;
    const Mat3 m = mean_map();
    Mat3 v{};
    for (int r = 0; r < 3; ++r)
      for (int d = 0; d < 3; ++d)
        for (int i = 0; i < 3; ++i) v[r][d] += reference_->vectors[r][i] * m[i][d];
    return cell_from_vectors(v);
  }
  GridSpec output_grid() const {
    return sums_.scaled_frames ? mapped_grid(layout_.grid, mean_map()) : layout_.grid;
  }
  bool cells_varied() const { return sums_.cells_varied; }
  void mean_and_std(std::vector<float>& mean, std::vector<float>& stddev) {
    gather();
    const std::int64_t n = std::int64_t(sums_.shift.size());
    const double frames = double(sums_.count);
    mean.resize(sums_.shift.size());
    stddev.resize(sums_.shift.size());
#pragma omp parallel for num_threads(team_size()) schedule(static)
    for (std::int64_t p = 0; p < n; ++p) {
      const double d = sums_.sum[p] / frames;
      mean[p] = float(sums_.shift[p] + d);
      stddev[p] = float(std::sqrt(std::max(0.0, sums_.squares[p] / frames - d * d)));
    }
  }

 private:
#ifdef DCSGRID_HAVE_CUDA
  // The first map on a GPU makes the sums there, continuing the host's (a resumed run's).
  void add_on_device(const engine::DeviceMap& map) {
    if (!device_sums_) {
      device_sums_.emplace(map.device(), sums_.shift.size());
      if (sums_.count > 0) device_sums_->load(sums_.shift, sums_.sum, sums_.squares, sums_.count);
    }
    device_sums_->add(map);
  }
  void synchronize_devices() {
    if (device_sums_) device_sums_->synchronize();
  }
  // The GPU's sums into the host's.
  void gather() {
    if (device_sums_) device_sums_->download(sums_.shift, sums_.sum, sums_.squares);
  }
#else
  void add_on_device(const engine::DeviceMap&) { throw Error("batch --average: a map on a GPU in a build without CUDA"); }
  void synchronize_devices() {}
  void gather() {}
#endif

  void add(const float* v) {
    const std::int64_t n = std::int64_t(sums_.shift.size());
#pragma omp parallel for num_threads(team_size()) schedule(static)
    for (std::int64_t p = 0; p < n; ++p) {
      const double d = double(v[p]) - double(sums_.shift[p]);
      sums_.sum[p] += d;
      sums_.squares[p] += d * d;
    }
  }

  // A frame's lattice map counts towards the mean cell once the frame is averaged (written), and
  // is dropped if it failed.
  void take_scale(std::size_t index, bool averaged) {
    std::lock_guard lock(cell_mutex_);
    const auto it = pending_maps_.find(index);
    if (it == pending_maps_.end()) return;
    if (averaged) {
      const Mat3& m = it->second;
      const Vec3 shear{m[1][0], m[2][0], m[2][1]};
      for (int d = 0; d < 3; ++d) {
        sums_.scale_sum[d] += m[d][d];
        sums_.shear_sum[d] += shear[d];
      }
      sums_.cells_varied = sums_.cells_varied || !is_identity(m);
      ++sums_.scaled_frames;
    }
    pending_maps_.erase(it);
  }
  Mat3 mean_map() const {
    const double n = double(sums_.scaled_frames);
    const Vec3& s = sums_.scale_sum;
    const Vec3& h = sums_.shear_sum;
    return {Vec3{s[0] / n, 0, 0}, Vec3{h[0] / n, s[1] / n, 0}, Vec3{h[1] / n, h[2] / n, s[2] / n}};
  }

  analysis::BatchLayout layout_;
  AverageSums sums_;
#ifdef DCSGRID_HAVE_CUDA
  std::optional<analysis::DeviceMapSums> device_sums_;  // once a frame's map came on a GPU
#endif
  std::mutex cell_mutex_;
  std::optional<UnitCell> reference_;
  std::map<std::size_t, Mat3> pending_maps_;  // frames asked for, not yet written or failed
  Save save_;
  clock_type::time_point last_save_;
  double last_save_seconds_ = 0;
};

void write_average(const BatchOptions& o, AverageSink& sink) {
  std::vector<float> mean, stddev;
  sink.mean_and_std(mean, stddev);
  io::MapMetadata meta = batch_metadata(o);
  meta.parameters["frames_averaged"] = std::to_string(sink.count());
  if (const auto cell = sink.mean_cell()) meta.parameters["cell"] = describe_cell(*cell);
  if (sink.cells_varied())
    meta.parameters["cell_averaging"] =
        "the frames' cells differ: each frame was taken at the grid's fractional coordinates in its own "
        "cell, and the mean placed in the mean cell";
  const GridSpec grid = sink.output_grid();
  if (!o.average_std) {
    if (const std::string warning = io::write_map(o.output, grid, mean.data(), meta); !warning.empty())
      spdlog::warn("{}", warning);
    return;
  }
  io::Hdf5MapWriter writer(o.output, grid, meta);
  const std::int64_t planes = grid.nz();
  writer.write_planes(0, planes, mean.data());
  io::MapMetadata std_meta = meta;
  std_meta.parameters["statistic"] = "standard deviation over the frames (population)";
  writer.write_planes(writer.add_stream("potential_std", std_meta), 0, planes, stddev.data());
  writer.finish();
}

// The cell of the first frame that can be read, where the scan read none (a grid given explicitly):
// the reference a periodic average scales from, the same whatever order the workers take frames in.
std::optional<UnitCell> first_frames_cell(const BatchOptions& o, const BatchInputs& in,
                                          const analysis::FrameTable& frames) {
  const FrameRead read = frame_reader(o, in, frames, 0);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (frames.status(i) == FrameStatus::missing) continue;
    try {
      return read(i).cell;
    } catch (const std::exception&) {
      // an unreadable frame fails in its turn; the next one gives the reference
    }
  }
  return std::nullopt;
}

// The inputs' SHA-256, taken on a thread of their own while the frames are computed: only a save of
// the sums needs them (a resume waits for them at once), and a trajectory of gigabytes takes
// seconds to read. A run that ends without saving stops the thread.
class BackgroundChecksums {
 public:
  explicit BackgroundChecksums(std::vector<std::string> files)
      : result_(done_.get_future().share()),
        thread_([this, files = std::move(files)] { done_.set_value(input_checksums(files, &stop_)); }) {}
  ~BackgroundChecksums() {
    stop_ = true;
    thread_.join();
  }
  BackgroundChecksums(const BackgroundChecksums&) = delete;
  BackgroundChecksums& operator=(const BackgroundChecksums&) = delete;
  const Checksums& get() const { return result_.get(); }

 private:
  std::atomic<bool> stop_{false};
  std::promise<Checksums> done_;
  std::shared_future<Checksums> result_;
  std::thread thread_;  // last: it starts once the members above exist
};

// A run whose sums file exists continues from it with --resume, replaces it with --overwrite, and is
// refused otherwise (it would lose a stopped run's frames). The sink then saves to that file.
void resume_or_start(const BatchOptions& o, const BatchInputs& in, AverageSink& sink,
                     const BackgroundChecksums& inputs) {
  const fs::path path = average_sums_path(o.output);
  const nlohmann::json fingerprint = options_fingerprint(o, in.files);
  if (fs::exists(path)) {
    if (o.resume) {
      sink.resume_from(path, fingerprint, inputs.get());
    } else if (!o.overwrite) {
      throw Error(fmt::format("{} holds the sums of a stopped --average run to {}: use --resume to continue "
                              "it or --overwrite to start again",
                              path.string(), o.output.string()));
    }
  }
  sink.save_with([path, grid = sink.grid(), fingerprint, &inputs](const AverageSums& sums) {
    const Checksums& sha = inputs.get();  // the first save may wait for them: not the save's own time
    const auto start = clock_type::now();
    save_average_sums(path, sums, grid, fingerprint, sha);
    return seconds_since(start);
  });
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
  ScanFacts facts;
  const BackgroundChecksums inputs(in.files);
  analysis::BatchLayout layout = lay_out_batch(o, in, facts, false);
  result.scan_frames_decoded = facts.frames_decoded;
  if (is_periodic(o.compute.methods) && !facts.grid_cell) facts.grid_cell = first_frames_cell(o, in, layout.frames);
  AverageSink sink(std::move(layout), facts.grid_cell);
  result.scan_seconds = seconds_since(t_scan);
  result.grid = sink.grid();
  result.frames = sink.frames().size();
  require_host_memory(sink.grid(), 7);  // the sums (2 doubles a point), the shift, the mean and std
  resume_or_start(o, in, sink, inputs);
  FrameRuns todo;
  for (std::size_t i = 0; i < sink.frames().size(); ++i)
    if (sink.frames().status(i) != FrameStatus::missing && !sink.added(i)) todo.add(i);
  spdlog::info("batch --average: {} frames on grid {}{}", todo.size(), sink.grid().describe(),
               sink.count() ? fmt::format(" ({} summed before, resumed)", sink.count()) : "");
  BatchOptions run = o;
  run.stats = false;  // no per-frame statistics: nothing keeps them
  const fs::path sums_file = average_sums_path(o.output);
  // Said after the error that stopped the run; a failure to save must not hide that error.
  const auto keep_sums = [&] {
    if (sink.count() == 0) return std::string("nothing written");
    try {
      sink.save();
    } catch (const std::exception& e) {
      return fmt::format("the sums of {} frames could not be kept ({})", sink.count(), e.what());
    }
    return fmt::format("the sums of {} frames are kept in {} (--resume continues)", sink.count(),
                       sums_file.string());
  };
  bool stopped = false;
  try {
    stopped = compute_frames(run, in, sink, 0, todo, d, result);
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}; {}", e.what(), keep_sums()));
  }
  if (stopped) {
    const FrameRecord& f = result.failures.back();
    throw Error(fmt::format("batch --average stopped (fail-fast): {} model {} failed: {}; {}", f.source, f.model,
                            f.message, keep_sums()));
  }
  if (sink.count() == 0) throw Error("batch --average: no frame could be computed, so there is no mean to write");
  if (result.pipeline_seconds > 0) result.frames_per_second = result.computed / result.pipeline_seconds;
  const auto t_write = clock_type::now();
  try {
    write_average(o, sink);
  } catch (const std::exception& e) {  // the frames are summed: keep them for --resume to write
    throw Error(fmt::format("{}; {}", e.what(), keep_sums()));
  }
  if (result.failed > 0) {  // as a batch file keeps its failed frames for --resume to retry
    sink.save();
    spdlog::info("the sums are kept in {}: --resume retries the failed frames and writes the mean again",
                 sums_file.string());
  } else {
    std::error_code gone;
    fs::remove(sums_file, gone);  // every frame is in the mean: nothing to resume
  }
  result.ensemble_seconds = seconds_since(t_write);
  return result;
}

}  // namespace dcsgrid::app
