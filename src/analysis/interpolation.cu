// GPU path of interpolate_many: the interpolation matrix on the device, maps streamed through in
// groups, prims' SpMV/SpMM kernels.
#include <algorithm>

#include "dcsgrid/core/cuda_support.hpp"
#include "interpolation_cuda.hpp"

namespace dcsgrid::analysis {

void spmm_on_gpu(const prims::CsrMatrix& a, const float* maps, std::size_t count, float* out) {
  const std::size_t rows = std::size_t(a.rows), cols = std::size_t(a.cols);
  const prims::DeviceCsr device_matrix(a);
  std::size_t free_bytes = 0, total_bytes = 0;
  DCSGRID_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t per_map = (rows + cols) * sizeof(float);
  const std::size_t group = std::clamp<std::size_t>(free_bytes / 4 / per_map, 1, count);
  cuda::DeviceBuffer<float> x(group * cols), y(group * rows);
  for (std::size_t first = 0; first < count; first += group) {
    const std::size_t n = std::min(group, count - first);
    DCSGRID_CUDA_CHECK(cudaMemcpy(x.data(), maps + first * cols, n * cols * sizeof(float),
                                  cudaMemcpyHostToDevice));
    if (n == 1)
      prims::spmv_cuda(device_matrix, x.data(), y.data());
    else
      prims::spmm_cuda(device_matrix, x.data(), std::int64_t(cols), std::int64_t(n), y.data(),
                       std::int64_t(rows));
    DCSGRID_CHECK_LAUNCH();
    DCSGRID_CUDA_CHECK(cudaMemcpy(out + first * rows, y.data(), n * rows * sizeof(float),
                                  cudaMemcpyDeviceToHost));
  }
}

}  // namespace dcsgrid::analysis
