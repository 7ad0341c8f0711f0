// CPU sparse products. CSR rows are dealt to threads in contiguous ranges of equal rows + nonzeros
// (a merge-path split of the row offsets), so skewed rows stay balanced without splitting a row.
// ELL runs over blocks of rows, entry by entry, which keeps its column-major reads contiguous.
#include <omp.h>

#include <algorithm>
#include <string>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/prims/sparse.hpp"

namespace dcsgrid::prims {
namespace {

// Products smaller than this run on one thread: a thread team costs more than it saves.
constexpr std::int64_t kParallelMin = 1 << 16;

void require(bool ok, const char* function, const std::string& problem) {
  if (!ok) throw Error(std::string(function) + ": " + problem);
}

void check_sizes(const CsrMatrix& a, const char* function) {
  require(a.rows >= 0 && a.row_offsets.size() == static_cast<std::size_t>(a.rows + 1) &&
              a.columns.size() == a.values.size() && a.row_offsets.back() == a.nnz(),
          function, "malformed CSR matrix (see prims::check)");
}

void check_sizes(const EllMatrix& a, const char* function) {
  require(a.rows >= 0 && a.width >= 0 &&
              a.columns.size() == static_cast<std::size_t>(a.rows * a.width) &&
              a.values.size() == a.columns.size(),
          function, "malformed ELL matrix (see prims::check)");
}

// First row of thread t's share when rows + nonzeros are split evenly over `threads`: the first r
// with r + row_offsets[r] ≥ t·(rows + nnz)/threads.
std::int64_t balanced_row_begin(const CsrMatrix& a, int t, int threads) {
  const std::int64_t total = a.rows + a.nnz();
  const std::int64_t target = total / threads * t + total % threads * t / threads;
  std::int64_t lo = 0, hi = a.rows;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (mid + a.row_offsets[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Calls row_fn(r) for every row, each thread taking a balanced contiguous range.
template <typename RowFn>
void for_rows_balanced(const CsrMatrix& a, RowFn&& row_fn) {
#pragma omp parallel num_threads(team_size()) if (a.rows + a.nnz() > kParallelMin)
  {
    const int t = omp_get_thread_num(), threads = omp_get_num_threads();
    const std::int64_t begin = balanced_row_begin(a, t, threads);
    const std::int64_t end = t + 1 == threads ? a.rows : balanced_row_begin(a, t + 1, threads);
    for (std::int64_t r = begin; r < end; ++r) row_fn(r);
  }
}

void ell_rows(const EllMatrix& a, const float* x, float* y) {
  constexpr std::int64_t block = 256;
#pragma omp parallel for num_threads(team_size()) schedule(static) \
    if (a.rows * a.width > kParallelMin)
  for (std::int64_t r0 = 0; r0 < a.rows; r0 += block) {
    const std::int64_t count = std::min(block, a.rows - r0);
    float sum[block] = {};
    for (std::int64_t e = 0; e < a.width; ++e) {
      const std::int32_t* cols = a.columns.data() + e * a.rows + r0;
      const float* vals = a.values.data() + e * a.rows + r0;
      for (std::int64_t i = 0; i < count; ++i)
        if (cols[i] >= 0) sum[i] += vals[i] * x[cols[i]];
    }
    std::copy(sum, sum + count, y + r0);
  }
}

}  // namespace

void spmv_cpu(const CsrMatrix& a, const float* x, float* y) {
  check_sizes(a, "spmv_cpu");
  for_rows_balanced(a, [&](std::int64_t r) {
    float sum = 0.0f;
    for (std::int64_t i = a.row_offsets[r]; i < a.row_offsets[r + 1]; ++i)
      sum += a.values[i] * x[a.columns[i]];
    y[r] = sum;
  });
}

void spmv_cpu(const EllMatrix& a, const float* x, float* y) {
  check_sizes(a, "spmv_cpu");
  ell_rows(a, x, y);
}

void spmv_cpu(const HybridMatrix& a, const float* x, float* y) {
  check_sizes(a.ell, "spmv_cpu");
  const auto count = static_cast<std::int64_t>(a.coo_values.size());
  require(a.coo_rows.size() == a.coo_values.size() && a.coo_columns.size() == a.coo_values.size(),
          "spmv_cpu", "malformed hybrid matrix (see prims::check)");
  ell_rows(a.ell, x, y);
  // COO entries are sorted by row: each thread takes a range that starts at a row's first entry,
  // so every row's overflow is added by one thread, in order.
#pragma omp parallel num_threads(team_size()) if (count > kParallelMin)
  {
    const int t = omp_get_thread_num(), threads = omp_get_num_threads();
    auto range_start = [&](int u) {
      std::int64_t i = count / threads * u + count % threads * u / threads;
      while (i > 0 && i < count && a.coo_rows[i] == a.coo_rows[i - 1]) ++i;
      return i;
    };
    const std::int64_t end = t + 1 == threads ? count : range_start(t + 1);
    for (std::int64_t i = range_start(t); i < end; ++i)
      y[a.coo_rows[i]] += a.coo_values[i] * x[a.coo_columns[i]];
  }
}

void spmm_cpu(const CsrMatrix& a, const float* x, std::int64_t ldx, std::int64_t count, float* y,
              std::int64_t ldy) {
  check_sizes(a, "spmm_cpu");
  require(count >= 0 && (count == 0 || (ldx >= a.cols && ldy >= a.rows)), "spmm_cpu",
          "bad right-hand side count or leading dimensions (ldx ≥ cols, ldy ≥ rows)");
  constexpr std::int64_t kBlock = 16;  // right-hand sides accumulated together per row
  for_rows_balanced(a, [&](std::int64_t r) {
    for (std::int64_t j0 = 0; j0 < count; j0 += kBlock) {
      const std::int64_t nj = std::min(kBlock, count - j0);
      float sum[kBlock] = {};
      for (std::int64_t i = a.row_offsets[r]; i < a.row_offsets[r + 1]; ++i) {
        const float v = a.values[i];
        const float* xc = x + j0 * ldx + a.columns[i];
        for (std::int64_t j = 0; j < nj; ++j) sum[j] += v * xc[j * ldx];
      }
      for (std::int64_t j = 0; j < nj; ++j) y[(j0 + j) * ldy + r] = sum[j];
    }
  });
}

}  // namespace dcsgrid::prims
