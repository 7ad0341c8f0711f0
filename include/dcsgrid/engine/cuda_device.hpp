// What the CUDA engines share (CUDA builds only): device selection, RAII streams, events and pinned
// buffers, and DeviceMethod, the interface through which a method (direct, cutoff) plugs into the
// CUDA backend's slab pipeline.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/gpu_ids.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::cuda {

// "GPU 1 (NVIDIA H100 80GB HBM3)", with the user's number for the GPU (core/gpu_ids.hpp); never
// throws. Kept once a device: cudaGetDeviceProperties reads every attribute, and a batch labels
// every frame's run.
inline std::string device_label(int device) {
  static std::mutex mutex;
  static std::map<int, std::string> labels;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = labels.find(device); it != labels.end()) return it->second;
  cudaDeviceProp prop{};
  std::string label = "GPU " + std::to_string(user_gpu_id(device));
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) return labels[device] = label + " (" + prop.name + ")";
  cudaGetLastError();
  return label;
}

// The device ids to run on: every visible device when ids is empty. Throws Error for ids that do
// not exist or repeat, and when no device is visible.
inline std::vector<int> resolve_devices(const std::vector<int>& ids) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    count = 0;
  }
  // Narrowed to --gpus, CUDA sees the GPUs listed up to the first that does not exist.
  const bool narrowed = visible_gpus_narrowed();
  if (count == 0 && !narrowed) throw Error("no usable CUDA device was found");
  const std::string visible = narrowed ? " on this machine"
                                       : " (" + std::to_string(count) + " CUDA device" +
                                             (count > 1 ? "s: 0-" + std::to_string(count - 1) : ": 0") + ")";
  if (ids.empty()) {
    std::vector<int> all(count);
    for (int d = 0; d < count; ++d) all[d] = d;
    return all;
  }
  require_valid_gpu_ids(ids);
  for (const int id : ids)
    if (id >= count) throw Error("--gpus: there is no GPU " + std::to_string(user_gpu_id(id)) + visible);
  return ids;
}

// A stream that does not synchronise with the legacy default stream.
class Stream {
 public:
  enum class Priority { normal, highest };
  Stream() { DCSGRID_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  // highest: the device's greatest priority, whose blocks are scheduled before those of streams
  // already queued (small, latency-bound work beside other kernels).
  explicit Stream(Priority priority) {
    int least = 0, greatest = 0;
    if (priority == Priority::highest) DCSGRID_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    DCSGRID_CUDA_CHECK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, greatest));
  }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const { DCSGRID_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  // cudaEventDefault for timing; cudaEventDisableTiming | cudaEventBlockingSync for waiting
  // without spinning a core.
  explicit Event(unsigned flags = cudaEventDefault) {
    DCSGRID_CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags));
  }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t stream) { DCSGRID_CUDA_CHECK(cudaEventRecord(e_, stream)); }
  void synchronize() const { DCSGRID_CUDA_CHECK(cudaEventSynchronize(e_)); }
  // Seconds from start to this event; both recorded and complete.
  double seconds_since(const Event& start) const {
    float ms = 0;
    DCSGRID_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

// Page-locked host memory (cudaMallocHost), for asynchronous copies.
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count) : n_(count) {
    if (count) DCSGRID_CUDA_CHECK(cudaMallocHost(&ptr_, count * sizeof(T)));
  }
  ~PinnedBuffer() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(n_, o.n_);
    return *this;
  }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return n_; }

 private:
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace dcsgrid::cuda

namespace dcsgrid::engine {

// A DeviceMap (engine.hpp) of its own memory, on the device current when it is made.
class CudaDeviceMap final : public DeviceMap {
 public:
  explicit CudaDeviceMap(std::size_t points) : buffer_(points) {
    DCSGRID_CUDA_CHECK(cudaGetDevice(&device_));
  }
  int device() const override { return device_; }
  const float* data() const override { return buffer_.data(); }
  float* data() { return buffer_.data(); }
  std::size_t points() const override { return buffer_.size(); }
  void copy_to_host(std::span<float> out) const override {
    if (out.size() > points())
      throw Error("CudaDeviceMap::copy_to_host: " + std::to_string(out.size()) + " values asked of a map of " +
                  std::to_string(points()));
    const cuda::OnDevice on(device_);
    // A blocking wait: a batch's frame workers copy a map each frame, beside the reader and writer.
    cuda::Event copied(cudaEventDisableTiming | cudaEventBlockingSync);
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(out.data(), data(), out.size_bytes(), cudaMemcpyDeviceToHost, cudaStreamPerThread));
    copied.record(cudaStreamPerThread);
    copied.synchronize();
  }

 private:
  int device_ = 0;
  cuda::DeviceBuffer<float> buffer_;
};

// The first value (by index) of a map in device memory that is not finite: enqueue() the search on
// a stream, synchronize the stream, then result(). Its word on the device and the pinned copy stay
// for the next map, so that a frame's search allocates nothing (cudaFree would wait for the whole
// device, every worker's frames on it).
class NonFiniteSearch {
 public:
  NonFiniteSearch() : first_(1), copy_(1) {}
  void enqueue(const float* data, std::size_t count, cudaStream_t stream);
  // After the stream's work: the first non-finite value of that map (its value copied back on
  // stream, waiting for it), if any.
  std::optional<NonFiniteValue> result(const float* data, cudaStream_t stream) const;

 private:
  cuda::DeviceBuffer<unsigned long long> first_;
  cuda::PinnedBuffer<unsigned long long> copy_;
};

// How a method lays out a slab in device memory: rows of pitch_x floats, rows_per_plane rows per
// plane (pitch_x >= nx, rows_per_plane >= ny: kernels pad so that they need no bounds checks).
struct SlabLayout {
  std::int64_t pitch_x = 0;
  std::int64_t rows_per_plane = 0;
  // Slabs whose bounds are multiples of this (planes of the whole grid) compute no plane twice.
  std::int64_t plane_multiple = 1;
  std::size_t plane_bytes() const { return std::size_t(pitch_x) * rows_per_plane * sizeof(float); }
};

// One method (direct, cutoff) prepared on one device for one request. The CUDA backend creates one
// per device, with that device current, from the device's own host thread; its uploads go on the
// stream it is given. The backend owns slab planning, output buffers, copies and the sink.
// Call order on a device with slabs s0, s1, s2, ... (always the same compute stream, two output
// buffers used in turn): enqueue(s0), enqueue(s1), finish_on_host(s0), enqueue(s2),
// finish_on_host(s1), ... — the next slab is enqueued before the previous one is finished on the
// host, so the GPU never waits for host work; finish_on_host calls come in slab order.
class DeviceMethod {
 public:
  virtual ~DeviceMethod() = default;
  virtual SlabLayout layout() const = 0;
  // Enqueues planes [slab.z_begin, slab.z_end) of the request's grid into out (device memory in
  // layout(), slab.planes() planes) on stream.
  virtual void enqueue(Slab slab, float* out, cudaStream_t stream) = 0;
  // Host work on the slab once it is copied (x fastest, unpadded), such as a CPU pass over atoms
  // the device could not take. Runs on the device's host thread; returns the seconds it took
  // (reported as RunStats::overflow_seconds).
  virtual double finish_on_host(Slab /*slab*/, float* /*host*/) { return 0; }
  // True when finish_on_host changes the slab: it must then reach the host (no run_on_device).
  // Otherwise finish_on_host may be given no slab (host nullptr), for its bookkeeping.
  virtual bool finishes_on_host() const { return false; }
  // What an iterative method tells about its solve (pb), copied into RunStats.
  virtual std::optional<SolverReport> solver_report() const { return {}; }
  // The constructor's set-up, stage by stage, for methods whose set-up is a large part of a run.
  virtual std::vector<StageTime> setup_stages() const { return {}; }
};

// The method for request.method, on the current device. Defined in cuda_backend.cu: a new method
// adds its factory to kDeviceMethods there. A whole-grid method (MethodShape::whole_grid) solves
// in its constructor, after checking that the solve fits the device's free memory, and its
// enqueue copies planes of the solution. cache: set-up kept between the runs of one device and
// stream (MethodCache; nullptr: none), which the periodic methods use.
class MethodCache;
std::unique_ptr<DeviceMethod> make_device_method(const PotentialRequest& request,
                                                 cudaStream_t stream, MethodCache* cache = nullptr);

}  // namespace dcsgrid::engine
