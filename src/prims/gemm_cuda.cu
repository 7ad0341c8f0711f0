// CUDA SGEMM. Each block computes a BM×BN tile of C with 8×8 outputs a thread (warp tiles of
// 64×32: 8×4 lanes, each holding two 4-row by two 4-column sub-blocks, so that every shared
// memory read is one float4 broadcast to several lanes). Operand tiles are staged through
// registers into double-buffered shared memory laid out k-major (As[k][m], Bs[k][n]); an operand
// whose stored rows run along k is transposed on the way in, with lanes mapped to consecutive
// rows so the scattered stores stay conflict-free. Tiles past the matrix edge load zeros through
// a guarded scalar path; interior tiles use float4 loads when pointers and leading dimensions
// allow. When the output has too few tiles to fill the GPU and k is long, blockIdx.z splits k,
// each split writes its partial tile to a workspace, and a second kernel sums the splits in a
// fixed order and applies α and β.
#include <algorithm>
#include <cstdint>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/prims/gemm.hpp"
#include "gemm_checks.hpp"
#include "stream_workspace.cuh"

namespace dcsgrid::prims {
namespace {

constexpr int kThreadRows = 8, kThreadCols = 8;  // outputs a thread
constexpr int kWarpRows = 64, kWarpCols = 32;    // outputs a warp: 8×4 lanes

struct GemmParams {
  std::int64_t m, n, k;
  float alpha, beta;
  const float* a;
  std::int64_t lda;
  const float* b;
  std::int64_t ldb;
  float* c;  // the output, or the split-k workspace
  std::int64_t ldc;
  std::int64_t split_stride;  // elements between the outputs of consecutive k splits
  std::int64_t k_per_split;   // a multiple of the block's k step
  bool vec_a, vec_b, vec_c;   // float4 access allowed (16-byte aligned rows)
};

// Moves a ROWS×BK tile of one operand from global memory to shared memory (laid out [BK][ROWS]),
// through registers so that the load can be issued a whole tile ahead of the store. Element (r,
// k) of the operand lies at src[r*ld + k] when K_CONTIGUOUS, at src[k*ld + r] otherwise.
template <int ROWS, int BK, int THREADS, bool K_CONTIGUOUS>
struct TileStager {
  static constexpr int kVectors = ROWS * BK / 4 / THREADS;
  static_assert(ROWS * BK % (4 * THREADS) == 0 && ROWS % 32 == 0 && THREADS % 32 == 0);
  float4 staged[kVectors];

  // src points at element (first row of the tile, k = 0); rows_left = rows inside the matrix.
  __device__ void load(const float* __restrict__ src, std::int64_t ld, int rows_left,
                       std::int64_t k0, std::int64_t k_end, bool vec, int tid) {
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
      const int f = tid + v * THREADS;
      float4& out = staged[v];
      if constexpr (K_CONTIGUOUS) {
        // Consecutive lanes take consecutive rows: their transposed stores hit distinct banks.
        const int r = f % ROWS;
        const std::int64_t k = k0 + (f / ROWS) * 4;
        const float* p = src + r * ld + k;
        if (vec && r < rows_left && k + 4 <= k_end) {
          out = __ldg(reinterpret_cast<const float4*>(p));
        } else {
          const bool row_ok = r < rows_left;
          out.x = row_ok && k + 0 < k_end ? __ldg(p + 0) : 0.0f;
          out.y = row_ok && k + 1 < k_end ? __ldg(p + 1) : 0.0f;
          out.z = row_ok && k + 2 < k_end ? __ldg(p + 2) : 0.0f;
          out.w = row_ok && k + 3 < k_end ? __ldg(p + 3) : 0.0f;
        }
      } else {
        const int r = (f % (ROWS / 4)) * 4;
        const std::int64_t k = k0 + f / (ROWS / 4);
        const float* p = src + k * ld + r;
        if (vec && k < k_end && r + 4 <= rows_left) {
          out = __ldg(reinterpret_cast<const float4*>(p));
        } else {
          const bool k_ok = k < k_end;
          out.x = k_ok && r + 0 < rows_left ? __ldg(p + 0) : 0.0f;
          out.y = k_ok && r + 1 < rows_left ? __ldg(p + 1) : 0.0f;
          out.z = k_ok && r + 2 < rows_left ? __ldg(p + 2) : 0.0f;
          out.w = k_ok && r + 3 < rows_left ? __ldg(p + 3) : 0.0f;
        }
      }
    }
  }

  __device__ void store(float (*tile)[ROWS], int tid) const {
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
      const int f = tid + v * THREADS;
      if constexpr (K_CONTIGUOUS) {
        const int r = f % ROWS, k = (f / ROWS) * 4;
        tile[k + 0][r] = staged[v].x;
        tile[k + 1][r] = staged[v].y;
        tile[k + 2][r] = staged[v].z;
        tile[k + 3][r] = staged[v].w;
      } else {
        const int r = (f % (ROWS / 4)) * 4, k = f / (ROWS / 4);
        *reinterpret_cast<float4*>(&tile[k][r]) = staged[v];
      }
    }
  }
};

// C[r][c0..c0+4) = α·v + β·C (C not read when β = 0); columns past n are skipped.
__device__ inline void store_four(const GemmParams& p, float* out, std::int64_t r, std::int64_t c0,
                                  float4 v) {
  if (r >= p.m) return;
  float* dst = out + r * p.ldc + c0;
  const float vals[4] = {v.x, v.y, v.z, v.w};
  if (p.vec_c && c0 + 4 <= p.n) {
    float4 result = make_float4(p.alpha * v.x, p.alpha * v.y, p.alpha * v.z, p.alpha * v.w);
    if (p.beta != 0.0f) {
      const float4 old = *reinterpret_cast<const float4*>(dst);
      result.x += p.beta * old.x;
      result.y += p.beta * old.y;
      result.z += p.beta * old.z;
      result.w += p.beta * old.w;
    }
    *reinterpret_cast<float4*>(dst) = result;
    return;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (c0 + j < p.n) dst[j] = p.beta == 0.0f ? p.alpha * vals[j] : p.alpha * vals[j] + p.beta * dst[j];
}

template <int BM, int BN>
constexpr int threads_for() {
  return (BM / kWarpRows) * (BN / kWarpCols) * 32;
}

template <int BM, int BN, int BK, int MIN_BLOCKS, bool A_K_CONTIGUOUS, bool B_K_CONTIGUOUS>
__global__ void __launch_bounds__(threads_for<BM, BN>(), MIN_BLOCKS) gemm_tile_kernel(GemmParams p) {
  constexpr int THREADS = threads_for<BM, BN>();
  __shared__ __align__(16) float a_tiles[2][BK][BM];
  __shared__ __align__(16) float b_tiles[2][BK][BN];
  TileStager<BM, BK, THREADS, A_K_CONTIGUOUS> a_stager;
  TileStager<BN, BK, THREADS, B_K_CONTIGUOUS> b_stager;

  const int tid = threadIdx.x;
  const std::int64_t row0 = std::int64_t(blockIdx.y) * BM, col0 = std::int64_t(blockIdx.x) * BN;
  const std::int64_t k_begin = std::int64_t(blockIdx.z) * p.k_per_split;
  const std::int64_t k_end = std::min(p.k, k_begin + p.k_per_split);
  const int tiles = k_end > k_begin ? int((k_end - k_begin + BK - 1) / BK) : 0;
  const float* a_src = A_K_CONTIGUOUS ? p.a + row0 * p.lda : p.a + row0;
  const float* b_src = B_K_CONTIGUOUS ? p.b + col0 * p.ldb : p.b + col0;
  const int a_rows_left = int(std::min<std::int64_t>(BM, p.m - row0));
  const int b_rows_left = int(std::min<std::int64_t>(BN, p.n - col0));

  // This thread's rows: a_off + {0..3, 32..35}; columns: b_off + {0..3, 16..19}.
  const int warp = tid / 32, lane = tid % 32;
  const int a_off = (warp / (BN / kWarpCols)) * kWarpRows + (lane / 4) * 4;
  const int b_off = (warp % (BN / kWarpCols)) * kWarpCols + (lane % 4) * 4;

  float acc[kThreadRows][kThreadCols] = {};
  if (tiles > 0) {
    a_stager.load(a_src, p.lda, a_rows_left, k_begin, k_end, p.vec_a, tid);
    b_stager.load(b_src, p.ldb, b_rows_left, k_begin, k_end, p.vec_b, tid);
    a_stager.store(a_tiles[0], tid);
    b_stager.store(b_tiles[0], tid);
  }
  __syncthreads();
  for (int t = 0; t < tiles; ++t) {
    const int cur = t & 1;
    const bool more = t + 1 < tiles;
    if (more) {  // issue the next tile's loads now, store them after the arithmetic
      const std::int64_t k_next = k_begin + std::int64_t(t + 1) * BK;
      a_stager.load(a_src, p.lda, a_rows_left, k_next, k_end, p.vec_a, tid);
      b_stager.load(b_src, p.ldb, b_rows_left, k_next, k_end, p.vec_b, tid);
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a_lo = *reinterpret_cast<const float4*>(&a_tiles[cur][kk][a_off]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&a_tiles[cur][kk][a_off + 32]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&b_tiles[cur][kk][b_off]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&b_tiles[cur][kk][b_off + 16]);
      const float av[kThreadRows] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
      const float bv[kThreadCols] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < kThreadRows; ++i)
#pragma unroll
        for (int j = 0; j < kThreadCols; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    if (more) {  // the other buffer was last read before the previous barrier
      a_stager.store(a_tiles[cur ^ 1], tid);
      b_stager.store(b_tiles[cur ^ 1], tid);
    }
    __syncthreads();
  }

  float* out = p.c + std::int64_t(blockIdx.z) * p.split_stride;
#pragma unroll
  for (int i = 0; i < kThreadRows; ++i) {
    const std::int64_t r = row0 + a_off + (i < 4 ? i : 32 + i - 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float* v = &acc[i][4 * h];
      store_four(p, out, r, col0 + b_off + 16 * h, make_float4(v[0], v[1], v[2], v[3]));
    }
  }
}

// C = α·Σ_s partial[s] + β·C, summing the splits in order (deterministic). Block (32, 8): 32
// outputs, each summed by 8 threads over interleaved splits, then combined in thread order.
__global__ void sum_splits_kernel(const float* __restrict__ partial, int splits, std::int64_t m,
                                  std::int64_t n, float alpha, float beta, float* c,
                                  std::int64_t ldc) {
  __shared__ float sums[8][33];
  const std::int64_t count = m * n;
  const std::int64_t o = std::int64_t(blockIdx.x) * 32 + threadIdx.x;
  float sum = 0.0f;
  if (o < count)
    for (int s = threadIdx.y; s < splits; s += 8) sum += partial[std::int64_t(s) * count + o];
  sums[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y != 0 || o >= count) return;
  float total = 0.0f;
#pragma unroll
  for (int y = 0; y < 8; ++y) total += sums[y][threadIdx.x];
  float& dst = c[(o / n) * ldc + o % n];
  dst = beta == 0.0f ? alpha * total : alpha * total + beta * dst;
}

bool aligned16(const void* p, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld % 4 == 0;
}

// One block shape: its tile, k step and the kernels for the four operand layouts.
template <int BM, int BN, int BK, int MIN_BLOCKS>
struct TileShape {
  static constexpr int kRows = BM, kCols = BN, kStep = BK, kThreads = threads_for<BM, BN>();
  using Kernel = void (*)(GemmParams);

  static Kernel kernel(bool a_k_contiguous, bool b_k_contiguous) {
    if (a_k_contiguous)
      return b_k_contiguous ? gemm_tile_kernel<BM, BN, BK, MIN_BLOCKS, true, true>
                            : gemm_tile_kernel<BM, BN, BK, MIN_BLOCKS, true, false>;
    return b_k_contiguous ? gemm_tile_kernel<BM, BN, BK, MIN_BLOCKS, false, true>
                          : gemm_tile_kernel<BM, BN, BK, MIN_BLOCKS, false, false>;
  }
  // Resident blocks per SM (the same for the four layouts: same registers and shared memory).
  static int blocks_per_sm() {
    static const int blocks = [] {
      int b = 0;
      DCSGRID_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel(true, true),
                                                                       kThreads, 0));
      return std::max(b, 1);
    }();
    return blocks;
  }
};

using LargeTiles = TileShape<128, 128, 8, 2>;  // big outputs: 256 threads
using SmallTiles = TileShape<64, 64, 16, 4>;   // outputs with a side ≤ 64 (Gram matrices): 64 threads

constexpr std::int64_t kMinKPerSplit = 1024;  // below this a split's partial write costs too much

template <typename Shape>
void launch(const GemmParams& base, bool a_k_contiguous, bool b_k_contiguous, cudaStream_t stream) {
  int device = 0, sms = 0;
  DCSGRID_CUDA_CHECK(cudaGetDevice(&device));
  DCSGRID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const auto kernel = Shape::kernel(a_k_contiguous, b_k_contiguous);
  const std::int64_t col_tiles = (base.n + Shape::kCols - 1) / Shape::kCols;
  constexpr std::int64_t kMaxRowTiles = 65535;  // gridDim.y limit: larger m goes in row chunks
  for (std::int64_t r0 = 0; r0 < base.m; r0 += kMaxRowTiles * Shape::kRows) {
    GemmParams p = base;
    p.m = std::min(base.m - r0, kMaxRowTiles * Shape::kRows);
    p.a = a_k_contiguous ? base.a + r0 * base.lda : base.a + r0;
    p.c = base.c + r0 * base.ldc;
    const std::int64_t row_tiles = (p.m + Shape::kRows - 1) / Shape::kRows;
    const std::int64_t tiles = row_tiles * col_tiles;
    const std::int64_t capacity = std::int64_t(sms) * Shape::blocks_per_sm();
    std::int64_t splits = 1;
    if (tiles < capacity)
      splits = std::max<std::int64_t>(1, std::min((capacity + tiles - 1) / tiles, p.k / kMinKPerSplit));
    p.k_per_split = std::max<std::int64_t>(
        Shape::kStep, ((p.k + splits - 1) / splits + Shape::kStep - 1) / Shape::kStep * Shape::kStep);
    splits = std::max<std::int64_t>(1, (p.k + p.k_per_split - 1) / p.k_per_split);
    const dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(row_tiles),
                    static_cast<unsigned>(splits));
    if (splits == 1) {
      p.split_stride = 0;
      kernel<<<grid, Shape::kThreads, 0, stream>>>(p);
      DCSGRID_CHECK_LAUNCH();
      continue;
    }
    // Partial products of each split into a packed m×n workspace, then the ordered sum.
    detail::StreamWorkspace<float> workspace(static_cast<std::size_t>(splits * p.m * p.n), stream);
    GemmParams partial = p;
    partial.c = workspace.data();
    partial.ldc = p.n;
    partial.split_stride = p.m * p.n;
    partial.alpha = 1.0f;
    partial.beta = 0.0f;
    partial.vec_c = p.n % 4 == 0;
    kernel<<<grid, Shape::kThreads, 0, stream>>>(partial);
    DCSGRID_CHECK_LAUNCH();
    const std::int64_t blocks = (p.m * p.n + 31) / 32;
    sum_splits_kernel<<<static_cast<unsigned>(blocks), dim3(32, 8), 0, stream>>>(
        workspace.data(), static_cast<int>(splits), p.m, p.n, p.alpha, p.beta, p.c, p.ldc);
    DCSGRID_CHECK_LAUNCH();
  }
}

}  // namespace

void gemm_cuda(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
               float* c, std::int64_t ldc, cudaStream_t stream) {
  detail::check_gemm_arguments("gemm_cuda", op_a, op_b, m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  GemmParams p{};
  p.m = m;
  p.n = n;
  p.k = alpha == 0.0f ? 0 : k;  // α = 0: C = β·C, A and B not read
  p.alpha = alpha;
  p.beta = beta;
  p.a = a;
  p.lda = lda;
  p.b = b;
  p.ldb = ldb;
  p.c = c;
  p.ldc = ldc;
  p.vec_a = aligned16(a, lda);
  p.vec_b = aligned16(b, ldb);
  p.vec_c = aligned16(c, ldc);
  const bool a_k_contiguous = op_a == Op::none, b_k_contiguous = op_b == Op::transpose;
  if (std::min(m, n) <= SmallTiles::kRows)
    launch<SmallTiles>(p, a_k_contiguous, b_k_contiguous, stream);
  else
    launch<LargeTiles>(p, a_k_contiguous, b_k_contiguous, stream);
}

}  // namespace dcsgrid::prims
