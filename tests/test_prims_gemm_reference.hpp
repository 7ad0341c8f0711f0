// GEMM test cases shared by the CPU and CUDA tests: random operands stored with padding (ld >
// row length), a float64 reference and an error bound derived from k.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dcsgrid/prims/gemm.hpp"

namespace dcsgrid::test {

struct GemmCase {
  prims::Op op_a = prims::Op::none, op_b = prims::Op::none;
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  std::int64_t pad = 0;  // extra elements per stored row, so ld ≠ the row length
  std::string describe() const {
    return std::string(op_a == prims::Op::none ? "N" : "T") + (op_b == prims::Op::none ? "N" : "T") +
           " m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
           " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta) +
           " pad=" + std::to_string(pad);
  }
};

// Operands of one case, stored as gemm expects them, with a float64 reference of C.
struct GemmProblem {
  GemmCase gc;
  std::int64_t lda = 1, ldb = 1, ldc = 1;
  std::vector<float> a, b, c;           // c: the input C (NaN everywhere when beta is 0)
  std::vector<double> expected, bound;  // m×n: α·op(A)·op(B) + β·C and α·Σ|a||b| + |β·c|

  // Rows × columns of a stored operand.
  static std::int64_t stored_rows(prims::Op op, std::int64_t rows, std::int64_t cols) {
    return op == prims::Op::none ? rows : cols;
  }
  float op_a(std::int64_t i, std::int64_t p) const {
    return gc.op_a == prims::Op::none ? a[i * lda + p] : a[p * lda + i];
  }
  float op_b(std::int64_t p, std::int64_t j) const {
    return gc.op_b == prims::Op::none ? b[p * ldb + j] : b[j * ldb + p];
  }
};

// Random operands: uniform in [-1, 1], or small integers (exact in float32) with `integers`.
inline GemmProblem make_gemm_problem(const GemmCase& gc, std::uint64_t seed, bool integers = false) {
  GemmProblem p;
  p.gc = gc;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(-4, 4);
  auto draw = [&] { return integers ? static_cast<float>(small(rng)) : real(rng); };
  auto fill = [&](std::vector<float>& v, std::int64_t rows, std::int64_t cols, std::int64_t& ld) {
    ld = std::max<std::int64_t>(1, cols + gc.pad);
    v.assign(static_cast<std::size_t>(std::max<std::int64_t>(rows * ld, 1)),
             std::numeric_limits<float>::quiet_NaN());  // padding is never read: NaN shows it
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) v[r * ld + c] = draw();
  };
  const bool na = gc.op_a == prims::Op::none, nb = gc.op_b == prims::Op::none;
  fill(p.a, na ? gc.m : gc.k, na ? gc.k : gc.m, p.lda);
  fill(p.b, nb ? gc.k : gc.n, nb ? gc.n : gc.k, p.ldb);
  fill(p.c, gc.m, gc.n, p.ldc);
  if (gc.beta == 0.0f)
    for (std::int64_t i = 0; i < gc.m; ++i)
      for (std::int64_t j = 0; j < gc.n; ++j)
        p.c[i * p.ldc + j] = std::numeric_limits<float>::quiet_NaN();
  p.expected.assign(gc.m * gc.n, 0.0);
  p.bound.assign(gc.m * gc.n, 0.0);
  for (std::int64_t i = 0; i < gc.m; ++i)
    for (std::int64_t j = 0; j < gc.n; ++j) {
      double sum = 0, abs_sum = 0;
      for (std::int64_t q = 0; q < gc.k; ++q) {
        const double t = double(p.op_a(i, q)) * p.op_b(q, j);
        sum += t;
        abs_sum += std::abs(t);
      }
      const double c0 = gc.beta == 0.0f ? 0.0 : p.c[i * p.ldc + j];
      p.expected[i * gc.n + j] = gc.alpha * sum + gc.beta * c0;
      p.bound[i * gc.n + j] = std::abs(gc.alpha) * abs_sum + std::abs(gc.beta * c0);
    }
  return p;
}

// Compares the computed C (ld = p.ldc) with the reference: |error| ≤ 2·(k+2)·eps·bound, the
// worst case of float32 summation of k terms (any order) plus the α and β roundings. Integer
// problems with α, β powers of two are exact. Padding after each row of C must be untouched.
inline void expect_gemm_matches(const GemmProblem& p, const std::vector<float>& c,
                                bool exact = false) {
  const double eps = std::numeric_limits<float>::epsilon();
  int reported = 0;
  for (std::int64_t i = 0; i < p.gc.m; ++i) {
    for (std::int64_t j = 0; j < p.gc.n; ++j) {
      const double got = c[i * p.ldc + j], want = p.expected[i * p.gc.n + j];
      const double tol = exact ? 0.0 : 2.0 * double(p.gc.k + 2) * eps * p.bound[i * p.gc.n + j];
      if (!(std::abs(got - want) <= tol) && reported++ < 5)
        ADD_FAILURE() << p.gc.describe() << ": C(" << i << "," << j << ") = " << got
                      << ", expected " << want << " ± " << tol;
    }
    for (std::int64_t j = p.gc.n; j < p.ldc && i * p.ldc + j < std::int64_t(c.size()); ++j)
      if (!std::isnan(c[i * p.ldc + j]) && reported++ < 5)
        ADD_FAILURE() << p.gc.describe() << ": padding of C row " << i << " was written";
  }
}

// Shapes around the tile sizes of both backends (6×16 CPU micro-tiles, 64/128 GPU block tiles,
// k steps of 8/16 and the CPU's k panels of 256), primes and degenerate sizes.
inline std::vector<std::array<std::int64_t, 3>> gemm_shapes() {
  return {{0, 5, 3},    {5, 0, 3},     {4, 5, 0},    {1, 1, 1},    {2, 3, 4},
          {7, 17, 31},  {15, 16, 17},  {16, 16, 16}, {31, 33, 9},  {63, 65, 257},
          {64, 64, 64}, {97, 101, 103}, {127, 129, 7}, {128, 128, 128}, {129, 257, 255},
          {200, 3, 513}, {3, 200, 300}, {257, 130, 65}};
}

}  // namespace dcsgrid::test
