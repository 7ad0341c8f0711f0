// Internal to the analysis layer: the Gram matrix's blocking and its GPU path.
#pragma once
#include <cstddef>
#include <vector>

namespace dcsgrid::analysis {

// Points per GEMM call of a Gram matrix: each block's float32 product is added into the result in
// double, so float round-off grows with the block, not with the whole map.
inline constexpr std::size_t kGramBlock = std::size_t(1) << 20;

#ifdef DCSGRID_HAVE_CUDA
// gram_matrix for maps in host memory: blocks of columns are copied to the device (2-D copies
// out of the row-major matrix) and multiplied there with prims' gemm_cuda.
std::vector<double> gram_on_gpu_from_host(const float* maps, std::size_t n_maps,
                                          std::size_t n_points);
#endif

}  // namespace dcsgrid::analysis
