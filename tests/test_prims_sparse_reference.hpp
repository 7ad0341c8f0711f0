// Sparse test matrices (uniform, skewed, empty rows, one long row, trilinear interpolation) and a
// float64 reference product with an error bound, shared by the CPU and CUDA sparse tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dcsgrid/prims/sparse.hpp"

namespace dcsgrid::test {

// rows × cols with row r holding length(r) entries at random columns (repeats allowed), values
// uniform in [-1, 1].
inline prims::CsrMatrix random_csr(std::int64_t rows, std::int64_t cols,
                                   const std::function<std::int64_t(std::int64_t)>& length,
                                   std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int32_t> column(0, static_cast<std::int32_t>(std::max<std::int64_t>(cols, 1) - 1));
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  prims::CsrMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.row_offsets.push_back(0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t len = cols > 0 ? length(r) : 0;
    for (std::int64_t i = 0; i < len; ++i) {
      a.columns.push_back(column(rng));
      a.values.push_back(value(rng));
    }
    a.row_offsets.push_back(a.nnz());
  }
  return a;
}

// Row lengths from a power law: P(length ≥ l) ~ l^-1.5 from 1 up to max_length, reproducible.
inline std::function<std::int64_t(std::int64_t)> power_law_lengths(std::int64_t max_length,
                                                                  std::uint64_t seed) {
  return [max_length, seed](std::int64_t r) {
    std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(r));
    const double u = std::uniform_real_distribution<double>(1e-9, 1.0)(rng);
    return std::min<std::int64_t>(max_length, static_cast<std::int64_t>(std::pow(u, -1.0 / 1.5)));
  };
}

// Trilinear interpolation weights of `points` random positions inside an n³ grid (x fastest):
// 8 nonzeros a row, columns = the corners of the point's cell.
inline prims::CsrMatrix trilinear_matrix(std::int64_t points, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> pos(0.0, double(n - 1));
  prims::CsrMatrix a;
  a.rows = points;
  a.cols = n * n * n;
  a.row_offsets.push_back(0);
  for (std::int64_t p = 0; p < points; ++p) {
    double f[3];
    std::int64_t c[3];
    for (int d = 0; d < 3; ++d) {
      const double x = pos(rng);
      c[d] = std::min<std::int64_t>(static_cast<std::int64_t>(x), n - 2);
      f[d] = x - double(c[d]);
    }
    for (int corner = 0; corner < 8; ++corner) {
      const int dx = corner & 1, dy = (corner >> 1) & 1, dz = corner >> 2;
      a.columns.push_back(static_cast<std::int32_t>(((c[2] + dz) * n + c[1] + dy) * n + c[0] + dx));
      a.values.push_back(static_cast<float>((dx ? f[0] : 1 - f[0]) * (dy ? f[1] : 1 - f[1]) *
                                            (dz ? f[2] : 1 - f[2])));
    }
    a.row_offsets.push_back(a.nnz());
  }
  return a;
}

inline std::vector<float> random_vector(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = value(rng);
  return v;
}

// y = A·x in float64 with, per row, the bound Σ|a||x| and the row length.
struct SpmvReference {
  std::vector<double> y, bound;
  std::vector<std::int64_t> length;
};

inline SpmvReference reference_spmv(const prims::CsrMatrix& a, const float* x) {
  SpmvReference ref;
  ref.y.assign(a.rows, 0.0);
  ref.bound.assign(a.rows, 0.0);
  ref.length.assign(a.rows, 0);
  for (std::int64_t r = 0; r < a.rows; ++r) {
    for (std::int64_t i = a.row_offsets[r]; i < a.row_offsets[r + 1]; ++i) {
      const double t = double(a.values[i]) * x[a.columns[i]];
      ref.y[r] += t;
      ref.bound[r] += std::abs(t);
    }
    ref.length[r] = a.row_offsets[r + 1] - a.row_offsets[r];
  }
  return ref;
}

// |y − y_ref| ≤ 2·(length + 1)·eps·Σ|a||x| row by row: float32 summation in any order.
inline void expect_spmv_matches(const SpmvReference& ref, const float* y, const std::string& what) {
  const double eps = std::numeric_limits<float>::epsilon();
  int reported = 0;
  for (std::size_t r = 0; r < ref.y.size(); ++r) {
    const double tol = 2.0 * double(ref.length[r] + 1) * eps * ref.bound[r];
    if (!(std::abs(y[r] - ref.y[r]) <= tol) && reported++ < 5)
      ADD_FAILURE() << what << ": row " << r << " = " << y[r] << ", expected " << ref.y[r]
                    << " ± " << tol << " (" << ref.length[r] << " entries)";
  }
}

// Matrices covering the special cases: no rows, one row, sizes 2^k ± 1 and primes, empty rows,
// equal rows, one long row among short ones, power-law rows.
struct NamedCsr {
  std::string name;
  prims::CsrMatrix matrix;
};

// ELL pads every row to the longest: skewed matrices are for the hybrid, not for plain ELL.
inline bool ell_is_practical(const prims::CsrMatrix& a) {
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < a.rows; ++r)
    longest = std::max(longest, a.row_offsets[r + 1] - a.row_offsets[r]);
  return a.rows * longest <= (std::int64_t(1) << 22);
}

inline std::vector<NamedCsr> sparse_test_matrices() {
  std::vector<NamedCsr> out;
  out.push_back({"no rows", random_csr(0, 5, [](std::int64_t) { return 1; }, 1)});
  out.push_back({"no columns", random_csr(4, 0, [](std::int64_t) { return 0; }, 2)});
  out.push_back({"one row", random_csr(1, 7, [](std::int64_t) { return 3; }, 3)});
  out.push_back({"all empty", random_csr(33, 10, [](std::int64_t) { return 0; }, 4)});
  out.push_back({"equal rows 8, 1023 rows", random_csr(1023, 500, [](std::int64_t) { return 8; }, 5)});
  out.push_back({"equal rows 1, 1025 rows", random_csr(1025, 300, [](std::int64_t) { return 1; }, 6)});
  out.push_back({"equal rows 31, 257 rows", random_csr(257, 1000, [](std::int64_t) { return 31; }, 7)});
  out.push_back({"every third row empty, 4099 rows",
                 random_csr(4099, 2000, [](std::int64_t r) { return r % 3 == 0 ? 0 : 1 + r % 13; }, 8)});
  out.push_back({"one long row",
                 random_csr(5003, 4000, [](std::int64_t r) { return r == 2500 ? 20000 : 1 + r % 5; }, 9)});
  out.push_back({"rows of 0..300 entries",
                 random_csr(3001, 3000, [](std::int64_t r) { return (r * 7919) % 301; }, 10)});
  out.push_back({"power law", random_csr(20011, 20011, power_law_lengths(5000, 11), 11)});
  out.push_back({"trilinear", trilinear_matrix(10007, 23, 12)});
  return out;
}

}  // namespace dcsgrid::test
