// CUDA sparse products.
//
// CSR: rows are planned once, at upload. When rows are alike (none longer than twice the mean,
// at most 32 entries), groups of G lanes take one row each, in order, G the power of two that
// covers the mean length (vector CSR with sub-warp groups). Otherwise short rows (≤ 32 entries)
// go to row blocks: runs of consecutive short rows holding at most 2048 entries and 256 rows,
// whose entries a block loads into shared memory with fully coalesced reads before each thread
// sums one row from there (the CSR-stream idea of CSR-Adaptive, Greathouse & Daga 2014). Row
// blocks replaced per-length row bins, whose sub-warp groups read each row's few entries as its
// own scattered, partly used sectors: 58% of cuSPARSE on a power-law matrix on an H100. Longer
// rows are cut into chunks of ≤ 1024 entries, one warp a chunk; rows of several chunks get their
// chunk sums added in order by a second kernel.
// ELL: one thread a row over the column-major entries. Hybrid: ELL, then the COO entries summed
// by a warp-segmented scan and added to y with one atomic per row segment.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/prims/sparse.hpp"
#include "stream_workspace.cuh"

namespace dcsgrid::prims {
namespace {

constexpr int kBlock = 256;              // threads a block, every sparse kernel
constexpr std::int64_t kShortMax = 32;   // longest row handled by a sub-warp group
constexpr std::int64_t kChunk = 1024;    // entries of one long-row chunk (one warp)
constexpr int kRhsPerPass = 4;           // SpMM right-hand sides sharing one read of the matrix
constexpr int kRowTile = 2048;           // entries of one row block (8 a thread)

template <typename T>
void upload(cuda::DeviceBuffer<T>& dst, const T* src, std::size_t count) {
  dst.resize(count);
  if (count) DCSGRID_CUDA_CHECK(cudaMemcpy(dst.data(), src, count * sizeof(T), cudaMemcpyHostToDevice));
}
template <typename T>
void upload(cuda::DeviceBuffer<T>& dst, const std::vector<T>& src) {
  upload(dst, src.data(), src.size());
}

// Smallest power of two ≥ length, in [1, 32].
int lanes_for(std::int64_t length) {
  int lanes = 1;
  while (lanes < length && lanes < 32) lanes *= 2;
  return lanes;
}

// The work of csr_kernel: rows in order for groups of `lanes` lanes (rows alike), or long-row
// chunks (lanes = 0). Row blocks run in a kernel of their own.
struct WorkClass {
  int lanes = 0;
  std::int64_t items = 0;  // rows or chunks
};

struct PlanView {
  WorkClass work;
  const std::int32_t* chunk_rows = nullptr;
  const std::int64_t* chunk_begin = nullptr;
  const std::int64_t* chunk_end = nullptr;
  const std::uint8_t* chunk_whole = nullptr;  // 1: the chunk is its whole row, write y directly
  float* partials = nullptr;                  // [chunk][right-hand side] for split rows
};

template <typename Offset>
struct CsrView {
  const Offset* __restrict__ offsets;
  const std::int32_t* __restrict__ columns;
  const float* __restrict__ values;
};

// Right-hand sides of one pass: columns [first, first + here) of X and Y, `total` in all.
struct RhsView {
  const float* x;
  std::int64_t ldx;
  float* y;
  std::int64_t ldy;
  int total;
};

int items_per_block(int lanes) { return lanes == 0 ? kBlock / 32 : kBlock / lanes; }

// acc[j] += Σ over entries [begin, end), lane-strided by STRIDE, of value·x_j[column].
template <int STRIDE, int RHS>
__device__ inline void accumulate(const std::int32_t* __restrict__ columns,
                                  const float* __restrict__ values, std::int64_t begin,
                                  std::int64_t end, const float* __restrict__ x, std::int64_t ldx,
                                  int here, float (&acc)[RHS]) {
#pragma unroll 4
  for (std::int64_t i = begin; i < end; i += STRIDE) {
    const std::int32_t c = __ldg(columns + i);
    const float v = __ldg(values + i);
#pragma unroll
    for (int j = 0; j < RHS; ++j)
      if (j < here) acc[j] = fmaf(v, __ldg(x + c + j * ldx), acc[j]);
  }
}

template <int LANES, int RHS>
__device__ inline void group_sum(unsigned mask, float (&acc)[RHS]) {
#pragma unroll
  for (int offset = LANES / 2; offset > 0; offset /= 2)
#pragma unroll
    for (int j = 0; j < RHS; ++j) acc[j] += __shfl_xor_sync(mask, acc[j], offset);
}

// The lanes of this thread's group within its warp.
template <int LANES>
__device__ inline unsigned group_mask(int tid) {
  if constexpr (LANES == 32) return 0xffffffffu;
  else return ((1u << LANES) - 1u) << (tid % 32 / LANES * LANES);
}

// Rows in order, a group of LANES lanes each.
template <int LANES, int RHS, typename Offset>
__device__ void short_rows(const CsrView<Offset>& a, const WorkClass& wc, std::int64_t block,
                           const RhsView& v, int first, int here) {
  const int tid = threadIdx.x, lane = tid % LANES;
  const std::int64_t row = block * (kBlock / LANES) + tid / LANES;
  if (row >= wc.items) return;  // whole groups leave together
  float acc[RHS] = {};
  accumulate<LANES, RHS>(a.columns, a.values, std::int64_t(__ldg(a.offsets + row)) + lane,
                         std::int64_t(__ldg(a.offsets + row + 1)), v.x + first * v.ldx, v.ldx,
                         here, acc);
  group_sum<LANES, RHS>(group_mask<LANES>(tid), acc);
  if (lane == 0)
#pragma unroll
    for (int j = 0; j < RHS; ++j)
      if (j < here) v.y[row + (first + j) * v.ldy] = acc[j];
}

// Long-row chunks, a warp each.
template <int RHS, typename Offset>
__device__ void long_chunks(const CsrView<Offset>& a, const PlanView& plan, const WorkClass& wc,
                            std::int64_t block, const RhsView& v, int first, int here) {
  const int lane = threadIdx.x % 32;
  const std::int64_t item = block * (kBlock / 32) + threadIdx.x / 32;
  if (item >= wc.items) return;
  float acc[RHS] = {};
  accumulate<32, RHS>(a.columns, a.values, plan.chunk_begin[item] + lane, plan.chunk_end[item],
                      v.x + first * v.ldx, v.ldx, here, acc);
  group_sum<32, RHS>(0xffffffffu, acc);
  if (lane != 0) return;
  const std::int64_t row = plan.chunk_rows[item];
  const bool whole = plan.chunk_whole[item] != 0;
#pragma unroll
  for (int j = 0; j < RHS; ++j) {
    if (j >= here) break;
    if (whole) v.y[row + (first + j) * v.ldy] = acc[j];
    else plan.partials[item * v.total + first + j] = acc[j];
  }
}

// Row blocks, one a block: the block's entries (contiguous, ≤ kRowTile) are read with coalesced
// loads, 8 independent ones a thread, and their products value·x[column] staged in shared
// memory; then thread t sums row begin + t from there, entry by entry (a fixed order). A kernel
// of its own: its shared memory would otherwise shrink the L1 cache of the lane-group kernel,
// whose gathers from x live on it.
template <int RHS, typename Offset>
__global__ void __launch_bounds__(kBlock) row_block_kernel(CsrView<Offset> a,
                                                            const std::int32_t* __restrict__ begin,
                                                            const std::int32_t* __restrict__ end,
                                                            RhsView v) {
  __shared__ float products[RHS][kRowTile];
  const int first = blockIdx.y * RHS, here = min(RHS, v.total - first);
  const float* x = v.x + first * v.ldx;
  const std::int64_t r0 = __ldg(begin + blockIdx.x), r1 = __ldg(end + blockIdx.x);
  const std::int64_t e0 = __ldg(a.offsets + r0), e1 = __ldg(a.offsets + r1);
#pragma unroll
  for (int k = 0; k < kRowTile / kBlock; ++k) {
    const int local = k * kBlock + threadIdx.x;
    if (e0 + local < e1) {
      const std::int32_t c = __ldg(a.columns + e0 + local);
      const float value = __ldg(a.values + e0 + local);
#pragma unroll
      for (int j = 0; j < RHS; ++j)
        if (j < here) products[j][local] = value * __ldg(x + c + j * v.ldx);
    }
  }
  __syncthreads();
  const std::int64_t row = r0 + threadIdx.x;
  if (row >= r1) return;
  const int lo = int(__ldg(a.offsets + row) - e0), hi = int(__ldg(a.offsets + row + 1) - e0);
#pragma unroll
  for (int j = 0; j < RHS; ++j) {
    if (j >= here) break;
    float sum = 0.0f;
    for (int e = lo; e < hi; ++e) sum += products[j][e];
    v.y[row + (first + j) * v.ldy] = sum;
  }
}

template <int RHS, typename Offset>
__global__ void __launch_bounds__(kBlock) csr_kernel(CsrView<Offset> a, PlanView plan, RhsView v) {
  const int first = blockIdx.y * RHS, here = min(RHS, v.total - first);
  const WorkClass& wc = plan.work;
  const std::int64_t local = blockIdx.x;
  switch (wc.lanes) {
    case 0: return long_chunks<RHS>(a, plan, wc, local, v, first, here);
    case 1: return short_rows<1, RHS>(a, wc, local, v, first, here);
    case 2: return short_rows<2, RHS>(a, wc, local, v, first, here);
    case 4: return short_rows<4, RHS>(a, wc, local, v, first, here);
    case 8: return short_rows<8, RHS>(a, wc, local, v, first, here);
    case 16: return short_rows<16, RHS>(a, wc, local, v, first, here);
    default: return short_rows<32, RHS>(a, wc, local, v, first, here);
  }
}

// y[row_j] = Σ of the row's chunk partials, in chunk order; one thread per (row, rhs).
__global__ void sum_chunks_kernel(const std::int32_t* __restrict__ rows,
                                  const std::int64_t* __restrict__ first_chunk, std::int64_t count,
                                  const float* __restrict__ partials, int total, float* y,
                                  std::int64_t ldy) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= count * total) return;
  const std::int64_t s = t / total;
  const int j = int(t % total);
  float sum = 0.0f;
  for (std::int64_t c = first_chunk[s]; c < first_chunk[s + 1]; ++c) sum += partials[c * total + j];
  y[rows[s] + j * ldy] = sum;
}

__global__ void __launch_bounds__(kBlock) ell_kernel(std::int64_t rows, std::int64_t width,
                                                     const std::int32_t* __restrict__ columns,
                                                     const float* __restrict__ values,
                                                     const float* __restrict__ x, float* y) {
  const std::int64_t r = std::int64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (r >= rows) return;
  float acc = 0.0f;
#pragma unroll 4
  for (std::int64_t e = 0; e < width; ++e) {
    const std::int32_t c = __ldg(columns + e * rows + r);
    if (c >= 0) acc = fmaf(__ldg(values + e * rows + r), __ldg(x + c), acc);
  }
  y[r] = acc;
}

// y[row] += Σ of the row's COO entries (sorted by row): a warp's 32 entries are summed per row
// by a segmented scan; the last lane of each row segment adds it with one atomic.
__global__ void __launch_bounds__(kBlock) coo_add_kernel(std::int64_t count,
                                                         const std::int32_t* __restrict__ rows,
                                                         const std::int32_t* __restrict__ columns,
                                                         const float* __restrict__ values,
                                                         const float* __restrict__ x, float* y) {
  const std::int64_t i = std::int64_t(blockIdx.x) * kBlock + threadIdx.x;
  const int lane = threadIdx.x % 32;
  const bool valid = i < count;
  const std::int32_t row = valid ? __ldg(rows + i) : -1;
  float sum = valid ? __ldg(values + i) * __ldg(x + __ldg(columns + i)) : 0.0f;
  // Rows are sorted, so an equal row d lanes back means one segment all the way.
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const float other = __shfl_up_sync(0xffffffffu, sum, d);
    const std::int32_t other_row = __shfl_up_sync(0xffffffffu, row, d);
    if (lane >= d && other_row == row) sum += other;
  }
  const std::int32_t next_row = __shfl_down_sync(0xffffffffu, row, 1);
  if (valid && (lane == 31 || next_row != row)) atomicAdd(y + row, sum);
}

unsigned blocks_for(std::int64_t threads) {
  const std::int64_t blocks = (threads + kBlock - 1) / kBlock;
  if (blocks > 0x7fffffff) throw Error("sparse CUDA kernel: too many rows for one grid");
  return static_cast<unsigned>(blocks);
}

}  // namespace

struct DeviceCsr::Impl {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  bool offsets_32 = true;
  cuda::DeviceBuffer<std::int32_t> offsets32;
  cuda::DeviceBuffer<std::int64_t> offsets64;
  cuda::DeviceBuffer<std::int32_t> columns;
  cuda::DeviceBuffer<float> values;
  // The plan: lane groups or chunks, row blocks, rows split over several chunks.
  WorkClass work;
  std::int64_t work_blocks = 0;
  std::int64_t row_block_count = 0;
  cuda::DeviceBuffer<std::int32_t> row_block_begin, row_block_end;
  std::int64_t chunk_count = 0;
  cuda::DeviceBuffer<std::int32_t> chunk_rows;
  cuda::DeviceBuffer<std::int64_t> chunk_begin, chunk_end;
  cuda::DeviceBuffer<std::uint8_t> chunk_whole;
  std::int64_t split_count = 0;
  cuda::DeviceBuffer<std::int32_t> split_rows;
  cuda::DeviceBuffer<std::int64_t> split_first_chunk;

  void plan(const CsrMatrix& a);
  void set_work(int lanes, std::int64_t items) {
    work = {lanes, items};
    const int per_block = items_per_block(lanes);
    work_blocks = (items + per_block - 1) / per_block;
  }
};

void DeviceCsr::Impl::plan(const CsrMatrix& a) {
  auto length = [&](std::int64_t r) { return a.row_offsets[r + 1] - a.row_offsets[r]; };
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < rows; ++r) longest = std::max(longest, length(r));
  const int mean_lanes = lanes_for(rows ? (nnz + rows - 1) / rows : 0);
  if (longest <= std::min<std::int64_t>(kShortMax, 2 * mean_lanes)) {
    // Rows alike: every row, in order, to groups sized from the mean.
    set_work(mean_lanes, rows);
    return;
  }
  // Runs of short rows into row blocks; long rows into chunks (rows of several chunks listed for
  // the ordered sum).
  std::vector<std::int32_t> h_block_begin, h_block_end, h_chunk_rows, h_split_rows;
  std::vector<std::int64_t> h_chunk_begin, h_chunk_end, h_split_first;
  std::vector<std::uint8_t> h_chunk_whole;
  std::int64_t block_first = -1, block_entries = 0;  // the row block being filled
  const auto close_block = [&](std::int64_t end) {
    if (block_first >= 0) {
      h_block_begin.push_back(static_cast<std::int32_t>(block_first));
      h_block_end.push_back(static_cast<std::int32_t>(end));
    }
    block_first = -1;
    block_entries = 0;
  };
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t len = length(r);
    if (len <= kShortMax) {
      if (block_first >= 0 && (block_entries + len > kRowTile || r - block_first == kBlock))
        close_block(r);
      if (block_first < 0) block_first = r;
      block_entries += len;
      continue;
    }
    close_block(r);
    const std::int64_t pieces = (len + kChunk - 1) / kChunk;
    if (pieces > 1) {
      h_split_rows.push_back(static_cast<std::int32_t>(r));
      h_split_first.push_back(static_cast<std::int64_t>(h_chunk_rows.size()));
    }
    for (std::int64_t p = 0; p < pieces; ++p) {
      h_chunk_rows.push_back(static_cast<std::int32_t>(r));
      h_chunk_begin.push_back(a.row_offsets[r] + p * kChunk);
      h_chunk_end.push_back(std::min(a.row_offsets[r + 1], a.row_offsets[r] + (p + 1) * kChunk));
      h_chunk_whole.push_back(pieces == 1);
    }
  }
  close_block(rows);
  h_split_first.push_back(static_cast<std::int64_t>(h_chunk_rows.size()));
  chunk_count = static_cast<std::int64_t>(h_chunk_rows.size());
  split_count = static_cast<std::int64_t>(h_split_rows.size());
  upload(chunk_rows, h_chunk_rows);
  upload(chunk_begin, h_chunk_begin);
  upload(chunk_end, h_chunk_end);
  upload(chunk_whole, h_chunk_whole);
  upload(split_rows, h_split_rows);
  upload(split_first_chunk, h_split_first);

  row_block_count = static_cast<std::int64_t>(h_block_begin.size());
  upload(row_block_begin, h_block_begin);
  upload(row_block_end, h_block_end);
  set_work(0, chunk_count);
}

DeviceCsr::DeviceCsr() : impl_(std::make_unique<Impl>()) {}
DeviceCsr::DeviceCsr(DeviceCsr&&) noexcept = default;
DeviceCsr& DeviceCsr::operator=(DeviceCsr&&) noexcept = default;
DeviceCsr::~DeviceCsr() = default;
std::int64_t DeviceCsr::rows() const { return impl_->rows; }
std::int64_t DeviceCsr::cols() const { return impl_->cols; }
std::int64_t DeviceCsr::nnz() const { return impl_->nnz; }

DeviceCsr::DeviceCsr(const CsrMatrix& a) : impl_(std::make_unique<Impl>()) {
  check(a);
  Impl& m = *impl_;
  m.rows = a.rows;
  m.cols = a.cols;
  m.nnz = a.nnz();
  m.offsets_32 = m.nnz <= 0x7fffffff;
  if (m.offsets_32) {
    const std::vector<std::int32_t> narrow(a.row_offsets.begin(), a.row_offsets.end());
    upload(m.offsets32, narrow);
  } else {
    upload(m.offsets64, a.row_offsets);
  }
  upload(m.columns, a.columns);
  upload(m.values, a.values);
  m.plan(a);
}

DeviceEll::DeviceEll(const EllMatrix& a) : rows(a.rows), cols(a.cols), width(a.width) {
  check(a);
  upload(columns, a.columns);
  upload(values, a.values);
}

DeviceHybrid::DeviceHybrid(const HybridMatrix& a) : coo_count(static_cast<std::int64_t>(a.coo_values.size())) {
  check(a);
  ell = DeviceEll(a.ell);
  upload(coo_rows, a.coo_rows);
  upload(coo_columns, a.coo_columns);
  upload(coo_values, a.coo_values);
}

namespace {

template <int RHS, typename Offset>
void launch_csr(const DeviceCsr::Impl& m, const Offset* offsets, const RhsView& v,
                cudaStream_t stream) {
  if (m.work_blocks > 0x7fffffff || m.row_block_count > 0x7fffffff)
    throw Error("spmv_cuda: matrix too large for one grid");
  const int passes = (v.total + RHS - 1) / RHS;
  if (passes > 65535) throw Error("spmm_cuda: too many right-hand sides (" + std::to_string(v.total) + ")");
  const CsrView<Offset> a{offsets, m.columns.data(), m.values.data()};
  if (m.row_block_count > 0) {
    row_block_kernel<RHS, Offset><<<dim3(static_cast<unsigned>(m.row_block_count), passes), kBlock, 0, stream>>>(
        a, m.row_block_begin.data(), m.row_block_end.data(), v);
    DCSGRID_CHECK_LAUNCH();
  }
  if (m.work_blocks == 0) return;
  detail::StreamWorkspace<float> partials(
      static_cast<std::size_t>(m.split_count ? m.chunk_count * v.total : 0), stream);
  PlanView plan;
  plan.work = m.work;
  plan.chunk_rows = m.chunk_rows.data();
  plan.chunk_begin = m.chunk_begin.data();
  plan.chunk_end = m.chunk_end.data();
  plan.chunk_whole = m.chunk_whole.data();
  plan.partials = partials.data();
  csr_kernel<RHS, Offset><<<dim3(static_cast<unsigned>(m.work_blocks), passes), kBlock, 0, stream>>>(a, plan, v);
  DCSGRID_CHECK_LAUNCH();
  if (m.split_count == 0) return;
  sum_chunks_kernel<<<blocks_for(m.split_count * v.total), kBlock, 0, stream>>>(
      m.split_rows.data(), m.split_first_chunk.data(), m.split_count, partials.data(), v.total,
      v.y, v.ldy);
  DCSGRID_CHECK_LAUNCH();
}

template <int RHS>
void run_csr(const DeviceCsr& a, const RhsView& v, cudaStream_t stream) {
  const DeviceCsr::Impl& m = a.impl();
  if (m.offsets_32) launch_csr<RHS>(m, m.offsets32.data(), v, stream);
  else launch_csr<RHS>(m, m.offsets64.data(), v, stream);
}

}  // namespace

void spmv_cuda(const DeviceCsr& a, const float* d_x, float* d_y, cudaStream_t stream) {
  run_csr<1>(a, RhsView{d_x, a.cols(), d_y, a.rows(), 1}, stream);
}

void spmm_cuda(const DeviceCsr& a, const float* d_x, std::int64_t ldx, std::int64_t count,
               float* d_y, std::int64_t ldy, cudaStream_t stream) {
  if (count < 0 || (count > 0 && (ldx < a.cols() || ldy < a.rows())))
    throw Error("spmm_cuda: bad right-hand side count or leading dimensions (ldx ≥ cols, ldy ≥ rows)");
  if (count == 0) return;
  if (count > 0x7fffffff) throw Error("spmm_cuda: too many right-hand sides");
  run_csr<kRhsPerPass>(a, RhsView{d_x, ldx, d_y, ldy, static_cast<int>(count)}, stream);
}

void spmv_cuda(const DeviceEll& a, const float* d_x, float* d_y, cudaStream_t stream) {
  if (a.rows == 0) return;
  ell_kernel<<<blocks_for(a.rows), kBlock, 0, stream>>>(a.rows, a.width, a.columns.data(),
                                                        a.values.data(), d_x, d_y);
  DCSGRID_CHECK_LAUNCH();
}

void spmv_cuda(const DeviceHybrid& a, const float* d_x, float* d_y, cudaStream_t stream) {
  spmv_cuda(a.ell, d_x, d_y, stream);
  if (a.coo_count == 0) return;
  coo_add_kernel<<<blocks_for(a.coo_count), kBlock, 0, stream>>>(
      a.coo_count, a.coo_rows.data(), a.coo_columns.data(), a.coo_values.data(), d_x, d_y);
  DCSGRID_CHECK_LAUNCH();
}

}  // namespace dcsgrid::prims
