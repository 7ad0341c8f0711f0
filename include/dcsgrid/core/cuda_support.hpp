// Checked CUDA calls and an owning device buffer, for every CUDA source of the project.
#pragma once
#ifdef DCSGRID_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::cuda {

[[noreturn]] inline void fail(cudaError_t err, const char* what, const char* file, int line) {
  throw Error(std::string("CUDA error in ") + what + " (" + file + ":" + std::to_string(line) +
              "): " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

}  // namespace dcsgrid::cuda

// Wraps a CUDA runtime call; throws dcsgrid::Error with the call, place and CUDA's message.
#define DCSGRID_CUDA_CHECK(call)                                                  \
  do {                                                                            \
    const cudaError_t dcsgrid_err_ = (call);                                      \
    if (dcsgrid_err_ != cudaSuccess)                                              \
      ::dcsgrid::cuda::fail(dcsgrid_err_, #call, __FILE__, __LINE__);             \
  } while (0)
// After a kernel launch: catches launch-configuration errors at once.
#define DCSGRID_CHECK_LAUNCH() DCSGRID_CUDA_CHECK(cudaGetLastError())

namespace dcsgrid::cuda {

// Blocks of `threads_per_block` threads that cover `items` items, one thread each (a 1-D launch).
inline unsigned blocks_for(std::int64_t items, int threads_per_block) {
  return unsigned((items + threads_per_block - 1) / threads_per_block);
}

// Blocks for a grid-stride loop over `items` on the current device: blocks_for, at most 8 a
// multiprocessor (each thread then takes several items).
inline unsigned grid_stride_blocks(std::int64_t items, int threads_per_block) {
  int device = 0, sms = 0;
  DCSGRID_CUDA_CHECK(cudaGetDevice(&device));
  DCSGRID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::min(blocks_for(items, threads_per_block), unsigned(sms) * 8);
}

// Makes `device` current for a scope, and the one current before it again after.
class OnDevice {
 public:
  explicit OnDevice(int device) {
    DCSGRID_CUDA_CHECK(cudaGetDevice(&previous_));
    DCSGRID_CUDA_CHECK(cudaSetDevice(device));
  }
  ~OnDevice() { cudaSetDevice(previous_); }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int previous_ = 0;
};

// Owns count elements of device memory (cudaMalloc, never managed memory).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) { resize(count); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Reallocates (contents lost) when count differs from the current size.
  void resize(std::size_t count) {
    if (count == n_) return;
    release();
    if (count) DCSGRID_CUDA_CHECK(cudaMalloc(&ptr_, count * sizeof(T)));
    n_ = count;
  }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

 private:
  void release() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    n_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

// Copies host into a new device buffer on stream and waits for the copy, so host may go out of
// scope at once (set-up, not hot paths).
template <typename T>
DeviceBuffer<T> upload(const std::vector<T>& host, cudaStream_t stream) {
  DeviceBuffer<T> d(host.size());
  if (!host.empty()) {
    DCSGRID_CUDA_CHECK(cudaMemcpyAsync(d.data(), host.data(), d.bytes(), cudaMemcpyHostToDevice, stream));
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return d;
}

}  // namespace dcsgrid::cuda
#endif  // DCSGRID_HAVE_CUDA
