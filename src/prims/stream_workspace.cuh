// Temporary device memory from the stream-ordered allocator, for the GEMM and sparse kernels.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"

namespace dcsgrid::prims::detail {

// Freed workspace the device's pool keeps for the next call. CUDA's default release threshold
// is 0: the pool hands freed memory back to the driver at every synchronisation, and the next
// call's workspace is then mapped afresh while the GPU waits for its first kernel.
constexpr std::uint64_t kPoolKeptBytes = std::uint64_t(64) << 20;

// Raises the release threshold of `device`'s current pool to kPoolKeptBytes, once per device,
// unless the program has set a larger one.
inline void keep_pool_memory(int device) {
  static std::mutex mutex;
  static std::vector<bool> done;
  const std::lock_guard lock(mutex);
  if (static_cast<std::size_t>(device) >= done.size()) done.resize(device + 1, false);
  if (done[device]) return;
  cudaMemPool_t pool;
  DCSGRID_CUDA_CHECK(cudaDeviceGetMemPool(&pool, device));
  std::uint64_t threshold = 0;
  DCSGRID_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  if (threshold < kPoolKeptBytes) {
    threshold = kPoolKeptBytes;
    DCSGRID_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  }
  done[device] = true;
}

// count elements allocated in stream order, freed in stream order when the object goes out of
// scope (also on an exception), so kernels queued before the free may still use it.
template <typename T>
class StreamWorkspace {
 public:
  StreamWorkspace(std::size_t count, cudaStream_t stream) : stream_(stream) {
    if (!count) return;
    int device = 0;
    DCSGRID_CUDA_CHECK(cudaGetDevice(&device));
    keep_pool_memory(device);
    DCSGRID_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&data_), count * sizeof(T), stream));
  }
  ~StreamWorkspace() {
    if (data_) cudaFreeAsync(data_, stream_);
  }
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;
  T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace dcsgrid::prims::detail
