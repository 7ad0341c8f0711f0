// Maps from atoms in memory: compute_map and the FrameMaps worker (compute.hpp).
#include "dcsgrid/app/compute.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include <spdlog/spdlog.h>

#include "app/clock.hpp"
#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/io/files/output_lock.hpp"
#include "dcsgrid/analysis/ensemble.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::app {

namespace fs = std::filesystem;

namespace {

// The CPU backend computes a slab per call and reports progress after each: 1M points a slab keep
// every core busy yet let a front end check for an interrupt often. GPU backends pipeline their own
// (larger) slabs and keep their default.
constexpr std::size_t kCpuSlabBytes = std::size_t(4) << 20;

}  // namespace

std::unique_ptr<engine::Backend> start_backend(const ComputeSettings& settings) {
  validate(settings);
  auto backend = engine::make_backend(settings.device, settings.gpus, settings.methods);
  for (const auto m : settings.methods) require_support(*backend, m);
  if (backend->name() == "cpu") backend->slab_bytes = kCpuSlabBytes;
  backend->warm_up();
  return backend;
}

engine::RunStats compute_map(engine::Backend& backend, const AtomSet& atoms, const GridSpec& grid,
                             const ComputeSettings& settings, engine::Method method,
                             const engine::SlabSink& sink, Observer& observer) {
  const engine::PotentialRequest request = make_request(settings, method, atoms, grid);
  engine::validate(request);
  require_support(backend, method);
  set_openmp_threads(settings.threads);
  observer.pass_started(engine::method_name(method));
  std::size_t non_finite = 0;
  const engine::RunStats stats =
      backend.run(request, finite_slabs(request.allow_non_finite, grid, engine::method_name(method) + " map",
                                        sink, &non_finite),
                  [&](double fraction) { observer.progress(fraction); });
  observer.pass_finished();
  if (non_finite > 0)
    spdlog::warn("{} map: {} of {} values are not finite (kept: --allow-non-finite)",
                 engine::method_name(method), non_finite, grid.point_count());
  return stats;
}

engine::RunStats compute_map(engine::Backend& backend, const AtomSet& atoms, const GridSpec& grid,
                             const ComputeSettings& settings, engine::Method method, float* out,
                             Observer& observer) {
  const std::size_t plane = grid.plane_size();
  return compute_map(
      backend, atoms, grid, settings, method,
      [&](engine::Slab slab, const float* data) {
        std::copy(data, data + plane * slab.planes(), out + plane * slab.z_begin);
      },
      observer);
}

// Ends the worker's current run at its next slab once the FrameMaps is being destroyed, so that a
// front end's interrupt does not wait for a whole frame.
class StopObserver final : public Observer {
 public:
  explicit StopObserver(const std::atomic<bool>& stop) : stop_(stop) {}
  void progress(double) override {
    if (stop_) throw Error("frames: stopped");
  }

 private:
  const std::atomic<bool>& stop_;
};

// The worker and what it shares with the caller, under one mutex: frames waiting to be computed
// (input), maps waiting to be taken (output), the first error, and the end of either side.
struct FrameMaps::Impl {
  std::shared_ptr<engine::Backend> backend;
  ComputeSettings settings;
  GridSpec grid;
  FrameFile file_options;
  bool keep_maps;
  std::size_t depth;

  std::optional<io::OutputLock> one_writer;  // held while the file is written; released after it
  std::optional<analysis::BatchFile> file;
  std::optional<analysis::EnsembleAccumulator> ensemble;
  clock_type::time_point started = clock_type::now();
  FramesSummary summary;

  std::mutex mutex;
  std::condition_variable changed;  // any of the fields below
  struct QueuedFrame {
    AtomSet atoms;
    std::optional<UnitCell> cell;
  };
  std::deque<QueuedFrame> input;
  std::deque<FrameMap> output;
  std::size_t submitted = 0, taken = 0;
  bool closed = false;      // no more frames will be submitted
  bool stopping = false;    // the worker must stop (destructor, or an error)
  bool worker_done = false;
  std::exception_ptr error;
  std::atomic<bool> abandon{false};  // set by the destructor, read by the running frame
  std::thread worker;

  // Waits until ready() holds, calling poll about every 0.1 s with the lock released. Rethrows the
  // worker's error.
  template <typename Ready>
  void wait(std::unique_lock<std::mutex>& lock, Ready ready, const WaitPoll& poll) {
    while (!ready() && !error) {
      if (changed.wait_for(lock, std::chrono::milliseconds(100), [&] { return ready() || error; }))
        break;
      if (poll) {
        lock.unlock();
        poll();
        lock.lock();
      }
    }
    if (error) std::rethrow_exception(error);
  }

  void open_file() {
    const FrameFile& f = file_options;
    one_writer.emplace(f.path);
    if (fs::exists(f.path)) {
      if (!f.overwrite) throw Error(f.path.string() + " exists (overwrite it, or choose another name)");
      fs::remove(f.path);
    }
    analysis::BatchLayout layout;
    layout.grid = grid;
    layout.meta = map_metadata(settings, settings.methods.front());
    layout.meta.input_file = f.source;
    layout.meta.command_line = f.command_line;
    for (std::size_t i = 0; i < f.frames; ++i) {
      analysis::FrameRecord record;
      record.source = f.source;
      record.model = int(i + 1);
      layout.frames.push_back(record);
    }
    layout.histogram_bins = f.stats ? f.histogram.bins : 0;
    layout.ensemble = f.ensemble;
    analysis::BatchFile::create(f.path, layout);
    file.emplace(f.path, true);
    if (f.ensemble) ensemble.emplace(grid.point_count());
  }

  // Records map `index` in the file (stats, ensemble sums included).
  void record(std::size_t index, const AtomSet& atoms, const std::optional<UnitCell>& cell,
              const std::vector<float>& data) {
    if (index >= file_options.frames)
      throw Error(file_options.path.string() + ": more frames than the " +
                  std::to_string(file_options.frames) + " it was created for");
    const auto t0 = clock_type::now();
    analysis::FrameRecord rec = file->frames()[index];
    rec.atom_count = atoms.size();
    rec.total_charge = atoms.total_charge();
    rec.status = analysis::FrameStatus::complete;
    rec.cell = analysis::cell_parameters(cell);
    std::optional<analysis::MapStats> stats;
    if (file_options.stats) stats = analysis::map_stats(data, file_options.histogram);
    file->write_frame(index, data.data(), rec, stats ? &*stats : nullptr);
    if (ensemble) ensemble->add(data.data());
    summary.write_seconds += seconds_since(t0);
  }

  void run_worker() {
    StopObserver observer(abandon);
    const engine::Method method = settings.methods.front();
    const bool periodic = engine::describe(method).periodic;
    const bool frames_give_the_cell = periodic && !settings.cell;
    ComputeSettings frame_settings = settings;
    for (std::size_t index = 0;; ++index) {
      QueuedFrame frame;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stopping || closed || !input.empty(); });
        if (stopping || input.empty()) break;
        frame = std::move(input.front());
        input.pop_front();
        changed.notify_all();
      }
      if (frames_give_the_cell) {
        if (!frame.cell)
          throw Error("frame " + std::to_string(index) + " has no unit cell for the periodic method " +
                      engine::method_name(method) + " (give each frame's cell, or cell= for all)");
        frame_settings.cell = frame.cell;
      }
      FrameMap map;
      map.index = index;
      map.data.resize(grid.point_count());
      const auto t0 = clock_type::now();
      map.stats = compute_map(*backend, frame.atoms, grid, frame_settings, method, map.data.data(), observer);
      summary.compute_seconds += seconds_since(t0);
      if (summary.device.empty()) summary.device = map.stats.device;
      // The table keeps the cell a periodic method computed in, else the frame's own (as batch's).
      if (file) record(index, frame.atoms, periodic ? frame_settings.cell : frame.cell, map.data);
      std::unique_lock lock(mutex);
      ++summary.frames;
      if (!keep_maps) continue;
      changed.wait(lock, [&] { return stopping || !keep_maps || output.size() < depth; });
      if (stopping) break;
      if (keep_maps) output.push_back(std::move(map));
      changed.notify_all();
    }
    std::lock_guard lock(mutex);
    worker_done = true;
    changed.notify_all();
  }

  void start() {
    worker = std::thread([this] {
      try {
        run_worker();
      } catch (...) {
        std::lock_guard lock(mutex);
        error = std::current_exception();
        stopping = worker_done = true;
        changed.notify_all();
      }
    });
  }
};

FrameMaps::FrameMaps(std::shared_ptr<engine::Backend> backend, const ComputeSettings& settings,
                     const GridSpec& grid, const FrameFile& file, bool keep_maps, std::size_t depth)
    : impl_(std::make_unique<Impl>()) {
  validate(settings);
  validate(grid);
  if (settings.methods.size() != 1)
    throw Error("frames: one method a run, not " + method_list_name(settings.methods));
  require_support(*backend, settings.methods.front());
  Impl& s = *impl_;
  s.backend = std::move(backend);
  s.settings = settings;
  s.grid = grid;
  s.file_options = file;
  s.keep_maps = keep_maps;
  s.depth = std::max<std::size_t>(depth, 1);
  require_host_memory(grid, 2 * s.depth + 2);  // maps waiting on both sides, one computing
  if (!file.path.empty()) {
    if (file.stats) analysis::validate(file.histogram);
    s.open_file();
  }
  s.start();
}

FrameMaps::~FrameMaps() {
  impl_->abandon = true;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
    impl_->changed.notify_all();
  }
  if (impl_->worker.joinable()) impl_->worker.join();
}

const GridSpec& FrameMaps::grid() const { return impl_->grid; }

void FrameMaps::submit(AtomSet atoms, std::optional<UnitCell> cell, const WaitPoll& poll) {
  Impl& s = *impl_;
  if (atoms.empty()) throw Error("frame " + std::to_string(s.submitted) + " has no atoms");
  std::unique_lock lock(s.mutex);
  if (s.closed) throw Error("frames: submit after finish");
  s.wait(lock, [&] { return s.input.size() < s.depth || s.worker_done; }, poll);
  s.input.push_back({std::move(atoms), std::move(cell)});
  ++s.submitted;
  s.changed.notify_all();
}

std::optional<FrameMap> FrameMaps::next(const WaitPoll& poll) {
  Impl& s = *impl_;
  if (!s.keep_maps) throw Error("frames: the maps go only into the file (keep_maps is off)");
  std::unique_lock lock(s.mutex);
  if (s.taken == s.submitted) return std::nullopt;
  s.wait(lock, [&] { return !s.output.empty(); }, poll);
  FrameMap map = std::move(s.output.front());
  s.output.pop_front();
  ++s.taken;
  s.changed.notify_all();
  return map;
}

FramesSummary FrameMaps::finish(const WaitPoll& poll) {
  Impl& s = *impl_;
  {
    std::unique_lock lock(s.mutex);
    s.closed = true;
    s.keep_maps = false;  // maps not taken yet are dropped; the worker no longer waits on them
    s.output.clear();
    s.changed.notify_all();
    s.wait(lock, [&] { return s.worker_done; }, poll);
  }
  s.worker.join();
  if (s.file) {
    if (s.submitted != s.file_options.frames)
      throw Error(s.file_options.path.string() + " was created for " +
                  std::to_string(s.file_options.frames) + " frames but " +
                  std::to_string(s.submitted) + " came (the missing ones stay pending)");
    if (s.ensemble)
      s.file->write_ensemble(s.ensemble->mean().data(), s.ensemble->stddev().data(),
                             s.ensemble->count());
  }
  s.summary.seconds = seconds_since(s.started);
  if (s.summary.seconds > 0) s.summary.frames_per_second = double(s.summary.frames) / s.summary.seconds;
  return s.summary;
}

}  // namespace dcsgrid::app
