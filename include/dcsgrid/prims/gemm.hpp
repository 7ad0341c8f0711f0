// Dense float32 matrix product C = α·op(A)·op(B) + β·C, row-major, on the CPU and on CUDA.
// Map similarity (a Gram matrix of maps: C[m×m] = A[m×voxels]·Aᵀ) is the main user: call it with
// op_b = Op::transpose and the same pointer for a and b.
#pragma once
#include <cstdint>

#ifdef DCSGRID_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace dcsgrid::prims {

enum class Op { none, transpose };

// Row-major C[m×n] = α·op(A)·op(B) + β·C. op(A) is m×k, op(B) is k×n; leading dimensions are in
// elements: A is stored m×k (lda ≥ k) when op_a is none and k×m (lda ≥ m) when transposed, the
// same for B (k×n or n×k). When β = 0, C is written without being read (it may hold NaN). When
// k = 0 or α = 0 the product is taken as zero (A and B are not read). Throws dcsgrid::Error on
// negative sizes or leading dimensions that are too small. Multi-threaded (OpenMP).
void gemm_cpu(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
              const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
              float* c, std::int64_t ldc);

#ifdef DCSGRID_HAVE_CUDA
// The same on the GPU; a, b and c point to device memory. Asynchronous on stream (no host
// synchronisation). When the output has too few tiles to fill the GPU and k is large (k ≫ m·n,
// e.g. 64×64 outputs over 16M voxels), k is split across blocks whose partial products are then
// summed in a fixed order (deterministic); that path takes a temporary workspace of
// splits·m·n floats from the stream-ordered allocator (cudaMallocAsync). The first such call on
// a device raises the release threshold of its current pool to 64 MiB (unless already higher),
// so that freed workspace is reused by the next call instead of mapped again.
// Outputs with a side ≤ 64 whose operands are 16-byte aligned with leading dimensions a multiple
// of 4 (the Gram and tall-skinny products of map similarity) run on TF32 tensor cores at FP32
// accuracy: every element is split into two TF32 parts and three partial products are summed
// (3xTF32), each product's error at most 3·2^-22 of its size; the sums are rounded to nearest in
// FP32 every 32 values of k. There a NaN input gives NaN outputs, and an infinite input may give
// NaN where FP32 arithmetic would give ±inf. Every other shape uses FP32 fmaf. With a == b and
// op_b = transpose (a Gram matrix) the result is exactly symmetric on either path.
void gemm_cuda(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
               float* c, std::int64_t ldc, cudaStream_t stream = nullptr);
#endif

}  // namespace dcsgrid::prims
