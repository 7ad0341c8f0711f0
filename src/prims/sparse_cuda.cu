// CUDA sparse products.
//
// CSR: rows are planned once, at upload. When rows are alike (none longer than twice the mean,
// at most 32 entries), groups of G lanes take one row each, in order, G the power of two that
// covers the mean length (vector CSR with sub-warp groups). Otherwise every row goes to a row
// block, a run of consecutive rows holding at most 2048 entries and 256 rows (the CSR-stream idea
// of CSR-Adaptive, Greathouse & Daga 2014): the block reads its entries with fully coalesced
// loads, stages the products value·x[column] in shared memory, and then groups of T lanes sum
// one row each, T the largest power of two ≤ 32 with T·rows ≤ 256 (one pass), so that a block of
// a few long rows gives each a warp and a block of 256 short rows one thread each. A row of more
// than 2048 entries is cut into 2048-entry pieces, a block each, whose sums a second kernel adds
// in order (4% of the entries of the benchmark's power-law matrix). Before: per-length row bins
// (58% of cuSPARSE on that matrix on an H100: sub-warp groups read each row's few entries as
// scattered, partly used sectors), then row blocks for rows of ≤ 32 entries only, with longer
// rows (a third of the entries) one warp per 1024-entry chunk (64%: few loads in flight a warp).
// Every sum has a fixed order, so results do not depend on the launch.
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
constexpr std::int64_t kShortMax = 32;   // longest row of a matrix whose rows are alike
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
// src followed by `padding` zeros.
template <typename T>
void upload_padded(cuda::DeviceBuffer<T>& dst, const std::vector<T>& src, std::size_t padding) {
  dst.resize(src.size() + padding);
  DCSGRID_CUDA_CHECK(cudaMemset(dst.data(), 0, dst.bytes()));
  if (!src.empty())
    DCSGRID_CUDA_CHECK(cudaMemcpy(dst.data(), src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// Smallest power of two ≥ length, in [1, 32].
int lanes_for(std::int64_t length) {
  int lanes = 1;
  while (lanes < length && lanes < 32) lanes *= 2;
  return lanes;
}

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
__device__ void short_rows(const CsrView<Offset>& a, std::int64_t rows, const RhsView& v,
                           int first, int here) {
  const int tid = threadIdx.x, lane = tid % LANES;
  const std::int64_t row = std::int64_t(blockIdx.x) * (kBlock / LANES) + tid / LANES;
  if (row >= rows) return;  // whole groups leave together
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

// Rows alike: groups of `lanes` lanes.
template <int RHS, typename Offset>
__global__ void __launch_bounds__(kBlock) lane_group_kernel(CsrView<Offset> a, int lanes,
                                                             std::int64_t rows, RhsView v) {
  const int first = blockIdx.y * RHS, here = min(RHS, v.total - first);
  switch (lanes) {
    case 1: return short_rows<1, RHS>(a, rows, v, first, here);
    case 2: return short_rows<2, RHS>(a, rows, v, first, here);
    case 4: return short_rows<4, RHS>(a, rows, v, first, here);
    case 8: return short_rows<8, RHS>(a, rows, v, first, here);
    case 16: return short_rows<16, RHS>(a, rows, v, first, here);
    default: return short_rows<32, RHS>(a, rows, v, first, here);
  }
}

// value·x[column] for four entries.
__device__ inline float4 products_of(const float* __restrict__ x, int4 column, float4 value) {
  return make_float4(value.x * __ldg(x + column.x), value.y * __ldg(x + column.y),
                     value.z * __ldg(x + column.z), value.w * __ldg(x + column.w));
}

// Row blocks, one a block. The block's entries (contiguous, ≤ kRowTile) are read with coalesced
// 16-byte loads (two of columns and two of values a thread, from the block's first entry rounded
// down to a 16-byte boundary), their products value·x[column] staged in shared memory, a thread's
// loads written as passes (its columns and values, then its gathers from x, then its stores) so
// that they overlap. Threads past the block's last vector repeat it rather than skip it:
// predicated loads had run ptxas out of predicate registers, and it serialised them. Then groups
// of `lanes` lanes take one row each: lane-strided sums (a group reads consecutive words), then a
// butterfly over the group, a fixed order. A kernel of its own: its shared memory would otherwise
// shrink the L1 cache of the lane-group kernel, whose gathers from x live on it. SpMV runs 8
// blocks a multiprocessor (the thread limit, 32 registers); SpMM 4 (58 registers; its right-hand
// sides one after another). On an H100, power-law matrix: 16-byte loads 844 GB/s against 800 for
// eight 4-byte loads a thread in the same run.
template <int RHS, typename Offset>
__global__ void __launch_bounds__(kBlock, RHS == 1 ? 8 : 4)
    row_block_kernel(CsrView<Offset> a, const CsrRowBlock* __restrict__ blocks,
                     float* __restrict__ partials, RhsView v) {
  constexpr int kVectors = kRowTile / 4 / kBlock;  // 16-byte loads of entries a thread
  // Products of the block's entries, from its first entry rounded down to a multiple of 4 (a
  // 16-byte boundary): up to 3 entries of the previous block come first, and the window may
  // run 3 entries past kRowTile.
  __shared__ __align__(16) float products[RHS][kRowTile + 4];
  // SpMV's single right-hand side as a constant: no branch on it between the loads.
  const int first = blockIdx.y * RHS, here = RHS == 1 ? 1 : min(RHS, v.total - first);
  const float* x = v.x + first * v.ldx;
  const CsrRowBlock b = blocks[blockIdx.x];
  const int rows = b.row_end - b.row_begin;
  const std::int64_t window_begin = b.entry_begin & ~std::int64_t(3);
  const int vectors = int(b.entry_end - window_begin + 3) / 4;
  const int tid = int(threadIdx.x);
  // The largest power of two ≤ 32 with lanes·rows ≤ kBlock (a block has 1 to kBlock rows): one
  // pass covers every row, and `lanes` is the same in the whole block.
  const int lanes = min(32, 1 << (31 - __clz(kBlock / rows)));
  const int group = tid / lanes, lane = tid % lanes;
  // The group's row as window positions [lo, hi) (clamped: a long row's piece holds part of it),
  // loaded along with the entries.
  int lo = 0, hi = 0;
  if (group < rows) {
    const std::int64_t row = b.row_begin + group;
    lo = int(max(std::int64_t(__ldg(a.offsets + row)), b.entry_begin) - window_begin);
    hi = int(min(std::int64_t(__ldg(a.offsets + row + 1)), b.entry_end) - window_begin);
  }
  if (b.entry_end > b.entry_begin) {  // a block of empty rows has no entry to repeat
    // 16-byte loads: thread t takes vectors t and t + kBlock of the window; threads past its
    // end repeat its last vector (no predicated loads). The device arrays are padded by 4
    // entries, so a vector that runs past the matrix's last entry stays inside them.
    const auto* column4 = reinterpret_cast<const int4*>(a.columns + window_begin);
    const auto* value4 = reinterpret_cast<const float4*>(a.values + window_begin);
    int4 column[kVectors];
    float4 value[kVectors];
#pragma unroll
    for (int k = 0; k < kVectors; ++k) {
      const int i = min(k * kBlock + tid, vectors - 1);
      column[k] = __ldg(column4 + i);
      value[k] = __ldg(value4 + i);
    }
#pragma unroll
    for (int j = 0; j < RHS; ++j) {
      if (j >= here) break;
      float4 product[kVectors];
#pragma unroll
      for (int k = 0; k < kVectors; ++k) product[k] = products_of(x + j * v.ldx, column[k], value[k]);
#pragma unroll
      for (int k = 0; k < kVectors; ++k)
        *reinterpret_cast<float4*>(&products[j][4 * (k * kBlock + tid)]) = product[k];
    }
    // A window of more than kRowTile entries (a block of nearly kRowTile starting off a 16-byte
    // boundary) has one vector more.
    if (vectors > kVectors * kBlock && tid == 0) {
      const int4 last_column = __ldg(column4 + kVectors * kBlock);
      const float4 last_value = __ldg(value4 + kVectors * kBlock);
      for (int j = 0; j < here; ++j)
        *reinterpret_cast<float4*>(&products[j][4 * kVectors * kBlock]) =
            products_of(x + j * v.ldx, last_column, last_value);
    }
  }
  __syncthreads();
  float sum[RHS] = {};
#pragma unroll 4
  for (int e = lo + lane; e < hi; e += lanes)
#pragma unroll
    for (int j = 0; j < RHS; ++j)
      if (j < here) sum[j] += products[j][e];
  // Every lane of every warp runs the same shuffles (lanes is block-uniform); rowless lanes add 0.
  for (int offset = lanes / 2; offset > 0; offset /= 2)
#pragma unroll
    for (int j = 0; j < RHS; ++j) sum[j] += __shfl_xor_sync(0xffffffffu, sum[j], offset);
  if (group >= rows || lane != 0) return;
#pragma unroll
  for (int j = 0; j < RHS; ++j) {
    if (j >= here) break;
    if (b.partial < 0) v.y[b.row_begin + group + (first + j) * v.ldy] = sum[j];
    else partials[std::int64_t(b.partial) * v.total + first + j] = sum[j];
  }
}

// y[row_j] = Σ of the row's piece sums, in piece order; one thread per (row, rhs).
__global__ void sum_pieces_kernel(const std::int32_t* __restrict__ rows,
                                  const std::int64_t* __restrict__ first_piece, std::int64_t count,
                                  const float* __restrict__ partials, int total, float* y,
                                  std::int64_t ldy) {
  const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= count * total) return;
  const std::int64_t s = t / total;
  const int j = int(t % total);
  float sum = 0.0f;
  for (std::int64_t p = first_piece[s]; p < first_piece[s + 1]; ++p) sum += partials[p * total + j];
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

// Row blocks of a checked matrix, as csr_row_blocks: runs of consecutive rows, each as long as
// kRowTile entries and kBlock rows allow; a longer row alone, in kRowTile-entry pieces.
std::vector<CsrRowBlock> plan_row_blocks(const CsrMatrix& a) {
  const std::vector<std::int64_t>& offsets = a.row_offsets;
  std::vector<CsrRowBlock> blocks;
  std::int32_t pieces = 0;
  for (std::int64_t r = 0; r < a.rows;) {
    const std::int64_t begin = offsets[r];
    if (offsets[r + 1] - begin > kRowTile) {
      for (std::int64_t e = begin; e < offsets[r + 1]; e += kRowTile)
        blocks.push_back({e, std::min(e + kRowTile, offsets[r + 1]), static_cast<std::int32_t>(r),
                          static_cast<std::int32_t>(r + 1), pieces++});
      ++r;
      continue;
    }
    std::int64_t end = r + 1;
    while (end < a.rows && end - r < kBlock && offsets[end + 1] - begin <= kRowTile) ++end;
    blocks.push_back({begin, offsets[end], static_cast<std::int32_t>(r),
                      static_cast<std::int32_t>(end), -1});
    r = end;
  }
  return blocks;
}

}  // namespace

std::vector<CsrRowBlock> csr_row_blocks(const CsrMatrix& a) {
  check(a);
  return plan_row_blocks(a);
}

struct DeviceCsr::Impl {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  bool offsets_32 = true;
  cuda::DeviceBuffer<std::int32_t> offsets32;
  cuda::DeviceBuffer<std::int64_t> offsets64;
  cuda::DeviceBuffer<std::int32_t> columns;
  cuda::DeviceBuffer<float> values;
  // The plan: `lanes` a row when rows are alike; else 0, and row blocks, with the rows cut into
  // pieces listed (and the slot of their first piece) for the ordered sum of their pieces.
  int lanes = 0;
  std::int64_t row_block_count = 0;
  cuda::DeviceBuffer<CsrRowBlock> row_blocks;
  std::int64_t piece_count = 0, split_count = 0;
  cuda::DeviceBuffer<std::int32_t> split_rows;
  cuda::DeviceBuffer<std::int64_t> split_first_piece;  // split_count + 1 entries

  void plan(const CsrMatrix& a);
};

void DeviceCsr::Impl::plan(const CsrMatrix& a) {
  auto length = [&](std::int64_t r) { return a.row_offsets[r + 1] - a.row_offsets[r]; };
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < rows; ++r) longest = std::max(longest, length(r));
  const int mean_lanes = lanes_for(rows ? (nnz + rows - 1) / rows : 0);
  if (longest <= std::min<std::int64_t>(kShortMax, 2 * mean_lanes)) {
    lanes = mean_lanes;  // rows alike: every row, in order, to groups sized from the mean
    return;
  }
  const std::vector<CsrRowBlock> blocks = plan_row_blocks(a);
  std::vector<std::int32_t> h_split_rows;
  std::vector<std::int64_t> h_split_first;
  for (const CsrRowBlock& b : blocks) {
    if (b.partial < 0) continue;
    if (h_split_rows.empty() || h_split_rows.back() != b.row_begin) {
      h_split_rows.push_back(b.row_begin);
      h_split_first.push_back(b.partial);
    }
    ++piece_count;
  }
  h_split_first.push_back(piece_count);
  row_block_count = static_cast<std::int64_t>(blocks.size());
  split_count = static_cast<std::int64_t>(h_split_rows.size());
  upload(row_blocks, blocks);
  upload(split_rows, h_split_rows);
  upload(split_first_piece, h_split_first);
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
  // 4 entries of padding: row_block_kernel's 16-byte loads may run up to 3 past the last one.
  upload_padded(m.columns, a.columns, 4);
  upload_padded(m.values, a.values, 4);
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
  const int passes = (v.total + RHS - 1) / RHS;
  if (passes > 65535) throw Error("spmm_cuda: too many right-hand sides (" + std::to_string(v.total) + ")");
  if (m.rows == 0) return;
  const CsrView<Offset> a{offsets, m.columns.data(), m.values.data()};
  if (m.lanes > 0) {
    const std::int64_t per_block = kBlock / m.lanes, blocks = (m.rows + per_block - 1) / per_block;
    if (blocks > 0x7fffffff) throw Error("spmv_cuda: matrix too large for one grid");
    lane_group_kernel<RHS, Offset><<<dim3(static_cast<unsigned>(blocks), passes), kBlock, 0, stream>>>(
        a, m.lanes, m.rows, v);
    DCSGRID_CHECK_LAUNCH();
    return;
  }
  if (m.row_block_count > 0x7fffffff) throw Error("spmv_cuda: matrix too large for one grid");
  detail::StreamWorkspace<float> partials(static_cast<std::size_t>(m.piece_count * v.total), stream);
  row_block_kernel<RHS, Offset><<<dim3(static_cast<unsigned>(m.row_block_count), passes), kBlock, 0, stream>>>(
      a, m.row_blocks.data(), partials.data(), v);
  DCSGRID_CHECK_LAUNCH();
  if (m.split_count == 0) return;
  sum_pieces_kernel<<<blocks_for(m.split_count * v.total), kBlock, 0, stream>>>(
      m.split_rows.data(), m.split_first_piece.data(), m.split_count, partials.data(), v.total,
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
