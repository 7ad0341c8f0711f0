// The batch pipeline (pipeline.hpp): read, compute, statistics and write stages.
#include "app/batch/pipeline.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "app/batch/queue.hpp"
#include "app/clock.hpp"
#include "dcsgrid/analysis/device_stats.hpp"
#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/method.hpp"

namespace dcsgrid::app {

using analysis::BatchFile;
using analysis::FrameRecord;
using analysis::MapStats;

namespace {

struct ReadItem {
  std::size_t index = 0;
  FrameAtoms frame;
  std::string error;
};
// Frames written with one pair of flushes at most.
constexpr std::size_t kMaxWriteGroup = 32;

// A frame's map: on the host, or (maps on the device) on the GPU of whichever worker computed it,
// in that device's map of `device`. Maps that pass through the device are computed there, then
// copied into `host`, page-locked for that copy.
struct FrameBuffer {
  std::vector<float> host;
  engine::DeviceMaps device;
  engine::PinnedHostMemory pinned;
};

struct ComputedItem {
  std::size_t index = 0;
  FrameBuffer buffer;
  const engine::DeviceMap* on_device = nullptr;  // the map, where it stayed on a GPU
  MapStats stats;  // filled by the stats stage when stats are on, or on the device
  bool stats_taken = false;  // on the device, as the map passed through it
  std::size_t atom_count = 0;
  double total_charge = 0;
  // A solved method's (pb) energies, kJ/mol: NaN for the others.
  double energy_kj_per_mol = std::numeric_limits<double>::quiet_NaN();
  double solvation_kj_per_mol = std::numeric_limits<double>::quiet_NaN();
  std::optional<UnitCell> cell;  // what the table keeps (FrameRecord::cell)
  std::string error;
};


// Closes a queue when the last of the threads that feed it is done.
class LastOneCloses {
 public:
  explicit LastOneCloses(std::size_t threads) : left_(threads) {}
  template <typename Queue>
  void done(Queue& queue) {
    if (left_.fetch_sub(1) == 1) queue.close();
  }

 private:
  std::atomic<std::size_t> left_;
};

// What one compute worker measured; summed over the workers when the run ends.
struct WorkerTimes {
  double busy = 0, engine_setup = 0, engine_kernels = 0;
  std::string device;
};

// The four stages (read, compute, stats, write) and what they share. Compute and stats run one
// thread per backend (a worker each: frames are dealt to whichever is free, so the file is the same
// whatever the count); read and write one thread each. Any stage that hits an error that is not a
// frame's own (a failed write, say) stores it and aborts every queue; run() rethrows it after the
// joins.
class Pipeline {
 public:
  Pipeline(const BatchOptions& o, FrameRead read_frame, FrameSink& sink,
           std::vector<std::unique_ptr<engine::Backend>>& backends)
      : options_(o), periodic_(is_periodic(o.compute.methods)), in_order_(sink.wants_frame_order()),
        read_frame_(std::move(read_frame)), file_(sink),
        backends_(backends), workers_(backends.size()), computers_left_(workers_), analysers_left_(workers_),
        read_q_(o.queue_depth), computed_q_(o.queue_depth), analysed_q_(o.queue_depth),
        free_buffers_(frame_buffers(o.queue_depth, workers_)) {}

  // Computes the frames `frames` hands out, `total` of them in this process at most.
  void run(FrameDispenser& frames, std::size_t total, BatchResult& result) {
    on_device_ = maps_stay_on_device();
    through_device_ = !on_device_ && maps_pass_through_device();
    result.maps_on_device = on_device_;
    result.maps_through_device = through_device_;
    for (std::size_t i = 0; i < frame_buffers(options_.queue_depth, workers_); ++i) {
      FrameBuffer buffer{on_device_ ? std::vector<float>() : std::vector<float>(file_.grid().point_count()), {}, {}};
      if (through_device_) buffer.pinned = engine::PinnedHostMemory(buffer.host);
      free_buffers_.push(std::move(buffer));
    }
    const auto t0 = clock_type::now();
    // OpenMP's thread count is per thread: a new thread starts from the default (every core).
    // Every stage that runs OpenMP loops (the parallel text parse, the engine, the statistics)
    // keeps to the process's share: MPI ranks on one node divide the cores, and the writer's
    // statistics on every core of each of 2 ranks on 2 cores (OpenMP teams spinning against each
    // other) had made a 2-rank batch of small frames 2-4 times slower than one process.
    auto threads = [&] {
      set_openmp_threads(options_.compute.threads);
    };
    // Workers on the CPU share its cores.
    const int worker_team = std::max<int>(1, team_size() / int(workers_));
    std::vector<WorkerTimes> times(workers_);
    std::vector<double> stats_busy(workers_, 0.0);
    std::vector<std::thread> stages;
    stages.emplace_back([&] {
      threads();
      guard([&] { read_stage(frames); });
    });
    for (std::size_t w = 0; w < workers_; ++w) {
      stages.emplace_back([&, w] {
        threads();
        if (workers_ > 1) omp_set_num_threads(worker_team);
        guard([&] { compute_stage(*backends_[w], times[w]); });
      });
      stages.emplace_back([&, w] {
        threads();
        // The statistics on a quarter of the stage's cores at most: a team spread over every core
        // waits at each barrier for whichever of its threads the other stages displaced (one H100
        // host: 1HPV frames' statistics on 16 threads set the pace at 117 frames/s).
        omp_set_num_threads(std::max(1, team_size() / 4 / int(workers_)));
        guard([&] { stats_stage(stats_busy[w]); });
      });
    }
    stages.emplace_back([&] { guard([&] { write_stage(total, result); }); });
    for (std::thread& t : stages) t.join();
    result.pipeline_seconds = seconds_since(t0);
    result.read_busy = read_busy_;
    result.write_busy = write_busy_;
    // Busy shares of the parallel stages: the mean over their threads.
    std::vector<std::string> devices;
    for (std::size_t w = 0; w < workers_; ++w) {
      result.compute_busy += times[w].busy / double(workers_);
      result.stats_busy += stats_busy[w] / double(workers_);
      result.engine_setup += times[w].engine_setup;
      result.engine_kernels += times[w].engine_kernels;
      if (!times[w].device.empty() && std::ranges::find(devices, times[w].device) == devices.end())
        devices.push_back(times[w].device);
    }
    for (std::size_t k = 0; k < devices.size(); ++k) result.device = (k ? result.device + " + " : "") + devices[k];
    if (error_) std::rethrow_exception(error_);
  }
  // True when the writer stopped the run at a failed frame (fail_fast).
  bool stopped_by_fail_fast() const { return fail_fast_stop_; }

 private:
  template <typename F>
  void guard(F&& stage) {
    try {
      stage();
    } catch (...) {
      {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
      }
      abort_all();
    }
  }
  // Frames stay on their GPUs when the sink takes them there, no per-frame statistics need them on
  // the host, and every worker's backend can keep the buffers' maps and the sink's sums beside its
  // runs.
  bool maps_stay_on_device() const {
    const std::size_t sink_bytes = file_.device_bytes();
    if (sink_bytes == 0 || options_.stats) return false;
    return backends_keep_maps(sink_bytes);
  }
  // Frames are computed whole on the GPUs and copied to the host once (rather than slab by slab
  // through the backend's pinned buffers, a thread and a hand-off a frame), with their statistics
  // taken there, when every worker's backend can keep the buffers' maps and the method needs no
  // host work; each frame's grid has the file's point count (the --average sink's periodic frames
  // may not, but they stay on the device).
  bool maps_pass_through_device() const {
    if (file_.grid().point_count() > analysis::DeviceMapStats::kMaxPoints) return false;
    return backends_keep_maps(0);
  }
  // Whether every worker's backend computes the method on its device while the frame buffers' maps
  // and `other_bytes` more are kept there.
  bool backends_keep_maps(std::size_t other_bytes) const {
    const AtomSet no_atoms;
    const engine::PotentialRequest request =
        make_request(options_.compute, options_.compute.methods.front(), no_atoms, file_.grid());
    const std::size_t kept = frame_buffers(options_.queue_depth, workers_) * grid_bytes(file_.grid()) + other_bytes;
    return std::ranges::all_of(backends_, [&](const auto& b) { return b->computes_on_device(request, kept); });
  }

  void abort_all() {
    read_q_.abort();
    computed_q_.abort();
    analysed_q_.abort();
    free_buffers_.abort();
  }

  void read_stage(FrameDispenser& frames) {
    while (const std::optional<std::size_t> next = frames.next()) {
      const std::size_t index = *next;
      const auto t0 = clock_type::now();
      ReadItem item;
      item.index = index;
      try {
        item.frame = read_frame_(index);
      } catch (const std::exception& e) {
        item.error = e.what();
      }
      read_busy_ += seconds_since(t0);
      if (in_order_) {
        std::lock_guard lock(order_mutex_);
        dispatched_.push_back(index);
      }
      if (!read_q_.push(std::move(item))) return;
    }
    read_q_.close();
  }

  // A periodic method's cell for a frame: --cell, else the frame's own (each frame's box of a
  // trajectory, CRYST1 of a structure file).
  std::optional<UnitCell> frame_cell(std::size_t index, const FrameAtoms& frame) const {
    if (options_.compute.cell) return options_.compute.cell;
    if (frame.cell) return frame.cell;
    const analysis::FrameTable& table = file_.frames();
    throw Error(fmt::format("{} frame {}: has no unit cell for the periodic method {} (give --cell "
                            "A,B,C[,ALPHA,BETA,GAMMA])",
                            table.source(index).path, table.frame_index(index),
                            engine::method_name(options_.compute.methods.front())));
  }

  void compute_stage(engine::Backend& backend, WorkerTimes& times) {
    analysis::DeviceMapStats device_stats;  // for maps that pass through the device
    const AtomSet no_atoms;
    engine::PotentialRequest request =
        make_request(options_.compute, options_.compute.methods.front(), no_atoms, file_.grid());
    while (true) {
      // In frame order, a frame takes its buffer before any later frame does, so the frame the
      // writer waits for never waits for a buffer that later frames hold.
      std::unique_lock acquire(acquire_mutex_, std::defer_lock);
      if (in_order_) acquire.lock();
      std::optional<ReadItem> item = read_q_.pop();
      if (!item) break;
      std::optional<FrameBuffer> buffer;
      if (item->error.empty() && !(buffer = free_buffers_.pop())) return;
      if (acquire.owns_lock()) acquire.unlock();
      ComputedItem out;
      out.index = item->index;
      out.error = std::move(item->error);
      if (out.error.empty()) {
        const auto t0 = clock_type::now();
        out.atom_count = item->frame.atoms.size();
        out.total_charge = item->frame.atoms.total_charge();
        request.atoms = &item->frame.atoms;
        try {
          if (periodic_) {
            request.cell = frame_cell(item->index, item->frame);
            request.grid = file_.grid_for_cell(item->index, *request.cell);
          }
          out.cell = periodic_ ? request.cell : item->frame.cell;
          const engine::RunStats stats = compute_frame(backend, request, *buffer, out, device_stats);
          if (times.device.empty()) times.device = stats.device;
          if (stats.solver) {
            out.energy_kj_per_mol = stats.solver->energy_kj_per_mol;
            out.solvation_kj_per_mol =
                stats.solver->solvation_kj_per_mol.value_or(std::numeric_limits<double>::quiet_NaN());
          }
          times.engine_setup += stats.setup_seconds;
          times.engine_kernels += stats.compute_seconds;
          out.buffer = std::move(*buffer);
        } catch (const std::exception& e) {
          out.error = e.what();
          free_buffers_.push(std::move(*buffer));
        }
        times.busy += seconds_since(t0);
      }
      if (!computed_q_.push(std::move(out))) return;
    }
    computers_left_.done(computed_q_);
  }

  // The frame's map into `buffer`: its host vector, or its map on the backend's GPU (out.on_device).
  engine::RunStats compute_frame(engine::Backend& backend, const engine::PotentialRequest& request,
                                 FrameBuffer& buffer, ComputedItem& out, analysis::DeviceMapStats& device_stats) {
    static const std::string what = "frame's map";
    if (on_device_ || through_device_) {
      engine::OnDeviceRun run = backend.run_on_device(request, buffer.device);
      if (run.first_non_finite && !request.allow_non_finite)
        throw non_finite_error(what, request.grid, *run.first_non_finite);
      if (on_device_) {
        out.on_device = run.map;
      } else {
        if (options_.stats) {
          out.stats = device_stats.compute(*run.map, buffer.host.size(), options_.histogram);
          out.stats_taken = true;
        }
        run.map->copy_to_host(buffer.host);
      }
      return std::move(run.stats);
    }
    const std::size_t plane = request.grid.plane_size();
    float* dst = buffer.host.data();
    return backend.run(request, finite_slabs(request.allow_non_finite, request.grid, what,
                                             [&](engine::Slab slab, const float* d) {
                                               std::copy(d, d + plane * slab.planes(), dst + plane * slab.z_begin);
                                             }));
  }

  // Each computed frame's statistics, off the writer's path (the writer then only writes).
  void stats_stage(double& busy) {
    while (auto item = computed_q_.pop()) {
      if (options_.stats && item->error.empty() && !item->stats_taken) {
        const auto t0 = clock_type::now();
        item->stats = map_stats(item->buffer.host, options_.histogram);
        busy += seconds_since(t0);
      }
      if (!analysed_q_.push(std::move(*item))) return;
    }
    analysers_left_.done(analysed_q_);
  }

  // Writes the computed frames as they come, each group of frames already waiting with one pair
  // of flushes (BatchFile::write_frames); failed frames are recorded one by one.
  void write_stage(std::size_t total, BatchResult& result) {
    std::size_t done = 0;
    while (auto first = analysed_q_.pop()) {
      const auto t0 = clock_type::now();
      std::vector<ComputedItem> group;
      group.push_back(std::move(*first));
      while (group.size() < kMaxWriteGroup)
        if (auto next = analysed_q_.try_pop()) group.push_back(std::move(*next));
        else break;
      if (in_order_) group = next_in_order(std::move(group));
      if (group.empty()) continue;
      std::vector<BatchFile::FrameWrite> writes;
      const auto flush = [&] {
        if (!writes.empty()) file_.write_frames(writes);
        result.computed += writes.size();
        writes.clear();
      };
      for (ComputedItem& item : group) {
        FrameRecord record;  // the outcome: the row's other fields are the table's
        record.atom_count = item.atom_count;
        record.total_charge = item.total_charge;
        record.energy_kj_per_mol = item.energy_kj_per_mol;
        record.solvation_kj_per_mol = item.solvation_kj_per_mol;
        record.cell = analysis::cell_parameters(item.cell);
        if (!item.error.empty()) {
          flush();  // the frames before it first, so the sink sees them in the group's order
          record_failure(item.index, record, item.error, result);
          if (fail_fast_stop_) break;  // the frames after it stay pending
          continue;
        }
        writes.push_back({item.index, item.on_device ? nullptr : item.buffer.host.data(), record,
                          options_.stats ? &item.stats : nullptr, item.on_device});
      }
      flush();
      for (ComputedItem& item : group)
        if (item.error.empty()) free_buffers_.push(std::move(item.buffer));
      write_busy_ += seconds_since(t0);
      done += group.size();
      if (options_.progress) options_.progress(done, total);
      if (fail_fast_stop_) {
        abort_all();
        return;
      }
    }
  }

  // The frames that can be written now, in dispatch order: `arrived` joins those held back, and
  // the run of them from the next frame dispatched is taken. Held frames keep their buffers, so
  // the buffer pool bounds them.
  std::vector<ComputedItem> next_in_order(std::vector<ComputedItem> arrived) {
    for (ComputedItem& item : arrived) held_.emplace(item.index, std::move(item));
    std::vector<ComputedItem> ready;
    std::lock_guard lock(order_mutex_);
    while (!dispatched_.empty()) {
      const auto it = held_.find(dispatched_.front());
      if (it == held_.end()) break;
      ready.push_back(std::move(it->second));
      held_.erase(it);
      dispatched_.pop_front();
    }
    return ready;
  }

  void record_failure(std::size_t index, FrameRecord outcome, const std::string& message,
                      BatchResult& result) {
    outcome.message = message;
    file_.write_failure(index, outcome);
    FrameRecord record = file_.frames()[index];
    record.message = message;  // whole (the file keeps 255 bytes)
    spdlog::warn("frame {} ({} model {}) failed: {}", index, record.source, record.model, message);
    if (result.failures.size() < kMaxListedFailures) result.failures.push_back(record);
    ++result.failed;
    if (options_.fail_fast) fail_fast_stop_ = true;
  }

 private:
  const BatchOptions& options_;
  bool periodic_;  // a periodic method: each frame needs a cell
  bool in_order_;  // the sink takes the frames in the order they were dispatched
  FrameRead read_frame_;
  FrameSink& file_;
  std::vector<std::unique_ptr<engine::Backend>>& backends_;
  std::size_t workers_;
  LastOneCloses computers_left_, analysers_left_;
  BoundedQueue<ReadItem> read_q_;
  BoundedQueue<ComputedItem> computed_q_, analysed_q_;
  BoundedQueue<FrameBuffer> free_buffers_;
  bool on_device_ = false;  // the frames' maps stay on the GPUs (maps_stay_on_device)
  bool through_device_ = false;  // they are computed whole there (maps_pass_through_device)
  double read_busy_ = 0, write_busy_ = 0;
  // In order: the frames read, in dispatch order, not yet written; the frames that arrived at the
  // writer before an earlier one; one worker at a time takes a frame and its buffer.
  std::mutex order_mutex_, acquire_mutex_;
  std::deque<std::size_t> dispatched_;
  std::map<std::size_t, ComputedItem> held_;
  std::atomic<bool> fail_fast_stop_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace

bool run_pipeline(const BatchOptions& options, FrameRead read_frame, FrameSink& sink,
                  std::vector<std::unique_ptr<engine::Backend>>& backends, FrameDispenser& frames,
                  std::size_t total, BatchResult& result) {
  Pipeline pipeline(options, std::move(read_frame), sink, backends);
  pipeline.run(frames, total, result);
  return pipeline.stopped_by_fail_fast();
}

std::size_t queue_depth(const BatchOptions& o, const GridSpec& grid) {
  if (o.queue_depth > 0) return o.queue_depth;
  return std::clamp<std::size_t>((std::size_t(256) << 20) / grid_bytes(grid), 2, 16);
}

// Frame workers on each GPU when --frame-workers is 0: a frame of a small grid keeps a GPU busy for
// less time than its host work takes (upload, copy back, the sink), so several frames at once fill
// the gaps (measured in docs/periodic.md); a large grid's frame fills the GPU alone, and each
// worker holds frame buffers. A whole-grid method (pb) solves on each worker at once, whose memory
// checks would all pass before any allocates: one worker.
std::size_t gpu_workers(const GridSpec& grid, engine::Method method) {
  constexpr std::size_t kSmallGridBytes = std::size_t(64) << 20;
  if (engine::describe(method).shape == engine::MethodShape::whole_grid) return 1;
  return grid_bytes(grid) <= kSmallGridBytes ? 4 : 1;
}

bool compute_frames(const BatchOptions& o, const BatchInputs& in, FrameSink& sink, std::size_t first_frame,
                    const FrameRuns& todo, BatchDistribution& distribution, BatchResult& result) {
  BatchOptions run = o;
  distribution.choose_hardware(run.compute);
  run.queue_depth = queue_depth(o, sink.grid());
  set_openmp_threads(run.compute.threads);
  std::vector<std::unique_ptr<engine::Backend>> backends = engine::make_frame_backends(
      run.compute.device, run.compute.gpus, run.compute.methods, o.frame_workers,
      gpu_workers(sink.grid(), o.compute.methods.front()));
  require_host_memory(sink.grid(), frame_buffers(run.queue_depth, backends.size()));
  require_support(*backends.front(), o.compute.methods.front());
  result.device = backends.front()->name();
  if (backends.size() > 1)
    spdlog::info("batch: frames dealt to {} workers ({})", backends.size(),
                 backends.front()->name() == "cpu" ? "sharing the CPU's cores" : "GPUs of --gpus in turn");
  const FrameRead read = frame_reader(o, in, sink.frames(), first_frame);
  const std::unique_ptr<FrameDispenser> frames = distribution.dispense(todo);
  const bool stopped = run_pipeline(run, read, sink, backends, *frames, todo.size(), result);
  if (stopped) frames->stop_all();
  return stopped;
}

}  // namespace dcsgrid::app
