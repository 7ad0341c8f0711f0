// CPU GEMM: Goto/BLIS-style blocking. Panels of op(A) and op(B) are packed into MR- and NR-wide
// slivers (k-major, zero-padded), and a fixed-size MR×NR micro-kernel that GCC vectorises (AVX2 +
// FMA with -march=x86-64-v3) keeps the whole C tile in registers. Threads share the packed panels
// and split the (row block, column sliver) pairs; when that leaves threads idle and k is long
// (Gram matrices of maps), k itself is split and the per-thread partial products summed in order.
#include <algorithm>
#include <string>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/prims/gemm.hpp"
#include "gemm_checks.hpp"

namespace dcsgrid::prims {

namespace detail {

void check_gemm_arguments(const char* function, Op op_a, Op op_b, std::int64_t m, std::int64_t n,
                          std::int64_t k, std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
  auto fail = [&](const std::string& what) { throw Error(std::string(function) + ": " + what); };
  if (m < 0 || n < 0 || k < 0)
    fail("negative size m=" + std::to_string(m) + " n=" + std::to_string(n) +
         " k=" + std::to_string(k));
  auto check_ld = [&](const char* name, std::int64_t ld, std::int64_t row_length) {
    if (ld < std::max<std::int64_t>(1, row_length))
      fail(std::string(name) + "=" + std::to_string(ld) + " is less than the stored row length " +
           std::to_string(row_length));
  };
  check_ld("lda", lda, op_a == Op::none ? k : m);
  check_ld("ldb", ldb, op_b == Op::none ? n : k);
  check_ld("ldc", ldc, n);
}

}  // namespace detail

namespace {

constexpr int MR = 6;              // micro-tile rows: 6 × 2 ymm accumulators
constexpr int NR = 16;             // micro-tile columns: two 8-float vectors
constexpr std::int64_t KC = 256;   // k depth of a packed panel (an NR sliver stays in L1)
constexpr std::int64_t MC = 96;    // rows of A a thread reuses from L2 (16 slivers)
constexpr std::int64_t NC = 4096;  // columns of B packed at once

// One operand seen as rows × k: element (r, kk) is p[r*ld + kk] when k runs along memory,
// p[kk*ld + r] otherwise. op(A) has rows = m; op(B)ᵀ has rows = n.
struct PanelSource {
  const float* p;
  std::int64_t ld;
  bool k_contiguous;
  float at(std::int64_t r, std::int64_t kk) const {
    return k_contiguous ? p[r * ld + kk] : p[kk * ld + r];
  }
  // The same operand starting at element (r, kk).
  PanelSource from(std::int64_t r, std::int64_t kk) const {
    return {k_contiguous ? p + r * ld + kk : p + kk * ld + r, ld, k_contiguous};
  }
};

// Packs rows [r0, r0+rows) × k [k0, k0+kc) into slivers of R rows: sliver s holds
// out[(s*kc + kk)*R + i] = element (r0 + s*R + i, k0 + kk), zero past the last row.
template <int R>
void pack_slivers(const PanelSource& src, std::int64_t r0, std::int64_t rows, std::int64_t k0,
                  std::int64_t kc, float* out) {
  const std::int64_t slivers = (rows + R - 1) / R;
#pragma omp for schedule(static)
  for (std::int64_t s = 0; s < slivers; ++s) {
    float* dst = out + s * kc * R;
    const std::int64_t valid = std::min<std::int64_t>(R, rows - s * R);
    for (std::int64_t i = 0; i < R; ++i) {
      if (i >= valid) {
        for (std::int64_t kk = 0; kk < kc; ++kk) dst[kk * R + i] = 0.0f;
        continue;
      }
      const std::int64_t r = r0 + s * R + i;
      for (std::int64_t kk = 0; kk < kc; ++kk) dst[kk * R + i] = src.at(r, k0 + kk);
    }
  }
}

// acc = Σ_k a[k][0..MR) ⊗ b[k][0..NR) over packed slivers. GCC vector types (8 floats, one
// ymm register) keep the 12 accumulators in registers; GCC emits FMAs for them.
using Vec8 = float __attribute__((vector_size(32)));
constexpr int NV = NR / 8;

inline Vec8 load8(const float* p) {
  Vec8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

inline void micro_kernel(std::int64_t kc, const float* __restrict a, const float* __restrict b,
                         float (&acc)[MR][NR]) {
  Vec8 c[MR][NV] = {};
  for (std::int64_t kk = 0; kk < kc; ++kk) {
    Vec8 bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = load8(b + kk * NR + 8 * v);
    for (int i = 0; i < MR; ++i) {
      const float x = a[kk * MR + i];
      const Vec8 ai = {x, x, x, x, x, x, x, x};
      for (int v = 0; v < NV; ++v) c[i][v] += ai * bv[v];
    }
  }
  __builtin_memcpy(acc, c, sizeof acc);
}

// C tile = alpha·acc + beta·C (C not read when beta is 0), only the rows × cols inside C.
inline void store_tile(const float (&acc)[MR][NR], int rows, int cols, float alpha, float beta,
                       float* c, std::int64_t ldc) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      float& out = c[i * ldc + j];
      out = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * out;
    }
}

// C = beta·C, without reading C when beta is 0.
void scale_c(std::int64_t m, std::int64_t n, float beta, float* c, std::int64_t ldc) {
#pragma omp parallel for num_threads(team_size()) schedule(static) if (m * n > (1 << 16))
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
}

// The blocked product for k > 0, alpha ≠ 0. With `parallel`, opens its own thread team.
void gemm_blocked(const PanelSource& a, const PanelSource& bt, std::int64_t m, std::int64_t n,
                  std::int64_t k, float alpha, float beta, float* c, std::int64_t ldc,
                  bool parallel) {
  const std::int64_t m_slivers = (m + MR - 1) / MR;
  std::vector<float> a_pack(static_cast<std::size_t>(m_slivers * MR * KC));
  std::vector<float> b_pack(static_cast<std::size_t>((std::min(n, NC) + NR - 1) / NR * NR * KC));
  for (std::int64_t jc = 0; jc < n; jc += NC) {
    const std::int64_t nc = std::min(NC, n - jc);
    const std::int64_t n_slivers = (nc + NR - 1) / NR;
    const std::int64_t row_blocks = (m + MC - 1) / MC;
    for (std::int64_t pc = 0; pc < k; pc += KC) {
      const std::int64_t kc = std::min(KC, k - pc);
      const float beta_here = pc == 0 ? beta : 1.0f;
#pragma omp parallel num_threads(team_size()) if (parallel)
      {
        pack_slivers<MR>(a, 0, m, pc, kc, a_pack.data());
        pack_slivers<NR>(bt, jc, nc, pc, kc, b_pack.data());  // implicit barrier after each
#pragma omp for schedule(static)
        for (std::int64_t item = 0; item < row_blocks * n_slivers; ++item) {
          const std::int64_t block = item / n_slivers, js = item % n_slivers;
          const std::int64_t s_end = std::min(m_slivers, (block + 1) * (MC / MR));
          const int cols = static_cast<int>(std::min<std::int64_t>(NR, nc - js * NR));
          for (std::int64_t is = block * (MC / MR); is < s_end; ++is) {
            float acc[MR][NR];
            micro_kernel(kc, a_pack.data() + is * kc * MR, b_pack.data() + js * kc * NR, acc);
            const int rows = static_cast<int>(std::min<std::int64_t>(MR, m - is * MR));
            store_tile(acc, rows, cols, alpha, beta_here, c + is * MR * ldc + jc + js * NR, ldc);
          }
        }
      }
    }
  }
}

}  // namespace

void gemm_cpu(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
              const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
              float* c, std::int64_t ldc) {
  detail::check_gemm_arguments("gemm_cpu", op_a, op_b, m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0.0f) return scale_c(m, n, beta, c, ldc);
  const PanelSource pa{a, lda, op_a == Op::none};
  const PanelSource pbt{b, ldb, op_b == Op::transpose};

  // Too few (row block, sliver) pairs to keep every thread busy, but a long k: split k.
  const int threads = team_size();
  const std::int64_t items = (m + MC - 1) / MC * ((std::min(n, NC) + NR - 1) / NR);
  const std::int64_t k_parts = std::min<std::int64_t>(threads, k / (4 * KC));
  if (items < 2 * threads && k_parts > 1) {
    const std::int64_t k_step = (k / k_parts + KC - 1) / KC * KC;
    std::vector<float> partial(static_cast<std::size_t>(k_parts * m * n));
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(k_parts))
    for (std::int64_t part = 0; part < k_parts; ++part) {
      const std::int64_t k0 = part * k_step, k1 = std::min(k, k0 + k_step);
      float* out = partial.data() + part * m * n;
      if (k1 <= k0) {
        std::fill(out, out + m * n, 0.0f);
        continue;
      }
      gemm_blocked(pa.from(0, k0), pbt.from(0, k0), m, n, k1 - k0, 1.0f, 0.0f, out, n, false);
    }
#pragma omp parallel for num_threads(team_size()) schedule(static) if (m * n > (1 << 12))
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        float sum = 0.0f;
        for (std::int64_t part = 0; part < k_parts; ++part) sum += partial[(part * m + i) * n + j];
        float& out = c[i * ldc + j];
        out = beta == 0.0f ? alpha * sum : alpha * sum + beta * out;
      }
    return;
  }
  // Row chunks bound the packed A panel (MO·KC floats). Small products stay on one thread.
  constexpr std::int64_t MO = 4 * NC;
  const bool parallel = double(m) * double(n) * double(k) > double(1 << 20);
  for (std::int64_t i0 = 0; i0 < m; i0 += MO)
    gemm_blocked(pa.from(i0, 0), pbt, std::min(MO, m - i0), n, k, alpha, beta, c + i0 * ldc, ldc,
                 parallel);
}

}  // namespace dcsgrid::prims
