// CPU GEMM against a float64 loop: every transpose pair, α/β values, sizes around the blocking,
// β = 0 over NaN, the k-split path, argument checks.
#include <gtest/gtest.h>

#include <omp.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/prims/gemm.hpp"
#include "test_prims_gemm_reference.hpp"

namespace dcsgrid::test {
namespace {

using prims::Op;

std::vector<float> run_cpu(const GemmProblem& p) {
  std::vector<float> c = p.c;
  prims::gemm_cpu(p.gc.op_a, p.gc.op_b, p.gc.m, p.gc.n, p.gc.k, p.gc.alpha, p.a.data(), p.lda,
                  p.b.data(), p.ldb, p.gc.beta, c.data(), p.ldc);
  return c;
}

TEST(GemmCpu, AllTransposesAndShapesMatchFloat64) {
  std::uint64_t seed = 1;
  for (Op op_a : {Op::none, Op::transpose})
    for (Op op_b : {Op::none, Op::transpose})
      for (const auto& [m, n, k] : gemm_shapes()) {
        const GemmCase gc{op_a, op_b, m, n, k, 1.0f, 0.0f, (m + n + k) % 3};
        const GemmProblem p = make_gemm_problem(gc, seed++);
        expect_gemm_matches(p, run_cpu(p));
      }
}

TEST(GemmCpu, AlphaBetaCombinations) {
  std::uint64_t seed = 100;
  for (Op op_a : {Op::none, Op::transpose})
    for (Op op_b : {Op::none, Op::transpose})
      for (auto [alpha, beta] : {std::pair{1.0f, 1.0f}, {-0.5f, 2.0f}, {0.75f, -1.0f}, {2.0f, 0.0f}}) {
        const GemmProblem p = make_gemm_problem({op_a, op_b, 37, 45, 300, alpha, beta, 1}, seed++);
        expect_gemm_matches(p, run_cpu(p));
      }
}

TEST(GemmCpu, IntegerOperandsAreExact) {
  std::uint64_t seed = 200;
  for (Op op_a : {Op::none, Op::transpose})
    for (Op op_b : {Op::none, Op::transpose})
      for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, {2.0f, -0.5f}}) {
        const GemmProblem p =
            make_gemm_problem({op_a, op_b, 70, 35, 600, alpha, beta, 2}, seed++, true);
        expect_gemm_matches(p, run_cpu(p), true);
      }
}

// β = 0 must overwrite C without reading it: C starts as NaN (make_gemm_problem does that), and
// α = 0 or k = 0 give β·C (here 0) without reading A and B (NaN too).
TEST(GemmCpu, BetaZeroIgnoresNaNAndAlphaZeroIgnoresOperands) {
  const GemmProblem p = make_gemm_problem({Op::none, Op::none, 33, 17, 40, 1.0f, 0.0f, 0}, 7);
  expect_gemm_matches(p, run_cpu(p));
  std::vector<float> nan_a(33 * 40, std::numeric_limits<float>::quiet_NaN()), c(33 * 17, 5.0f);
  prims::gemm_cpu(Op::none, Op::none, 33, 17, 40, 0.0f, nan_a.data(), 40, nan_a.data(), 17, 0.5f,
                  c.data(), 17);
  for (float v : c) ASSERT_EQ(v, 2.5f);
  std::vector<float> nan_c(33 * 17, std::numeric_limits<float>::quiet_NaN());
  prims::gemm_cpu(Op::none, Op::none, 33, 17, 0, 1.0f, nullptr, 1, nullptr, 17, 0.0f, nan_c.data(), 17);
  for (float v : nan_c) ASSERT_EQ(v, 0.0f);
}

// Few outputs, long k (a Gram matrix of maps): the k-split path with several threads.
TEST(GemmCpu, LongKSplitAcrossThreads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(4);
  for (Op op_b : {Op::transpose, Op::none}) {
    const GemmProblem p = make_gemm_problem({Op::none, op_b, 6, 5, 20000, 1.5f, 0.5f, 3}, 11);
    expect_gemm_matches(p, run_cpu(p));
    const GemmProblem q = make_gemm_problem({Op::none, op_b, 9, 8, 9000, 1.0f, 0.0f, 1}, 12, true);
    expect_gemm_matches(q, run_cpu(q), true);
  }
  omp_set_num_threads(saved);
}

// Gram matrix A·Aᵀ with one pointer for both operands is symmetric and matches the loop.
TEST(GemmCpu, GramMatrixOfMaps) {
  const GemmProblem p = make_gemm_problem({Op::none, Op::none, 8, 1, 3000, 1.0f, 0.0f, 0}, 13);
  // p.a: 8 maps of 3000 voxels, one per row; the same pointer is both operands.
  std::vector<float> c(64);
  prims::gemm_cpu(Op::none, Op::transpose, 8, 8, 3000, 1.0f, p.a.data(), 3000, p.a.data(), 3000,
                  0.0f, c.data(), 8);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      double want = 0, bound = 0;
      for (int q = 0; q < 3000; ++q) {
        want += double(p.a[i * 3000 + q]) * p.a[j * 3000 + q];
        bound += std::abs(double(p.a[i * 3000 + q]) * p.a[j * 3000 + q]);
      }
      EXPECT_NEAR(c[i * 8 + j], want, 2 * 3002 * 1.2e-7 * bound);
      EXPECT_EQ(c[i * 8 + j], c[j * 8 + i]);
    }
}

TEST(GemmCpu, RejectsBadArguments) {
  float x = 0;
  EXPECT_THROW(prims::gemm_cpu(Op::none, Op::none, -1, 1, 1, 1, &x, 1, &x, 1, 0, &x, 1), Error);
  EXPECT_THROW(prims::gemm_cpu(Op::none, Op::none, 2, 2, 3, 1, &x, 2, &x, 2, 0, &x, 2), Error);
  EXPECT_THROW(prims::gemm_cpu(Op::transpose, Op::none, 3, 2, 2, 1, &x, 2, &x, 2, 0, &x, 2), Error);
  EXPECT_THROW(prims::gemm_cpu(Op::none, Op::none, 2, 4, 2, 1, &x, 2, &x, 4, 0, &x, 3), Error);
}

}  // namespace
}  // namespace dcsgrid::test
