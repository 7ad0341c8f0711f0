// Internal to the analysis layer: the GPU path of interpolate_many.
#pragma once
#ifdef DCSGRID_HAVE_CUDA
#include <cstddef>

#include "dcsgrid/prims/sparse.hpp"

namespace dcsgrid::analysis {

// out[c][row] = (A · map c)[row] for count maps of a.cols floats (host memory in and out). The
// matrix is uploaded once, the maps in groups that fit in a quarter of the free device memory,
// applied with prims' spmv_cuda (one map) or spmm_cuda.
void spmm_on_gpu(const prims::CsrMatrix& a, const float* maps, std::size_t count, float* out);

}  // namespace dcsgrid::analysis
#endif
