// Argument checks shared by the CPU and CUDA GEMM entry points.
#pragma once
#include <cstdint>

#include "dcsgrid/prims/gemm.hpp"

namespace dcsgrid::prims::detail {

// Throws dcsgrid::Error, naming the argument, when a size is negative or a leading dimension is
// smaller than the stored matrix's row length.
void check_gemm_arguments(const char* function, Op op_a, Op op_b, std::int64_t m, std::int64_t n,
                          std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc);

}  // namespace dcsgrid::prims::detail
