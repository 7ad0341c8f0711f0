// CUDA SGEMM in two kernels. When the output has too few tiles to fill the GPU and k is long,
// blockIdx.z splits k, each split writes its partial tile to a workspace, and a second kernel
// sums the splits in a fixed order (deterministic) and applies α and β.
//
// gemm_async_kernel, for outputs with a side ≤ 64 (64×64 tiles, 128 threads) whose operands both
// allow 16-byte copies (aligned base, leading dimension a multiple of 4): the Gram and
// tall-skinny products of map similarity, whose k (voxels) is long. Products run on TF32 tensor
// cores at FP32 accuracy: each operand element is split into two TF32 parts and three products
// are summed ("3xTF32", split_tf32 below); each 32-wide k tile's products are summed apart and
// then added to the running sums by an FP32 addition, so that the tensor core's own additions,
// which do not round to nearest, never run over more than one tile. Against float64, the
// (64×16M)(16M×64) product has a relative L2 error of 6.3e-7 this way; 2.2e-4 when the tensor
// core accumulates a whole split itself; 3.2e-6 for the FP32 FMA kernel this one replaced and
// 6.5e-6 for cuBLAS's SGEMM (H100). Operand tiles go from global to shared memory with cp.async
// (no register staging) through a STAGES-deep ring, so that STAGES − 1 tiles are in flight while
// one is computed; edges (rows past m or n, k past the end) are zero-filled by the copy itself.
// Each operand stays in shared memory as stored ([row][k] or [k][row], lines padded so that
// fragment reads are conflict-free). Split z takes a contiguous run of k tiles. Measured on an
// H100 (GB/s of operand read for the (64×16M)(16M×64) product, against 2980–3000 for a device
// copy): the FP32 FMA kernel (8 × 4 outputs a thread) 2351–2373; this kernel with cvt.rna.tf32
// for the split 2568 (before C(i, j) and C(j, i) of a Gram matrix were made to sum the same
// products) and 2480–2496 (after); with the split in integer arithmetic 2532–2584. Memory now
// limits it (77% of DRAM throughput, half the issue slots busy).
//
// gemm_tile_kernel, for everything else (large outputs, and the fallback for unaligned operands):
// FP32 fmaf, 8×8 outputs a thread (warp tiles of 64×32: 8×4 lanes); its splits take contiguous
// ranges of k. Operand tiles are staged through registers into
// double-buffered shared memory laid out k-major (As[k][m], Bs[k][n]); an operand whose stored
// rows run along k is transposed on the way in, with lanes mapped to consecutive rows so the
// scattered stores stay conflict-free. Tiles past the matrix edge load zeros through a guarded
// scalar path; interior tiles use float4 loads when pointers and leading dimensions allow.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

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
  std::int64_t k_per_split;   // a multiple of the block's k step (gemm_tile_kernel only)
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

// C[r][c0 + j] = α·v[j] + β·C for j < N (C not read when β = 0), N = 2 or 4; columns past n
// are skipped. Whole runs of 16-byte aligned rows go as one vector store (c0 a multiple of N).
template <int N>
__device__ inline void store_run(const GemmParams& p, float* out, std::int64_t r, std::int64_t c0,
                                 const float (&v)[N]) {
  static_assert(N == 2 || N == 4);
  using Vector = std::conditional_t<N == 4, float4, float2>;
  if (r >= p.m) return;
  float* dst = out + r * p.ldc + c0;
  if (p.vec_c && c0 + N <= p.n) {
    Vector result;
    float* res = reinterpret_cast<float*>(&result);
#pragma unroll
    for (int j = 0; j < N; ++j) res[j] = p.alpha * v[j];
    if (p.beta != 0.0f) {
      const Vector old = *reinterpret_cast<const Vector*>(dst);
      const float* o = reinterpret_cast<const float*>(&old);
#pragma unroll
      for (int j = 0; j < N; ++j) res[j] += p.beta * o[j];
    }
    *reinterpret_cast<Vector*>(dst) = result;
    return;
  }
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if (c0 + j >= p.n) continue;
    dst[j] = p.beta == 0.0f ? p.alpha * v[j] : p.alpha * v[j] + p.beta * dst[j];
  }
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
      const float v[4] = {acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]};
      store_run<4>(p, out, r, col0 + b_off + 16 * h, v);
    }
  }
}

// 16-byte copies global → shared (dst: a shared-window address) that complete asynchronously.
// The .L2::128B hint fetches whole 128-byte lines into L2 (a 32-wide tile of a k-contiguous row is
// one line). With `zero` the source is not read and zeros are written.
__device__ inline void copy_async16(unsigned dst, const float* src, bool zero) {
  asm volatile(
      "{\n.reg .pred z;\nsetp.ne.b32 z, %2, 0;\n"
      "cp.async.cg.shared.global.L2::128B [%0], [%1], 16, z;\n}\n" ::"r"(dst),
      "l"(src), "r"(int(zero))
      : "memory");
}
// The same reading only the first src_bytes (0 to 16) bytes: the rest is zero-filled.
__device__ inline void copy_async16_partial(unsigned dst, const float* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ inline void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most PENDING of this thread's committed copy groups are still in flight.
template <int PENDING>
__device__ inline void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// One operand of gemm_async_kernel: a ROWS×BK tile per stage in shared memory and its
// asynchronous copy. Element (r, k) of the operand lies at src[r*ld + k] when K_CONTIGUOUS, at
// src[k*ld + r] otherwise.
template <int ROWS, int BK, int THREADS, bool K_CONTIGUOUS>
struct AsyncOperand {
  // A tile is kLines lines of 16-byte chunks; a line runs along the operand's contiguous index.
  static constexpr int kLines = K_CONTIGUOUS ? ROWS : BK;
  static constexpr int kChunksPerLine = (K_CONTIGUOUS ? BK : ROWS) / 4;
  // Lines are padded so that a warp's fragment read (8 rows × 4 k, `at` below) hits 32 distinct
  // banks: [row][k] lines of BK + 4 floats put (r, k) in bank 4r + k, [k][row] lines of ROWS + 8
  // floats in bank 8k + r (both mod 32).
  static constexpr int kLineFloats = K_CONTIGUOUS ? BK + 4 : ROWS + 8;
  using Tile = float[kLines][kLineFloats];

  // Copies: thread t takes chunks c and c + kHalfLine (c = t % kHalfLine) of lines
  // t / kHalfLine + kLineStep·u, u < kLinesPerThread. Adjacent lanes read adjacent chunks, so a
  // warp's copy reads whole 32-byte sectors, and a thread's second chunk and line sit at fixed
  // offsets from its first: one pointer a tile.
  static constexpr int kHalfLine = kChunksPerLine / 2;
  static constexpr int kLineStep = THREADS / kHalfLine;
  static constexpr int kLinesPerThread = kLines / kLineStep;
  static_assert(BK % 8 == 0 && ROWS % 8 == 0 && THREADS % kHalfLine == 0 &&
                kLines % kLineStep == 0);

  const float* src;    // element (first row of the tile, k = 0): inside the matrix when k > 0
  const float* first;  // this thread's first chunk at k = 0
  std::int64_t k_stride;     // elements between consecutive k: 1 when K_CONTIGUOUS, else ld
  std::int64_t line_stride;  // elements between this thread's lines
  int rows_left;             // rows of the tile inside the matrix
  int first_line, first_chunk;

  __device__ AsyncOperand(const float* src_, std::int64_t ld, int rows_left_, int tid)
      : src(src_), k_stride(K_CONTIGUOUS ? 1 : ld), line_stride(kLineStep * ld),
        rows_left(rows_left_), first_line(tid / kHalfLine), first_chunk(tid % kHalfLine) {
    first = src + first_line * ld + 4 * first_chunk;  // line l starts at src + l·ld either layout
  }

  // Starts copying k in [k0, k0 + k_valid) into the tile at shared address tile, with zeros past
  // the matrix's edge and for k ≥ k0 + k_valid (k_valid ≤ BK; WHOLE_K: k_valid = BK). Every
  // tile but the last of k is WHOLE_K, and there a k-contiguous chunk is read whole or not at
  // all; elsewhere a chunk with nothing to read is pointed at src, so that no address outside
  // the matrix is formed.
  template <bool WHOLE_K>
  __device__ void copy(unsigned tile, std::int64_t k0, int k_valid) const {
    const float* tile_first = first + k0 * k_stride;
    const unsigned tile_first_shared = tile + 4 * (first_line * kLineFloats + 4 * first_chunk);
    const int line_limit = K_CONTIGUOUS ? rows_left : k_valid;
    const int chunk_limit = K_CONTIGUOUS ? k_valid : rows_left;  // floats of a line inside
#pragma unroll
    for (int u = 0; u < kLinesPerThread; ++u)
#pragma unroll
      for (int w = 0; w < 2; ++w) {
        const int line = first_line + u * kLineStep, chunk = first_chunk + w * kHalfLine;
        const float* from = tile_first + u * line_stride + 4 * w * kHalfLine;
        const unsigned to =
            tile_first_shared + 4 * (u * kLineStep * kLineFloats + 4 * w * kHalfLine);
        if constexpr (K_CONTIGUOUS && WHOLE_K) {
          copy_async16(to, from, line >= line_limit);
        } else {
          const int floats =
              line < line_limit ? std::min(std::max(chunk_limit - 4 * chunk, 0), 4) : 0;
          copy_async16_partial(to, floats > 0 ? from : src, 4 * floats);
        }
      }
  }

  // Element (row, k) of a tile.
  __device__ static float at(const Tile& tile, int row, int k) {
    return K_CONTIGUOUS ? tile[row][k] : tile[k][row];
  }
};

// FP32 products on TF32 tensor cores at FP32 accuracy ("3xTF32"): x = hi + lo, hi = x rounded to
// TF32 (11 significant bits), lo = the remainder rounded to TF32, and a·b is taken as
// hi_a·hi_b + hi_a·lo_b + lo_a·hi_b. What is dropped (lo_a·lo_b and lo's rounding) is at most
// 3·2^-22 of |a·b|; the tensor core forms these products exactly and adds them in FP32. NaN
// stays NaN. An infinite element gives NaN where FP32 gives ±inf whenever a partial product is
// inf·0 (hi_a·lo_b with lo_b = 0), as in any such split.
struct Tf32Pair {
  unsigned hi, lo;
};
// The bits of a finite float rounded to TF32 (to nearest, ties away from zero): two integer
// instructions, where cvt.rna.tf32.f32 costs about five on sm_90.
__device__ inline unsigned round_to_tf32(unsigned bits) { return (bits + 0x1000u) & 0xffffe000u; }
__device__ inline Tf32Pair split_tf32(float x) {
  // NaN and infinity pass whole: the carry would take a NaN's mantissa into the sign bit.
  const unsigned hi = fabsf(x) < INFINITY ? round_to_tf32(__float_as_uint(x)) : __float_as_uint(x);
  return {hi, round_to_tf32(__float_as_uint(x - __uint_as_float(hi)))};
}
// d += a·b for a 16×8 × 8×8 tile (mma.sync m16n8k8, TF32 in, FP32 out). Lane l holds, with
// g = l / 4 and t = l % 4: a = A(g, t), A(g + 8, t), A(g, t + 4), A(g + 8, t + 4);
// b = B(t, g), B(t + 4, g); d = D(g, 2t), D(g, 2t + 1), D(g + 8, 2t), D(g + 8, 2t + 1).
__device__ inline void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Warps of a BM×BN gemm_async_kernel block: each computes a 32 × 32 tile of C, as 2 × 4
// tensor-core tiles of 16 × 8.
template <int BM, int BN>
constexpr int async_threads() {
  return (BM / 32) * (BN / 32) * 32;
}

template <int BM, int BN, int BK, int STAGES, int MIN_BLOCKS, bool A_K_CONTIGUOUS,
          bool B_K_CONTIGUOUS>
// long: hot kernel; the cp.async pipeline (prologue, steady state, drain) and the tensor-core tile loop share shared-memory buffers and barriers, tuned as one.
__global__ void __launch_bounds__(async_threads<BM, BN>(), MIN_BLOCKS)
    gemm_async_kernel(GemmParams p) {
  constexpr int THREADS = async_threads<BM, BN>();
  constexpr int kTilesM = 2, kTilesN = 4;  // 16 × 8 tensor-core tiles a warp
  using AOperand = AsyncOperand<BM, BK, THREADS, A_K_CONTIGUOUS>;
  using BOperand = AsyncOperand<BN, BK, THREADS, B_K_CONTIGUOUS>;
  static_assert(STAGES >= 2 && BK % 8 == 0);
  __shared__ __align__(16) typename AOperand::Tile a_tiles[STAGES];
  __shared__ __align__(16) typename BOperand::Tile b_tiles[STAGES];

  const int tid = threadIdx.x;
  const std::int64_t row0 = std::int64_t(blockIdx.y) * BM, col0 = std::int64_t(blockIdx.x) * BN;
  // Split z takes tiles [z·per_split, (z + 1)·per_split) of k (the last splits may have fewer or
  // none, and then store zeros).
  const int splits = int(gridDim.z), split = int(blockIdx.z);
  const std::int64_t k_tiles = (p.k + BK - 1) / BK;
  const std::int64_t per_split = (k_tiles + splits - 1) / splits;
  const int tiles = int(std::max<std::int64_t>(0, std::min(per_split, k_tiles - split * per_split)));
  const AOperand a(A_K_CONTIGUOUS ? p.a + row0 * p.lda : p.a + row0, p.lda,
                   int(std::min<std::int64_t>(BM, p.m - row0)), tid);
  const BOperand b(B_K_CONTIGUOUS ? p.b + col0 * p.ldb : p.b + col0, p.ldb,
                   int(std::min<std::int64_t>(BN, p.n - col0)), tid);
  const auto a_shared = static_cast<unsigned>(__cvta_generic_to_shared(a_tiles));
  const auto b_shared = static_cast<unsigned>(__cvta_generic_to_shared(b_tiles));
  auto copy_tile = [&](int tile, int stage) {  // this block's tile-th tile into stage
    const std::int64_t k0 = (split * per_split + tile) * BK;
    const unsigned a_tile = a_shared + unsigned(stage * sizeof(a_tiles[0]));
    const unsigned b_tile = b_shared + unsigned(stage * sizeof(b_tiles[0]));
    if (p.k - k0 >= BK) {
      a.template copy<true>(a_tile, k0, BK);
      b.template copy<true>(b_tile, k0, BK);
    } else {  // the last tile of k
      a.template copy<false>(a_tile, k0, int(p.k - k0));
      b.template copy<false>(b_tile, k0, int(p.k - k0));
    }
  };

  // This warp's tile of C starts at (a_base, b_base) + (row0, col0); lane = 4g + t.
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int a_base = (warp / (BN / 32)) * 32, b_base = (warp % (BN / 32)) * 32;

  // One commit group per tile, empty past the last, so that before computing tile t exactly
  // STAGES − 2 younger groups may still be pending.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) copy_tile(s, s);
    commit_copies();
  }

  // A tile's products go to `tile_sum` and are added to `acc` by an FP32 addition (rounded to
  // nearest) once a tile, so that the tensor core's own additions run over BK terms only.
  float acc[kTilesM][kTilesN][4] = {};
  int read_stage = 0, write_stage = STAGES - 1;
  for (int tile = 0; tile < tiles; ++tile) {
    wait_copies<STAGES - 2>();  // this thread's copies of this tile have landed
    __syncthreads();  // everyone's have, and everyone is done with the previous one (write_stage)
    if (tile + STAGES - 1 < tiles) copy_tile(tile + STAGES - 1, write_stage);
    commit_copies();
    float tile_sum[kTilesM][kTilesN][4] = {};
#pragma unroll
    for (int k0 = 0; k0 < BK; k0 += 8) {
      Tf32Pair bv[kTilesN][2];  // B(k0 + t + 4q, b_base + 8j + g)
#pragma unroll
      for (int j = 0; j < kTilesN; ++j)
#pragma unroll
        for (int q = 0; q < 2; ++q)
          bv[j][q] = split_tf32(BOperand::at(b_tiles[read_stage], b_base + 8 * j + g, k0 + t + 4 * q));
#pragma unroll
      for (int i = 0; i < kTilesM; ++i) {
        Tf32Pair av[4];  // A(a_base + 16i + g + 8(q % 2), k0 + t + 4(q / 2))
#pragma unroll
        for (int q = 0; q < 4; ++q)
          av[q] = split_tf32(AOperand::at(a_tiles[read_stage], a_base + 16 * i + g + 8 * (q % 2),
                                          k0 + t + 4 * (q / 2)));
        // The small terms first. Each cross-term product runs over 4 values of k, with hi·lo at
        // one k slot and lo·hi at the one 4 further: for A = B (a Gram matrix) C(i, j) and
        // C(j, i) then sum the same products, and the result stays symmetric.
#pragma unroll
        for (int half = 0; half < 2; ++half)
#pragma unroll
          for (int j = 0; j < kTilesN; ++j) {
            const Tf32Pair* ak = &av[2 * half];  // rows g and g + 8 at k = k0 + t + 4·half
            const unsigned a_cross[4] = {ak[0].hi, ak[1].hi, ak[0].lo, ak[1].lo};
            const unsigned b_cross[2] = {bv[j][half].lo, bv[j][half].hi};
            mma_tf32(tile_sum[i][j], a_cross, b_cross);
          }
        const unsigned a_hi[4] = {av[0].hi, av[1].hi, av[2].hi, av[3].hi};
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) {
          const unsigned b_hi[2] = {bv[j][0].hi, bv[j][1].hi};
          mma_tf32(tile_sum[i][j], a_hi, b_hi);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kTilesM; ++i)
#pragma unroll
      for (int j = 0; j < kTilesN; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] += tile_sum[i][j][q];
    write_stage = read_stage;
    read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;
  }

  float* out = p.c + split * p.split_stride;
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::int64_t r = row0 + a_base + 16 * i + g + 8 * h;
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
        const float v[2] = {acc[i][j][2 * h], acc[i][j][2 * h + 1]};
        store_run<2>(p, out, r, col0 + b_base + 8 * j + 2 * t, v);
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

using Kernel = void (*)(GemmParams);

// One block shape of gemm_tile_kernel: its tile, k step and the kernels for the four operand
// layouts.
template <int BM, int BN, int BK, int MIN_BLOCKS>
struct TileShape {
  static constexpr int kRows = BM, kCols = BN, kStep = BK, kThreads = threads_for<BM, BN>();

  static Kernel kernel(bool a_k_contiguous, bool b_k_contiguous) {
    if (a_k_contiguous)
      return b_k_contiguous ? gemm_tile_kernel<BM, BN, BK, MIN_BLOCKS, true, true>
                            : gemm_tile_kernel<BM, BN, BK, MIN_BLOCKS, true, false>;
    return b_k_contiguous ? gemm_tile_kernel<BM, BN, BK, MIN_BLOCKS, false, true>
                          : gemm_tile_kernel<BM, BN, BK, MIN_BLOCKS, false, false>;
  }
};

// The same for gemm_async_kernel with a STAGES-deep copy ring.
template <int BM, int BN, int BK, int STAGES, int MIN_BLOCKS>
struct AsyncTileShape {
  static constexpr int kRows = BM, kCols = BN, kStep = BK,
                       kThreads = async_threads<BM, BN>();

  static Kernel kernel(bool a_k_contiguous, bool b_k_contiguous) {
    static const std::array<Kernel, 4> kernels = [] {
      const std::array<Kernel, 4> k = {
          gemm_async_kernel<BM, BN, BK, STAGES, MIN_BLOCKS, false, false>,
          gemm_async_kernel<BM, BN, BK, STAGES, MIN_BLOCKS, false, true>,
          gemm_async_kernel<BM, BN, BK, STAGES, MIN_BLOCKS, true, false>,
          gemm_async_kernel<BM, BN, BK, STAGES, MIN_BLOCKS, true, true>};
      // MIN_BLOCKS blocks of STAGES tiles need most of the SM's shared memory; without the
      // preference the driver may size the L1/shared split for fewer blocks.
      for (const Kernel f : k)
        DCSGRID_CUDA_CHECK(cudaFuncSetAttribute(
            f, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
      return k;
    }();
    return kernels[2 * a_k_contiguous + b_k_contiguous];
  }
};

// Resident blocks per SM of one of Shape's kernels (registers and shared memory differ between
// layouts), queried once per layout.
template <typename Shape>
int blocks_per_sm(bool a_k_contiguous, bool b_k_contiguous) {
  static const std::array<int, 4> blocks = [] {
    std::array<int, 4> b{};
    for (int layout = 0; layout < 4; ++layout) {
      DCSGRID_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &b[layout], Shape::kernel(layout & 2, layout & 1), Shape::kThreads, 0));
      b[layout] = std::max(b[layout], 1);
    }
    return b;
  }();
  return blocks[2 * a_k_contiguous + b_k_contiguous];
}

using LargeTiles = TileShape<128, 128, 8, 2>;  // big outputs: 256 threads
// Outputs with a side ≤ 64 (Gram matrices, tall-skinny products): 4 warps of 32 × 32 outputs,
// 4 blocks (16 warps) an SM, registers capped at 128 a thread (126–128 used, no spills),
// 4 × 36 KB of 2-stage rings of 32-wide k tiles.
using AsyncSmallTiles = AsyncTileShape<64, 64, 32, 2, 4>;
using SmallTiles = TileShape<64, 64, 16, 4>;  // the same outputs, operands not 16-byte aligned

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
    const std::int64_t capacity =
        std::int64_t(sms) * blocks_per_sm<Shape>(a_k_contiguous, b_k_contiguous);
    // One full wave: the blocks of a split launch do equal work, so more waves would only add
    // prologues and partial writes. gemm_async_kernel takes only the number of splits from
    // k_per_split (it divides the k tiles among them itself).
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
  if (std::min(m, n) > SmallTiles::kRows)
    launch<LargeTiles>(p, a_k_contiguous, b_k_contiguous, stream);
  else if (p.vec_a && p.vec_b)  // cp.async moves 16-byte chunks of 16-byte aligned rows
    launch<AsyncSmallTiles>(p, a_k_contiguous, b_k_contiguous, stream);
  else
    launch<SmallTiles>(p, a_k_contiguous, b_k_contiguous, stream);
}

}  // namespace dcsgrid::prims
