// CUDA GEMM against a float64 loop: every transpose pair, shapes around both tile sizes, α/β,
// β = 0 over NaN, unaligned operands (scalar load path), the split-k path and its determinism,
// m beyond one grid's rows, and the cp.async kernel of outputs with a side ≤ 64 (16-byte aligned
// rows, 3xTF32 tensor cores) at its edges, each against the fallback kernel on the same values,
// its accuracy against float32 summation, its non-finite inputs and the Gram matrix's symmetry.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/prims/gemm.hpp"
#include "helpers.hpp"
#include "test_prims_gemm_reference.hpp"

namespace dcsgrid::test {
namespace {

using prims::Op;

template <typename T>
cuda::DeviceBuffer<T> upload(const std::vector<T>& host, std::size_t offset = 0) {
  cuda::DeviceBuffer<T> d(host.size() + offset);
  DCSGRID_CUDA_CHECK(cudaMemcpy(d.data() + offset, host.data(), host.size() * sizeof(T),
                                cudaMemcpyHostToDevice));
  return d;
}

// Runs the case on the GPU; offset shifts every operand by that many floats from the
// allocation's 256-byte alignment (1: no float4 access anywhere).
std::vector<float> run_cuda(const GemmProblem& p, std::size_t offset = 0) {
  auto a = upload(p.a, offset), b = upload(p.b, offset), c = upload(p.c, offset);
  prims::gemm_cuda(p.gc.op_a, p.gc.op_b, p.gc.m, p.gc.n, p.gc.k, p.gc.alpha, a.data() + offset,
                   p.lda, b.data() + offset, p.ldb, p.gc.beta, c.data() + offset, p.ldc);
  DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> out(p.c.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(out.data(), c.data() + offset, out.size() * sizeof(float),
                                cudaMemcpyDeviceToHost));
  return out;
}

// The problem with A and B stored again at leading dimensions round_up(row length, 4) + a_extra
// and + b_extra (NaN in between, never read); the values, and so the reference, are unchanged.
// Extra 4: rows of whole 16-byte chunks with padding after k (the cp.async kernel, for outputs
// with a side ≤ 64); extra 5: rows off 16-byte alignment (the fallback kernel).
GemmProblem restride(GemmProblem p, std::int64_t a_extra, std::int64_t b_extra) {
  auto store = [](std::vector<float>& v, std::int64_t& ld, std::int64_t rows, std::int64_t cols,
                  std::int64_t extra) {
    const std::int64_t new_ld = (cols + 3) / 4 * 4 + extra;
    std::vector<float> w(static_cast<std::size_t>(std::max<std::int64_t>(rows * new_ld, 1)),
                         std::numeric_limits<float>::quiet_NaN());
    for (std::int64_t r = 0; r < rows; ++r)
      std::copy_n(v.begin() + r * ld, cols, w.begin() + r * new_ld);
    v = std::move(w);
    ld = new_ld;
  };
  const GemmCase& gc = p.gc;
  store(p.a, p.lda, GemmProblem::stored_rows(gc.op_a, gc.m, gc.k),
        GemmProblem::stored_rows(gc.op_a, gc.k, gc.m), a_extra);
  store(p.b, p.ldb, GemmProblem::stored_rows(gc.op_b, gc.k, gc.n),
        GemmProblem::stored_rows(gc.op_b, gc.n, gc.k), b_extra);
  return p;
}

// The problem through the cp.async kernel (aligned rows) and three fallbacks (B's rows, A's
// rows, every pointer off 16-byte alignment); returns the cp.async kernel's C.
std::vector<float> expect_async_and_fallbacks_match(const GemmProblem& p) {
  const GemmProblem aligned = restride(p, 4, 4);
  std::vector<float> c = run_cuda(aligned);
  expect_gemm_matches(aligned, c);
  expect_gemm_matches(aligned, run_cuda(aligned, 1));
  for (const auto& [a_extra, b_extra] : {std::pair{4, 5}, {5, 4}}) {
    const GemmProblem unaligned = restride(p, a_extra, b_extra);
    expect_gemm_matches(unaligned, run_cuda(unaligned));
  }
  return c;
}

TEST(GemmCuda, AllTransposesAndShapesMatchFloat64) {
  DCSGRID_REQUIRE_GPU();
  std::uint64_t seed = 1;
  for (Op op_a : {Op::none, Op::transpose})
    for (Op op_b : {Op::none, Op::transpose})
      for (const auto& [m, n, k] : gemm_shapes())
        for (std::int64_t pad : {0, 3}) {
          const GemmProblem p = make_gemm_problem({op_a, op_b, m, n, k, 1.0f, 0.0f, pad}, seed++);
          expect_gemm_matches(p, run_cuda(p));
        }
}

TEST(GemmCuda, AlphaBetaAndIntegerExactness) {
  DCSGRID_REQUIRE_GPU();
  std::uint64_t seed = 100;
  for (Op op_a : {Op::none, Op::transpose})
    for (Op op_b : {Op::none, Op::transpose})
      for (auto [alpha, beta] : {std::pair{1.0f, 1.0f}, {-0.5f, 2.0f}, {2.0f, 0.0f}}) {
        const GemmProblem p = make_gemm_problem({op_a, op_b, 150, 131, 77, alpha, beta, 0}, seed++);
        expect_gemm_matches(p, run_cuda(p));
        const GemmProblem q =
            make_gemm_problem({op_a, op_b, 140, 70, 600, alpha, beta, 4}, seed++, true);
        expect_gemm_matches(q, run_cuda(q), true);
      }
}

// Operands one float off 16-byte alignment take the guarded scalar loads and stores.
TEST(GemmCuda, UnalignedOperands) {
  DCSGRID_REQUIRE_GPU();
  std::uint64_t seed = 200;
  for (Op op_a : {Op::none, Op::transpose})
    for (Op op_b : {Op::none, Op::transpose}) {
      const GemmProblem p = make_gemm_problem({op_a, op_b, 130, 129, 100, 1.0f, 0.5f, 0}, seed++, true);
      expect_gemm_matches(p, run_cuda(p, 1), true);
      const GemmProblem q = make_gemm_problem({op_a, op_b, 40, 50, 3000, 1.0f, 0.0f, 0}, seed++, true);
      expect_gemm_matches(q, run_cuda(q, 1), true);
    }
}

TEST(GemmCuda, AlphaZeroAndEmptyK) {
  DCSGRID_REQUIRE_GPU();
  const GemmProblem p = make_gemm_problem({Op::none, Op::none, 70, 90, 0, 1.0f, 0.0f, 0}, 5);
  expect_gemm_matches(p, run_cuda(p));
  GemmProblem q = make_gemm_problem({Op::none, Op::none, 70, 90, 30, 0.0f, 2.0f, 0}, 6);
  std::fill(q.a.begin(), q.a.end(), std::numeric_limits<float>::quiet_NaN());
  expect_gemm_matches(q, run_cuda(q), true);  // 2·C exactly, A not read
}

// Few outputs, long k: the split-k path (partials + ordered sum) for both tile shapes, with
// β ≠ 0, exact integer sums, and bitwise-identical repeats.
TEST(GemmCuda, SplitKLongInner) {
  DCSGRID_REQUIRE_GPU();
  std::uint64_t seed = 300;
  for (Op op_b : {Op::transpose, Op::none}) {
    const GemmProblem p = make_gemm_problem({Op::none, op_b, 64, 64, 100000, 1.0f, -1.0f, 0}, seed++);
    const auto first = run_cuda(p);
    expect_gemm_matches(p, first);
    EXPECT_EQ(first, run_cuda(p)) << "split-k sum is not deterministic";
    const GemmProblem q = make_gemm_problem({Op::none, op_b, 61, 7, 100003, 0.5f, 0.0f, 1}, seed++, true);
    expect_gemm_matches(q, run_cuda(q), true);
    const GemmProblem r = make_gemm_problem({Op::transpose, op_b, 200, 150, 12001, 1.0f, 0.0f, 0}, seed++);
    expect_gemm_matches(r, run_cuda(r));
  }
}

// The split-k workspace comes from the device's stream-ordered pool, whose release threshold the
// first split call raises (CUDA's default, 0, would unmap freed workspace at every sync).
TEST(GemmCuda, SplitWorkspaceStaysInThePool) {
  DCSGRID_REQUIRE_GPU();
  const GemmProblem p = make_gemm_problem({Op::none, Op::transpose, 64, 64, 100000, 1.0f, 0.0f, 0}, 320);
  expect_gemm_matches(p, run_cuda(p));
  int device = 0;
  DCSGRID_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool;
  DCSGRID_CUDA_CHECK(cudaDeviceGetMemPool(&pool, device));
  std::uint64_t threshold = 0;
  DCSGRID_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  EXPECT_GE(threshold, std::uint64_t(64) << 20);
}

// The cp.async kernel's edges: sides 1 to 64 (rows past m and n zero-filled, partial 16-byte
// chunks of a k-major operand), k from 0 to a few splits with k % 16 and k % 4 ≠ 0 (the last
// tile cut inside a chunk), every transpose pair, α/β (α = 0: C = β·C), padding after k.
TEST(GemmCuda, SmallOutputsAsyncPathEdges) {
  DCSGRID_REQUIRE_GPU();
  const std::pair<float, float> coefficients[] = {
      {1.0f, 0.0f}, {-0.5f, 2.0f}, {2.0f, 1.0f}, {0.0f, -2.0f}};
  std::uint64_t seed = 600;
  for (Op op_a : {Op::none, Op::transpose})
    for (Op op_b : {Op::none, Op::transpose})
      for (std::int64_t m : {1, 17, 63, 64})
        for (std::int64_t n : {1, 17, 63, 64})
          for (std::int64_t k : {0, 1, 31, 33, 4099}) {
            const auto [alpha, beta] = coefficients[seed % 4];
            expect_async_and_fallbacks_match(
                make_gemm_problem({op_a, op_b, m, n, k, alpha, beta, 0}, seed++));
          }
}

// Long k: 64 splits (with 32-wide k tiles the last has none and stores zeros), the last tile 3
// floats long, the ordered sum with β ≠ 0, and bitwise-identical repeats.
TEST(GemmCuda, SmallOutputsAsyncPathLongK) {
  DCSGRID_REQUIRE_GPU();
  const std::int64_t k = (1 << 16) + 3;
  std::uint64_t seed = 700;
  for (Op op_a : {Op::none, Op::transpose})
    for (Op op_b : {Op::none, Op::transpose})
      for (const auto& [m, n] :
           {std::pair<std::int64_t, std::int64_t>{64, 64}, {63, 17}, {1, 64}, {17, 1}}) {
        const float beta = seed % 2 ? 0.0f : -1.0f;
        const GemmProblem p = make_gemm_problem({op_a, op_b, m, n, k, 1.0f, beta, 0}, seed++);
        const std::vector<float> first = expect_async_and_fallbacks_match(p);
        EXPECT_EQ(first, run_cuda(restride(p, 4, 4))) << "split-k sum is not deterministic";
      }
}

// Long k through the small-output kernel (tensor cores, 3xTF32) is at least as accurate as
// FP32 summation: its error against float64 (relative L2 over C) must stay within twice that of
// a float32 loop on the host summing runs of 1024 k and then the runs, as a split-k FP32 kernel
// does. The worst-case bound of expect_gemm_matches is far looser; this catches a systematic
// error, e.g. the tensor core's own additions left to run over the whole of a split.
TEST(GemmCuda, SmallOutputsAsAccurateAsFp32) {
  DCSGRID_REQUIRE_GPU();
  const std::int64_t m = 16, n = 16, k = (1 << 20) + 5, run = 1024;
  const GemmProblem p = restride(make_gemm_problem({Op::none, Op::transpose, m, n, k, 1.0f, 0.0f, 0}, 800), 4, 4);
  const std::vector<float> c = run_cuda(p);
  double ours = 0, fp32 = 0, norm = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float total = 0.0f;
      for (std::int64_t q0 = 0; q0 < k; q0 += run) {
        float partial = 0.0f;
        for (std::int64_t q = q0; q < std::min(k, q0 + run); ++q)
          partial = std::fma(p.op_a(i, q), p.op_b(q, j), partial);
        total += partial;
      }
      const double want = p.expected[i * n + j];
      const double ours_error = c[i * p.ldc + j] - want, fp32_error = total - want;
      ours += ours_error * ours_error;
      fp32 += fp32_error * fp32_error;
      norm += want * want;
    }
  ours = std::sqrt(ours / norm);
  fp32 = std::sqrt(fp32 / norm);
  EXPECT_LE(ours, 2.0 * fp32) << "relative L2 error " << ours << ", float32 runs " << fp32;
}

// Non-finite inputs through the small-output kernel, which splits each element into two TF32
// parts: a NaN in A makes its row of C NaN, an infinity in B makes its column non-finite, and
// every other output stays finite and correct.
TEST(GemmCuda, SmallOutputsCarryNonFiniteInputs) {
  DCSGRID_REQUIRE_GPU();
  const std::int64_t m = 8, n = 8, k = 1000, nan_row = 2, inf_col = 5;
  GemmProblem p = restride(make_gemm_problem({Op::none, Op::transpose, m, n, k, 1.0f, 0.0f, 0}, 900), 4, 4);
  p.a[nan_row * p.lda + 500] = std::numeric_limits<float>::quiet_NaN();
  p.b[inf_col * p.ldb + 700] = std::numeric_limits<float>::infinity();
  const std::vector<float> c = run_cuda(p);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const float got = c[i * p.ldc + j];
      if (i == nan_row)
        EXPECT_TRUE(std::isnan(got)) << "C(" << i << "," << j << ") = " << got;
      else if (j == inf_col)
        EXPECT_FALSE(std::isfinite(got)) << "C(" << i << "," << j << ") = " << got;
      else
        EXPECT_NEAR(got, p.expected[i * n + j], 2.0 * (k + 2) * 1.2e-7 * p.bound[i * n + j]);
    }
}

// The Gram matrix of maps: one device pointer as both operands, symmetric result.
TEST(GemmCuda, GramMatrixOfMaps) {
  DCSGRID_REQUIRE_GPU();
  const std::int64_t maps = 16, voxels = 1 << 18;
  const GemmProblem p = make_gemm_problem({Op::none, Op::none, maps, 1, voxels, 1.0f, 0.0f, 0}, 400);
  auto a = upload(p.a);
  cuda::DeviceBuffer<float> c(maps * maps);
  prims::gemm_cuda(Op::none, Op::transpose, maps, maps, voxels, 1.0f, a.data(), voxels, a.data(),
                   voxels, 0.0f, c.data(), maps);
  std::vector<float> gram(maps * maps);
  DCSGRID_CUDA_CHECK(cudaMemcpy(gram.data(), c.data(), c.bytes(), cudaMemcpyDeviceToHost));
  for (std::int64_t i = 0; i < maps; ++i)
    for (std::int64_t j = 0; j < maps; ++j) {
      double want = 0, bound = 0;
      for (std::int64_t q = 0; q < voxels; ++q) {
        const double t = double(p.a[i * voxels + q]) * p.a[j * voxels + q];
        want += t;
        bound += std::abs(t);
      }
      EXPECT_NEAR(gram[i * maps + j], want, 2.0 * (voxels + 2) * 1.2e-7 * bound);
      EXPECT_EQ(gram[i * maps + j], gram[j * maps + i]);
    }
}

// More rows than one grid holds (65535 row tiles of 64): launched in row chunks, through the
// fallback kernel (n = 3: unaligned rows of B) and the cp.async kernel (16-byte rows).
TEST(GemmCuda, RowsBeyondOneGrid) {
  DCSGRID_REQUIRE_GPU();
  std::uint64_t seed = 500;
  for (const auto& [n, k] : {std::pair<std::int64_t, std::int64_t>{3, 5}, {4, 8}}) {
    const GemmProblem p = make_gemm_problem(
        {Op::none, Op::none, 65535 * 64 + 100, n, k, 1.0f, 0.0f, 0}, seed++, true);
    expect_gemm_matches(p, run_cuda(p), true);
  }
}

TEST(GemmCuda, RejectsBadArguments) {
  float* x = nullptr;
  EXPECT_THROW(prims::gemm_cuda(Op::none, Op::none, 2, 2, 3, 1, x, 2, x, 2, 0, x, 2), Error);
  EXPECT_THROW(prims::gemm_cuda(Op::none, Op::none, 1, 1, -1, 1, x, 1, x, 1, 0, x, 1), Error);
}

}  // namespace
}  // namespace dcsgrid::test
