// NonFiniteSearch (cuda_device.hpp): one pass over the map, the lowest index of a value that is not
// finite kept by an atomic minimum.
#include <cstdint>
#include <limits>

#include "dcsgrid/engine/cuda_device.hpp"

namespace dcsgrid::engine {

namespace {

constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();  // every byte 0xff

__global__ void first_non_finite_kernel(const float* data, std::size_t count, unsigned long long* first) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    if (!isfinite(data[i])) {
      atomicMin(first, static_cast<unsigned long long>(i));
      return;  // this thread's later points have higher indices
    }
}

}  // namespace

void NonFiniteSearch::enqueue(const float* data, std::size_t count, cudaStream_t stream) {
  constexpr int kThreads = 256;
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(first_.data(), 0xff, sizeof(unsigned long long), stream));
  if (count > 0) {
    first_non_finite_kernel<<<cuda::grid_stride_blocks(std::int64_t(count), kThreads), kThreads, 0, stream>>>(
        data, count, first_.data());
    DCSGRID_CHECK_LAUNCH();
  }
  DCSGRID_CUDA_CHECK(
      cudaMemcpyAsync(copy_.data(), first_.data(), sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
}

std::optional<NonFiniteValue> NonFiniteSearch::result(const float* data, cudaStream_t stream) const {
  if (*copy_.data() == kNone) return std::nullopt;
  NonFiniteValue bad;
  bad.index = std::size_t(*copy_.data());
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(&bad.value, data + bad.index, sizeof(float), cudaMemcpyDeviceToHost, stream));
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  return bad;
}

}  // namespace dcsgrid::engine
