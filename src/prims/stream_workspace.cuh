// Temporary device memory from the stream-ordered allocator, for the GEMM and sparse kernels.
#pragma once
#include <cstddef>

#include "dcsgrid/core/cuda_support.hpp"

namespace dcsgrid::prims::detail {

// count elements allocated in stream order, freed in stream order when the object goes out of
// scope (also on an exception), so kernels queued before the free may still use it.
template <typename T>
class StreamWorkspace {
 public:
  StreamWorkspace(std::size_t count, cudaStream_t stream) : stream_(stream) {
    if (count)
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
