// The CUDA backend: a grid computed in z-slabs on one or several GPUs. One host thread per device
// prepares the method (atoms uploaded once), then for each of its slabs enqueues the kernel on a
// compute stream and the copy to a pinned host buffer on a copy stream; the calling thread hands
// the slabs to the sink in z order. With two device and two host buffers per device, slab i+1
// computes while slab i copies back and slab i−1 is in the sink.
#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_backend.hpp"
#include "dcsgrid/engine/cuda_cutoff.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/cuda_direct.cuh"
#include "dcsgrid/engine/method_cache.hpp"
#include "dcsgrid/engine/msm_cuda.hpp"
#include "dcsgrid/engine/pb_cuda.hpp"
#include "dcsgrid/engine/periodic_cuda.hpp"
#include "dcsgrid/engine/slab_plan.hpp"

namespace dcsgrid::engine {

namespace {

using DeviceMethodFactory = std::unique_ptr<DeviceMethod> (*)(const PotentialRequest&, cudaStream_t,
                                                              MethodCache*);
// A factory that keeps nothing between runs.
template <std::unique_ptr<DeviceMethod> (*Make)(const PotentialRequest&, cudaStream_t)>
std::unique_ptr<DeviceMethod> uncached(const PotentialRequest& request, cudaStream_t stream, MethodCache*) {
  return Make(request, stream);
}
// Indexed by Method; nullptr where the CUDA backend has no implementation.
constexpr std::array<DeviceMethodFactory, 6> kDeviceMethods{
    make_direct_method,                   // direct
    uncached<make_cutoff_device_method>,  // cutoff
    uncached<make_msm_device_method>,     // msm
    make_ewald_device_method,             // ewald
    make_pme_device_method,               // pme
    uncached<make_pb_device_method>,      // pb
};

DeviceMethodFactory device_factory(Method m) {
  const auto i = std::size_t(m);
  return i < kDeviceMethods.size() ? kDeviceMethods[i] : nullptr;
}

}  // namespace

std::unique_ptr<DeviceMethod> make_device_method(const PotentialRequest& request,
                                                 cudaStream_t stream, MethodCache* cache) {
  const DeviceMethodFactory f = device_factory(request.method);
  if (!f) throw Error("the cuda backend cannot compute the '" + method_name(request.method) + "' method");
  return f(request, stream, cache);
}

namespace {

constexpr std::int64_t kMaxPlanesPerLaunch = 65535;  // gridDim.z
constexpr std::size_t kDeviceMemoryReserve = std::size_t(256) << 20;
// Host memory of one slab at most, whatever slab_bytes allows: each device pins two slab buffers
// per run, pinning takes about 0.5 ms a MiB and is on a short run's critical path, and more slabs
// cost little (docs/performance.md); a smaller last slab also leaves less of its copy after the
// last kernel.
constexpr std::size_t kSlabHostBytes = std::size_t(16) << 20;

// What the device threads and the calling thread share. Every wait returns early once the run is
// aborted (a device failed, or the sink threw).
class Handoff {
 public:
  explicit Handoff(std::size_t devices) : capacity_(devices, -1) {}

  // Device threads: the planes that fit on the device, and the method's plane multiple.
  void post_capacity(std::size_t device, std::int64_t planes, std::int64_t plane_multiple) {
    update([&] {
      capacity_[device] = planes;
      plane_multiple_ = std::max(plane_multiple_, plane_multiple);
    });
  }
  // The slab plan, or nullptr when aborted.
  const std::vector<Slab>* wait_plan() {
    std::unique_lock lock(mutex_);
    wait(lock, [&] { return planned_; });
    return aborted_ ? nullptr : &slabs_;
  }
  // False when aborted.
  bool wait_consumed(std::size_t slab) {
    std::unique_lock lock(mutex_);
    wait(lock, [&] { return consumed_[slab] != 0; });
    return !aborted_;
  }
  void publish(std::size_t slab, const float* data) {
    update([&] { ready_[slab] = data; });
  }
  void fail(std::exception_ptr error) {
    update([&] {
      if (!error_) error_ = std::move(error);
      aborted_ = true;
    });
  }

  // The calling thread. The waits rethrow the first device error.
  // The planes that fit on every device, and the plane multiple.
  std::pair<std::int64_t, std::int64_t> wait_capacities() {
    std::unique_lock lock(mutex_);
    wait(lock,
         [&] { return std::ranges::all_of(capacity_, [](std::int64_t c) { return c >= 0; }); });
    rethrow_locked();
    return {std::ranges::min(capacity_), plane_multiple_};
  }
  void set_plan(std::vector<Slab> slabs) {
    update([&] {
      ready_.assign(slabs.size(), nullptr);
      consumed_.assign(slabs.size(), 0);
      slabs_ = std::move(slabs);
      planned_ = true;
    });
  }
  const float* wait_ready(std::size_t slab) {
    std::unique_lock lock(mutex_);
    wait(lock, [&] { return ready_[slab] != nullptr; });
    rethrow_locked();
    return ready_[slab];
  }
  void consumed(std::size_t slab) {
    update([&] { consumed_[slab] = 1; });
  }
  void abort() {
    update([&] { aborted_ = true; });
  }
  void rethrow_if_failed() {
    std::lock_guard lock(mutex_);
    rethrow_locked();
  }

 private:
  template <typename F>
  void update(F&& change) {
    {
      std::lock_guard lock(mutex_);
      change();
    }
    cv_.notify_all();
  }
  template <typename Pred>
  void wait(std::unique_lock<std::mutex>& lock, Pred done) {
    cv_.wait(lock, [&] { return aborted_ || done(); });
  }
  void rethrow_locked() {
    if (error_) std::rethrow_exception(error_);
    if (aborted_) throw Error("the GPU run was aborted");
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::int64_t> capacity_;  // planes that fit on each device, −1 until known
  std::int64_t plane_multiple_ = 1;
  bool planned_ = false;
  std::vector<Slab> slabs_;
  std::vector<const float*> ready_;  // per slab: its data on the host once copied
  std::vector<char> consumed_;       // per slab: the sink is done with it
  bool aborted_ = false;
  std::exception_ptr error_;
};

// What a device keeps from one run to the next (a batch runs thousands of small grids, and
// creating streams and pinning host buffers each time cost more than the kernels): streams,
// events and the two slab buffers on each side, grown when a run needs more. Created and used on
// its device's thread, one run at a time.
struct DeviceSlot {
  static constexpr unsigned kWaitFlags = cudaEventDisableTiming | cudaEventBlockingSync;

  cuda::Stream compute, copy;
  std::array<cuda::DeviceBuffer<float>, 2> device;
  std::array<cuda::PinnedBuffer<float>, 2> host;
  std::array<cuda::Event, 2> started, computed;
  std::array<cuda::Event, 2> copied{cuda::Event(kWaitFlags), cuda::Event(kWaitFlags)};
  NonFiniteSearch non_finite;  // of maps kept on the device (run_on_device)
  // Last so that it is freed first: what it keeps may use the streams above.
  MethodCache cache;

  void reserve(std::size_t device_floats, std::size_t host_floats) {
    for (int b = 0; b < 2; ++b) {
      if (device[b].size() < device_floats) device[b].resize(device_floats);
      if (host[b].size() < host_floats) host[b] = cuda::PinnedBuffer<float>(host_floats);
    }
  }
};

// The slots a backend keeps, per device. A run takes one per device (or makes one) and gives it
// back at its end, so runs on one backend from several threads never share buffers.
class SlotPool {
 public:
  explicit SlotPool(std::size_t devices) : free_(devices) {}
  std::unique_ptr<DeviceSlot> take(std::size_t device) {
    std::lock_guard lock(mutex_);
    auto& slots = free_[device];
    if (slots.empty()) return nullptr;  // the device thread makes one
    std::unique_ptr<DeviceSlot> slot = std::move(slots.back());
    slots.pop_back();
    return slot;
  }
  void give(std::size_t device, std::unique_ptr<DeviceSlot> slot) {
    if (!slot) return;
    std::lock_guard lock(mutex_);
    free_[device].push_back(std::move(slot));
  }

 private:
  std::mutex mutex_;
  std::vector<std::vector<std::unique_ptr<DeviceSlot>>> free_;
};

// One device's part of a run, used from that device's thread only (the device is current).
class DeviceWorker {
 public:
  DeviceWorker(const PotentialRequest& request, DeviceSlot& slot, bool keep_setup)
      : grid_(request.grid), slot_(slot), compute_(slot.compute), copy_(slot.copy),
        device_(slot.device), host_(slot.host), started_(slot.started), computed_(slot.computed),
        copied_(slot.copied),
        method_(make_device_method(request, compute_.get(), keep_setup ? &slot.cache : nullptr)),
        layout_(method_->layout()) {}
  // Nothing may still write into the buffers when another run reuses them (after an abort).
  ~DeviceWorker() {
    cudaStreamSynchronize(compute_.get());
    cudaStreamSynchronize(copy_.get());
  }
  DeviceWorker(const DeviceWorker&) = delete;
  DeviceWorker& operator=(const DeviceWorker&) = delete;
  // Planes per slab for which both device buffers fit in the free memory.
  std::int64_t max_planes() const {
    std::size_t free = 0, total = 0;
    DCSGRID_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const std::size_t usable = free > kDeviceMemoryReserve ? free - kDeviceMemoryReserve : 0;
    const std::int64_t planes = std::int64_t(usable / (2 * layout_.plane_bytes()));
    if (planes < 1)
      throw Error("not enough free memory for two planes of the grid (" +
                  std::to_string(2 * layout_.plane_bytes() >> 20) + " MiB needed, " +
                  std::to_string(free >> 20) + " MiB free)");
    return planes;
  }

  std::int64_t plane_multiple() const { return layout_.plane_multiple; }
  bool finishes_on_host() const { return method_->finishes_on_host(); }
  std::optional<SolverReport> solver_report() const { return method_->solver_report(); }
  std::vector<StageTime> setup_stages() const { return method_->setup_stages(); }

  void allocate(std::int64_t planes) {
    slot_.reserve(std::size_t(planes) * layout_.plane_bytes() / sizeof(float),
                  std::size_t(planes) * grid_.plane_size());
  }
  // The device's slab buffers alone (run_into).
  void allocate_on_device(std::int64_t planes) {
    slot_.reserve(std::size_t(planes) * layout_.plane_bytes() / sizeof(float), 0);
  }

  // Computes slabs[mine[0]], slabs[mine[1]], ... and publishes each once it is on the host.
  void run(const std::vector<Slab>& slabs, const std::vector<std::size_t>& mine, Handoff& handoff) {
    for (std::size_t n = 0; n < mine.size(); ++n) {
      const std::size_t b = n % 2;
      // Device buffer b is free once the copy of the slab two back is done.
      DCSGRID_CUDA_CHECK(cudaStreamWaitEvent(compute_.get(), copied_[b].get()));
      started_[b].record(compute_.get());
      method_->enqueue(slabs[mine[n]], device_[b].data(), compute_.get());
      computed_[b].record(compute_.get());
      // Host buffer b is free once the sink is done with the slab two back.
      if (n >= 2 && !handoff.wait_consumed(mine[n - 2])) return;
      DCSGRID_CUDA_CHECK(cudaStreamWaitEvent(copy_.get(), computed_[b].get()));
      copy_slab(slabs[mine[n]], b, host_[b].data(), cudaMemcpyDeviceToHost, copy_.get());
      copied_[b].record(copy_.get());
      if (n >= 1) hand_over(mine[n - 1], slabs[mine[n - 1]], (n - 1) % 2, handoff);
    }
    if (!mine.empty()) hand_over(mine.back(), slabs[mine.back()], (mine.size() - 1) % 2, handoff);
    // The sink reads the last two slabs from the host buffers, which die with this worker: wait
    // until it is done with them (the loop above waited for every earlier one).
    for (std::size_t n = mine.size() >= 2 ? mine.size() - 2 : 0; n < mine.size(); ++n)
      if (!handoff.wait_consumed(mine[n])) return;
  }

  // Computes the slabs, in order, into `map` (device memory: the whole grid, x fastest, `points`
  // floats), all on the compute stream, waits for them, and finds the map's first non-finite
  // value. For methods that do not finish on the host.
  // Its waits are on copied_ events, which block rather than spin: the frame workers sharing a GPU
  // would otherwise spin on the cores that read the frames.
  std::optional<NonFiniteValue> run_into(const std::vector<Slab>& slabs, float* map, std::size_t points) {
    const std::size_t plane = grid_.plane_size();
    for (std::size_t n = 0; n < slabs.size(); ++n) {
      const std::size_t b = n % 2;
      started_[b].record(compute_.get());
      method_->enqueue(slabs[n], device_[b].data(), compute_.get());
      computed_[b].record(compute_.get());
      copied_[b].record(compute_.get());  // here: the kernel done, for a blocking wait
      copy_slab(slabs[n], b, map + plane * std::size_t(slabs[n].z_begin), cudaMemcpyDeviceToDevice, compute_.get());
      if (n >= 1) finish_on_device(slabs[n - 1], (n - 1) % 2);
    }
    if (!slabs.empty()) finish_on_device(slabs.back(), (slabs.size() - 1) % 2);
    slot_.non_finite.enqueue(map, points, compute_.get());
    copied_[0].record(compute_.get());
    copied_[0].synchronize();
    return slot_.non_finite.result(map, compute_.get());
  }

  double kernel_seconds() const { return kernel_seconds_; }
  double host_seconds() const { return host_seconds_; }

 private:
  // Slab buffer b (the method's layout) into dst, unpadded.
  void copy_slab(Slab slab, std::size_t b, float* dst, cudaMemcpyKind kind, cudaStream_t stream) {
    const std::size_t nx = std::size_t(grid_.nx()), ny = std::size_t(grid_.ny());
    cudaMemcpy3DParms p{};
    p.srcPtr = make_cudaPitchedPtr(device_[b].data(), std::size_t(layout_.pitch_x) * sizeof(float),
                                   nx, std::size_t(layout_.rows_per_plane));
    p.dstPtr = make_cudaPitchedPtr(dst, nx * sizeof(float), nx, ny);
    p.extent = make_cudaExtent(nx * sizeof(float), ny, std::size_t(slab.planes()));
    p.kind = kind;
    DCSGRID_CUDA_CHECK(cudaMemcpy3DAsync(&p, stream));
  }

  // A slab of run_into once its kernel is done: its time, and the method's bookkeeping.
  void finish_on_device(Slab slab, std::size_t b) {
    copied_[b].synchronize();
    kernel_seconds_ += computed_[b].seconds_since(started_[b]);
    method_->finish_on_host(slab, nullptr);
  }

  void hand_over(std::size_t index, Slab slab, std::size_t b, Handoff& handoff) {
    copied_[b].synchronize();
    kernel_seconds_ += computed_[b].seconds_since(started_[b]);
    host_seconds_ += method_->finish_on_host(slab, host_[b].data());
    handoff.publish(index, host_[b].data());
  }

  GridSpec grid_;
  DeviceSlot& slot_;
  cuda::Stream& compute_;
  cuda::Stream& copy_;
  std::array<cuda::DeviceBuffer<float>, 2>& device_;
  std::array<cuda::PinnedBuffer<float>, 2>& host_;
  std::array<cuda::Event, 2>& started_;
  std::array<cuda::Event, 2>& computed_;
  std::array<cuda::Event, 2>& copied_;
  std::unique_ptr<DeviceMethod> method_;
  SlabLayout layout_;
  double kernel_seconds_ = 0, host_seconds_ = 0;
};

struct DeviceResult {
  DeviceRunStats stats;
  double host_seconds = 0;
  std::optional<SolverReport> solver;
};

// The body of device thread `index` (of `count`), running on `device`. Errors go to the handoff,
// prefixed with the device.
void device_thread(int device, std::size_t index, std::size_t count,
                   const PotentialRequest& request, bool keep_setup, std::unique_ptr<DeviceSlot>& slot,
                   Handoff& handoff, DeviceResult& result) {
  result.stats.device = cuda::device_label(device);
  try {
    const auto t0 = clock_type::now();
    LapTimer timer;
    auto& stages = result.stats.setup_stages;
    DCSGRID_CUDA_CHECK(cudaSetDevice(device));
    if (!slot) slot = std::make_unique<DeviceSlot>();
    stages.push_back({"context and streams", timer.lap()});
    DeviceWorker worker(request, *slot, keep_setup);
    stages.push_back({"method", timer.lap()});
    for (const StageTime& s : worker.setup_stages()) stages.push_back({"method: " + s.stage, s.seconds});
    handoff.post_capacity(index, worker.max_planes(), worker.plane_multiple());
    const std::vector<Slab>* slabs = handoff.wait_plan();
    if (!slabs) return;
    std::vector<std::size_t> mine;
    std::int64_t planes = 0;
    for (std::size_t s = index; s < slabs->size(); s += count) {
      mine.push_back(s);
      planes = std::max(planes, (*slabs)[s].planes());
    }
    stages.push_back({"waiting for the other devices' capacities", timer.lap()});
    worker.allocate(planes);
    stages.push_back({"slab buffers", timer.lap()});
    result.stats.setup_seconds = seconds_since(t0);
    worker.run(*slabs, mine, handoff);
    result.stats.compute_seconds = worker.kernel_seconds();
    result.stats.slabs = std::int64_t(mine.size());
    result.host_seconds = worker.host_seconds();
    result.solver = worker.solver_report();
  } catch (const std::exception& e) {
    handoff.fail(std::make_exception_ptr(Error(result.stats.device + ": " + e.what())));
  } catch (...) {
    handoff.fail(std::current_exception());
  }
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::vector<int> devices)
      : devices_(std::move(devices)), slots_(devices_.size()) {}
  std::string name() const override { return "cuda"; }
  bool supports(Method m) const override { return device_factory(m) != nullptr; }

  // Creates every device's primary context, on a thread each: one context takes about 0.1 s, and
  // they need not wait for each other.
  void warm_up() override {
    std::vector<std::exception_ptr> errors(devices_.size());
    std::vector<std::thread> threads;
    for (std::size_t d = 0; d < devices_.size(); ++d)
      threads.emplace_back([&, d] {
        try {
          DCSGRID_CUDA_CHECK(cudaSetDevice(devices_[d]));
          DCSGRID_CUDA_CHECK(cudaFree(nullptr));
        } catch (...) {
          errors[d] = std::current_exception();
        }
      });
    for (auto& t : threads) t.join();
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

  bool computes_on_device(const PotentialRequest& request, std::size_t kept_bytes) const override {
    if (devices_.size() != 1 || !supports(request.method) || request.cutoff.bin_capacity > 0) return false;
    std::size_t free = 0, total = 0;
    {
      const cuda::OnDevice on(devices_.front());
      DCSGRID_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    }
    return kept_bytes <= free / 2;
  }

  // On the calling thread, with the device made current there; slabs as run() plans their host
  // buffers, all in one stream, each copied into the map.
  OnDeviceRun run_on_device(const PotentialRequest& request, DeviceMaps& maps) override {
    validate(request);
    if (devices_.size() != 1 || !supports(request.method))
      throw Error("the cuda backend keeps a map on a GPU only when it runs on one GPU, for a method it computes");
    const int device = devices_.front();
    OnDeviceRun run;
    DeviceRunStats& stats = run.stats.devices.emplace_back();
    stats.device = cuda::device_label(device);
    const auto t0 = clock_type::now();
    LapTimer timer;
    DCSGRID_CUDA_CHECK(cudaSetDevice(device));
    SlotLoan loan(slots_);
    stats.setup_stages.push_back({"context and streams", timer.lap()});
    const std::size_t points = request.grid.point_count();
    if (maps.size() <= std::size_t(device)) maps.resize(std::size_t(device) + 1);
    if (!maps[device] || maps[device]->points() < points) {
      maps[device].reset();
      maps[device] = std::make_unique<CudaDeviceMap>(points);
    }
    auto& map = static_cast<CudaDeviceMap&>(*maps[device]);  // run_on_device makes every map of `maps`
    DeviceWorker worker(request, *loan.slot, keep_setup);
    if (worker.finishes_on_host())
      throw Error("the " + method_name(request.method) + " method sums atoms on the host: its map cannot stay on the GPU");
    stats.setup_stages.push_back({"method", timer.lap()});
    for (const StageTime& s : worker.setup_stages()) stats.setup_stages.push_back({"method: " + s.stage, s.seconds});
    const std::size_t plane_bytes = request.grid.plane_size() * sizeof(float);
    const std::int64_t cap = slab_planes(std::int64_t(std::min(slab_bytes, kSlabHostBytes) / plane_bytes),
                                         std::min(worker.max_planes(), kMaxPlanesPerLaunch), worker.plane_multiple());
    std::vector<Slab> slabs;
    for (std::int64_t z = 0; z < request.grid.nz(); z += cap) slabs.push_back({z, std::min(z + cap, request.grid.nz())});
    worker.allocate_on_device(slabs.front().planes());
    stats.setup_stages.push_back({"slab buffers", timer.lap()});
    stats.setup_seconds = seconds_since(t0);
    run.first_non_finite = worker.run_into(slabs, map.data(), points);
    stats.compute_seconds = worker.kernel_seconds();
    stats.slabs = std::int64_t(slabs.size());
    run.stats.device = "cuda: " + stats.device;
    run.stats.setup_seconds = stats.setup_seconds;
    run.stats.compute_seconds = stats.compute_seconds;
    run.stats.solver = worker.solver_report();
    run.map = &map;
    return run;
  }

  void compute(const PotentialRequest& request, Slab slab, float* out) override {
    if (slab.z_begin < 0 || slab.z_end > request.grid.nz() || slab.planes() <= 0)
      throw Error("cuda backend: planes [" + std::to_string(slab.z_begin) + ", " +
                  std::to_string(slab.z_end) + ") are not in the grid");
    const std::size_t plane = request.grid.plane_size();
    run_range(request, slab,
              [&](Slab s, const float* data) {
                std::copy(data, data + plane * s.planes(),
                          out + plane * (s.z_begin - slab.z_begin));
              },
              {});
  }

  RunStats run(const PotentialRequest& request, const SlabSink& sink,
               const Progress& progress) override {
    return run_range(request, {0, request.grid.nz()}, sink, progress);
  }

 private:
  RunStats run_range(const PotentialRequest& request, Slab range, const SlabSink& sink,
                     const Progress& progress) {
    validate(request);
    if (!supports(request.method))
      throw Error("the cuda backend cannot compute the '" + method_name(request.method) +
                  "' method");
    // A whole-grid method solves the whole grid on each device it runs on: one device does it.
    const std::size_t count =
        describe(request.method).shape == MethodShape::whole_grid ? 1 : devices_.size();
    Handoff handoff(count);
    std::vector<DeviceResult> results(count);
    std::vector<std::unique_ptr<DeviceSlot>> slots(count);
    for (std::size_t d = 0; d < count; ++d) slots[d] = slots_.take(d);
    std::vector<std::thread> threads;
    RunStats stats;
    auto join_all = [&] {
      for (auto& t : threads) t.join();
      for (std::size_t d = 0; d < count; ++d) slots_.give(d, std::move(slots[d]));
    };
    try {
      for (std::size_t d = 0; d < count; ++d)
        threads.emplace_back(device_thread, devices_[d], d, count, std::cref(request), keep_setup,
                             std::ref(slots[d]), std::ref(handoff), std::ref(results[d]));
      const std::size_t plane_bytes = request.grid.plane_size() * sizeof(float);
      const auto [device_cap, plane_multiple] = handoff.wait_capacities();
      const std::int64_t cap = slab_planes(
          std::int64_t(std::min(slab_bytes, kSlabHostBytes) / plane_bytes),
          std::min({std::int64_t(slab_bytes / plane_bytes), device_cap, kMaxPlanesPerLaunch}),
          plane_multiple);
      const std::vector<Slab> slabs = plan_slabs(range, cap, std::int64_t(count), plane_multiple);
      handoff.set_plan(slabs);
      for (std::size_t s = 0; s < slabs.size(); ++s) {
        const float* data = handoff.wait_ready(s);
        const auto t0 = clock_type::now();
        sink(slabs[s], data);
        stats.sink_seconds += seconds_since(t0);
        handoff.consumed(s);
        if (progress) progress(double(slabs[s].z_end - range.z_begin) / double(range.planes()));
      }
    } catch (...) {
      handoff.abort();
      join_all();
      throw;
    }
    join_all();
    handoff.rethrow_if_failed();

    stats.device = "cuda:";
    for (const DeviceResult& r : results) {
      stats.device += (stats.devices.empty() ? " " : ", ") + r.stats.device;
      stats.setup_seconds = std::max(stats.setup_seconds, r.stats.setup_seconds);
      stats.compute_seconds = std::max(stats.compute_seconds, r.stats.compute_seconds);
      stats.overflow_seconds += r.host_seconds;
      stats.devices.push_back(r.stats);
      if (r.solver) stats.solver = r.solver;
    }
    return stats;
  }

  // The slot of a run on device 0 of devices_, taken for the run (or made) and given back after.
  struct SlotLoan {
    explicit SlotLoan(SlotPool& pool) : pool(pool), slot(pool.take(0)) {
      if (!slot) slot = std::make_unique<DeviceSlot>();
    }
    ~SlotLoan() { pool.give(0, std::move(slot)); }
    SlotLoan(const SlotLoan&) = delete;
    SlotLoan& operator=(const SlotLoan&) = delete;
    SlotPool& pool;
    std::unique_ptr<DeviceSlot> slot;
  };

  std::vector<int> devices_;
  SlotPool slots_;  // per device, kept between runs
};

}  // namespace

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::unique_ptr<Backend> make_cuda_backend(const std::vector<int>& gpus) {
  return std::make_unique<CudaBackend>(cuda::resolve_devices(gpus));
}

}  // namespace dcsgrid::engine
