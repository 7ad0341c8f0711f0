// Sparse float32 matrices (CSR, ELL, hybrid ELL+COO) times dense vectors, on the CPU and on CUDA.
// Potential-at-points is the main user: interpolation weights as a rows = points, cols = voxels
// matrix (8 nonzeros a row for trilinear), applied to one map (SpMV) or to many (SpMM).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#ifdef DCSGRID_HAVE_CUDA
#include <cuda_runtime.h>

#include "dcsgrid/core/cuda_support.hpp"
#endif

namespace dcsgrid::prims {

// Compressed sparse rows. Row r holds entries [row_offsets[r], row_offsets[r+1]); columns need
// not be sorted within a row, and explicit zeros are kept. rows and cols must be < 2^31.
struct CsrMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> row_offsets;  // rows + 1 entries, row_offsets[0] = 0
  std::vector<std::int32_t> columns;
  std::vector<float> values;
  std::int64_t nnz() const { return static_cast<std::int64_t>(values.size()); }
};

// ELLPACK: every row padded to `width` entries, stored column-major (entry e of row r at
// e*rows + r) so that consecutive rows are adjacent in memory. Padding has column -1, value 0
// (so an explicit zero of the matrix stays distinguishable from padding).
struct EllMatrix {
  std::int64_t rows = 0, cols = 0, width = 0;
  std::vector<std::int32_t> columns;
  std::vector<float> values;
};

// The first ell.width entries of each row in ELL, the rest in COO sorted by row.
struct HybridMatrix {
  EllMatrix ell;
  std::vector<std::int32_t> coo_rows, coo_columns;
  std::vector<float> coo_values;
};

// Throw dcsgrid::Error naming the first problem: sizes that disagree, offsets that decrease or
// do not end at nnz, a column outside [0, cols) (ELL: or -1 padding), COO rows out of order,
// dimensions ≥ 2^31. O(nnz). Conversions and uploads call them; the products check sizes only.
void check(const CsrMatrix& a);
void check(const EllMatrix& a);
void check(const HybridMatrix& a);

// ELL with width = the longest row.
EllMatrix csr_to_ell(const CsrMatrix& a);
// ell_width < 0 picks the width with choose_ell_width; the entries past it go to COO.
HybridMatrix csr_to_hybrid(const CsrMatrix& a, std::int64_t ell_width = -1);
// The largest width w such that at least max(rows/3, min(rows, 4096)) rows have ≥ w entries
// (Bell & Garland's rule): dense enough that ELL padding stays cheap.
std::int64_t choose_ell_width(const CsrMatrix& a);
// Back to CSR, entries of a row in stored order (ELL entries first, then COO); padding dropped.
CsrMatrix ell_to_csr(const EllMatrix& a);
CsrMatrix hybrid_to_csr(const HybridMatrix& a);

// y = A·x (x has a.cols entries, y has a.rows; y is overwritten, never read). Multi-threaded.
void spmv_cpu(const CsrMatrix& a, const float* x, float* y);
void spmv_cpu(const EllMatrix& a, const float* x, float* y);
void spmv_cpu(const HybridMatrix& a, const float* x, float* y);
// Y = A·X for `count` right-hand sides: X column-major (column j at x + j*ldx, ldx ≥ a.cols),
// Y column-major (column j at y + j*ldy, ldy ≥ a.rows).
void spmm_cpu(const CsrMatrix& a, const float* x, std::int64_t ldx, std::int64_t count, float* y,
              std::int64_t ldy);

#ifdef DCSGRID_HAVE_CUDA
// The CUDA row blocks of a matrix whose rows are not alike, in row order: rows [row_begin,
// row_end) limited to entries [entry_begin, entry_end), at most 2048 entries and 256 rows. A row
// of more than 2048 entries is alone in consecutive 2048-entry pieces whose sums go to
// consecutive slots `partial` (−1: whole rows). Checks a; exposed for tests.
struct CsrRowBlock {
  std::int64_t entry_begin = 0, entry_end = 0;
  std::int32_t row_begin = 0, row_end = 0, partial = -1;
};
std::vector<CsrRowBlock> csr_row_blocks(const CsrMatrix& a);

// A CSR matrix in device memory with the kernels' work plan (lane groups when rows are alike,
// else row blocks), both built once here. Offsets are stored as 32-bit when nnz < 2^31.
class DeviceCsr {
 public:
  DeviceCsr();
  explicit DeviceCsr(const CsrMatrix& a);  // checks a (see check), uploads it synchronously
  DeviceCsr(DeviceCsr&&) noexcept;
  DeviceCsr& operator=(DeviceCsr&&) noexcept;
  ~DeviceCsr();

  std::int64_t rows() const;
  std::int64_t cols() const;
  std::int64_t nnz() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// An ELL matrix in device memory (same layout as EllMatrix).
struct DeviceEll {
  DeviceEll() = default;
  explicit DeviceEll(const EllMatrix& a);
  std::int64_t rows = 0, cols = 0, width = 0;
  cuda::DeviceBuffer<std::int32_t> columns;
  cuda::DeviceBuffer<float> values;
};

// A hybrid matrix in device memory; COO entries sorted by row.
struct DeviceHybrid {
  DeviceHybrid() = default;
  explicit DeviceHybrid(const HybridMatrix& a);
  DeviceEll ell;
  std::int64_t coo_count = 0;
  cuda::DeviceBuffer<std::int32_t> coo_rows, coo_columns;
  cuda::DeviceBuffer<float> coo_values;
};

// y = A·x with device pointers, asynchronous on stream. The CSR and ELL results do not depend on
// the launch (fixed summation order); the hybrid's COO part adds with atomics, so rows that
// overflow into COO can differ in the last bits between runs. A CSR matrix with rows cut into
// pieces takes a workspace of one float per piece (and right-hand side) from the stream-ordered
// pool, as gemm_cuda's split-k path does (see gemm.hpp for the pool's release threshold).
void spmv_cuda(const DeviceCsr& a, const float* d_x, float* d_y, cudaStream_t stream = nullptr);
void spmv_cuda(const DeviceEll& a, const float* d_x, float* d_y, cudaStream_t stream = nullptr);
void spmv_cuda(const DeviceHybrid& a, const float* d_x, float* d_y, cudaStream_t stream = nullptr);
// Y = A·X for count right-hand sides, column-major as spmm_cpu; the matrix is read once per four
// right-hand sides.
void spmm_cuda(const DeviceCsr& a, const float* d_x, std::int64_t ldx, std::int64_t count,
               float* d_y, std::int64_t ldy, cudaStream_t stream = nullptr);
#endif

}  // namespace dcsgrid::prims
