// Gram matrices on the GPU with prims' gemm_cuda (its split-k path serves these wide products).
#include <algorithm>

#include "dcsgrid/analysis/similarity.hpp"
#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/prims/gemm.hpp"
#include "similarity_cuda.hpp"

namespace dcsgrid::analysis {

namespace {

// gram += A·Aᵀ for the n × k block A at d_block (leading dimension ld), via the float n × n
// product in d_product.
void add_block_product(const float* d_block, std::size_t ld, std::size_t n, std::size_t k,
                       cuda::DeviceBuffer<float>& d_product, std::vector<float>& product,
                       std::vector<double>& gram) {
  const auto m = std::int64_t(n);
  prims::gemm_cuda(prims::Op::none, prims::Op::transpose, m, m, std::int64_t(k), 1.0f, d_block,
                   std::int64_t(ld), d_block, std::int64_t(ld), 0.0f, d_product.data(), m);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cudaMemcpy(product.data(), d_product.data(), n * n * sizeof(float),
                                cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n * n; ++i) gram[i] += product[i];
}

}  // namespace

std::vector<double> gram_matrix_cuda(const float* device_maps, std::size_t n_maps,
                                     std::size_t n_points) {
  std::vector<double> gram(n_maps * n_maps, 0.0);
  if (n_maps == 0) return gram;
  cuda::DeviceBuffer<float> d_product(n_maps * n_maps);
  std::vector<float> product(n_maps * n_maps);
  for (std::size_t k0 = 0; k0 < n_points; k0 += kGramBlock)
    add_block_product(device_maps + k0, n_points, n_maps, std::min(kGramBlock, n_points - k0),
                      d_product, product, gram);
  return gram;
}

std::vector<double> gram_on_gpu_from_host(const float* maps, std::size_t n_maps,
                                          std::size_t n_points) {
  std::vector<double> gram(n_maps * n_maps, 0.0);
  if (n_maps == 0) return gram;
  const std::size_t block = std::min(kGramBlock, std::max<std::size_t>(n_points, 1));
  cuda::DeviceBuffer<float> d_block(n_maps * block), d_product(n_maps * n_maps);
  std::vector<float> product(n_maps * n_maps);
  for (std::size_t k0 = 0; k0 < n_points; k0 += block) {
    const std::size_t k = std::min(block, n_points - k0);
    DCSGRID_CUDA_CHECK(cudaMemcpy2D(d_block.data(), k * sizeof(float), maps + k0,
                                    n_points * sizeof(float), k * sizeof(float), n_maps,
                                    cudaMemcpyHostToDevice));
    add_block_product(d_block.data(), k, n_maps, k, d_product, product, gram);
  }
  return gram;
}

}  // namespace dcsgrid::analysis
