// Sparse matrix checks and conversions between CSR, ELL and hybrid ELL+COO.
#include <omp.h>

#include <algorithm>
#include <limits>
#include <string>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/prims/sparse.hpp"

namespace dcsgrid::prims {
namespace {

// Loops shorter than this run on one thread: a thread team costs more than it saves.
constexpr std::int64_t kParallelMin = 1 << 16;

[[noreturn]] void fail(const char* what, const std::string& problem) {
  throw Error(std::string(what) + ": " + problem);
}

void check_dimensions(const char* what, std::int64_t rows, std::int64_t cols) {
  constexpr std::int64_t limit = std::numeric_limits<std::int32_t>::max();
  if (rows < 0 || cols < 0 || rows > limit || cols > limit)
    fail(what, "dimensions " + std::to_string(rows) + "x" + std::to_string(cols) +
                   " outside [0, 2^31)");
}

// Index of the first column outside [lowest, cols), or -1 (parallel scan, first by position).
std::int64_t first_bad_column(const std::vector<std::int32_t>& columns, std::int64_t cols,
                              std::int32_t lowest) {
  const auto n = static_cast<std::int64_t>(columns.size());
  std::int64_t first = n;
#pragma omp parallel for num_threads(team_size()) schedule(static) reduction(min : first) \
    if (n > kParallelMin)
  for (std::int64_t i = 0; i < n; ++i)
    if (columns[i] < lowest || columns[i] >= cols) first = std::min(first, i);
  return first == n ? -1 : first;
}

std::int64_t row_length(const CsrMatrix& a, std::int64_t r) {
  return a.row_offsets[r + 1] - a.row_offsets[r];
}

// An ELL of `width` for the first min(length, width) entries of each row of a (checked).
EllMatrix ell_part(const CsrMatrix& a, std::int64_t width) {
  EllMatrix e;
  e.rows = a.rows;
  e.cols = a.cols;
  e.width = width;
  if (width > 0 && a.rows > std::numeric_limits<std::int64_t>::max() / width / 8)
    fail("ELL", std::to_string(a.rows) + " rows of width " + std::to_string(width) + " is too large");
  e.columns.assign(static_cast<std::size_t>(a.rows * width), -1);
  e.values.assign(static_cast<std::size_t>(a.rows * width), 0.0f);
#pragma omp parallel for num_threads(team_size()) schedule(static) \
    if (a.rows * width > kParallelMin)
  for (std::int64_t r = 0; r < a.rows; ++r) {
    const std::int64_t begin = a.row_offsets[r], len = std::min(width, row_length(a, r));
    for (std::int64_t i = 0; i < len; ++i) {
      e.columns[i * a.rows + r] = a.columns[begin + i];
      e.values[i * a.rows + r] = a.values[begin + i];
    }
  }
  return e;
}

// Row offsets from per-row counts (counts[r] for r < rows; the result has rows + 1 entries).
std::vector<std::int64_t> offsets_from_counts(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> offsets(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) offsets[r + 1] = offsets[r] + counts[r];
  return offsets;
}

// CSR of the ELL entries (padding dropped) followed, in each row, by the row-sorted COO entries.
CsrMatrix merge_to_csr(const EllMatrix& e, const std::vector<std::int32_t>& coo_rows,
                       const std::vector<std::int32_t>& coo_columns,
                       const std::vector<float>& coo_values) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(e.rows), 0);
#pragma omp parallel for num_threads(team_size()) schedule(static) \
    if (e.rows * e.width > kParallelMin)
  for (std::int64_t r = 0; r < e.rows; ++r)
    for (std::int64_t i = 0; i < e.width; ++i) counts[r] += e.columns[i * e.rows + r] >= 0;
  for (std::int32_t r : coo_rows) ++counts[r];
  CsrMatrix c;
  c.rows = e.rows;
  c.cols = e.cols;
  c.row_offsets = offsets_from_counts(counts);
  c.columns.resize(static_cast<std::size_t>(c.row_offsets.back()));
  c.values.resize(c.columns.size());
  std::vector<std::int64_t> next(c.row_offsets.begin(), c.row_offsets.end() - 1);
#pragma omp parallel for num_threads(team_size()) schedule(static) \
    if (e.rows * e.width > kParallelMin)
  for (std::int64_t r = 0; r < e.rows; ++r)
    for (std::int64_t i = 0; i < e.width; ++i)
      if (const std::int32_t col = e.columns[i * e.rows + r]; col >= 0) {
        c.columns[next[r]] = col;
        c.values[next[r]++] = e.values[i * e.rows + r];
      }
  for (std::size_t i = 0; i < coo_rows.size(); ++i) {
    const std::int64_t dst = next[coo_rows[i]]++;
    c.columns[dst] = coo_columns[i];
    c.values[dst] = coo_values[i];
  }
  return c;
}

}  // namespace

void check(const CsrMatrix& a) {
  check_dimensions("CSR matrix", a.rows, a.cols);
  if (a.row_offsets.size() != static_cast<std::size_t>(a.rows + 1))
    fail("CSR matrix", std::to_string(a.row_offsets.size()) + " row offsets for " +
                           std::to_string(a.rows) + " rows (need rows + 1)");
  if (a.columns.size() != a.values.size())
    fail("CSR matrix", std::to_string(a.columns.size()) + " columns but " +
                           std::to_string(a.values.size()) + " values");
  if (a.row_offsets.front() != 0) fail("CSR matrix", "row_offsets[0] is not 0");
  for (std::int64_t r = 0; r < a.rows; ++r)
    if (a.row_offsets[r + 1] < a.row_offsets[r])
      fail("CSR matrix", "row_offsets decrease at row " + std::to_string(r));
  if (a.row_offsets.back() != a.nnz())
    fail("CSR matrix", "row_offsets end at " + std::to_string(a.row_offsets.back()) + ", not at nnz " +
                           std::to_string(a.nnz()));
  if (const std::int64_t i = first_bad_column(a.columns, a.cols, 0); i >= 0)
    fail("CSR matrix", "entry " + std::to_string(i) + " has column " + std::to_string(a.columns[i]) +
                           " outside [0, " + std::to_string(a.cols) + ")");
}

void check(const EllMatrix& a) {
  check_dimensions("ELL matrix", a.rows, a.cols);
  if (a.width < 0) fail("ELL matrix", "negative width");
  const auto entries = static_cast<std::size_t>(a.rows * a.width);
  if (a.columns.size() != entries || a.values.size() != entries)
    fail("ELL matrix", std::to_string(a.columns.size()) + " columns and " +
                           std::to_string(a.values.size()) + " values for " + std::to_string(a.rows) +
                           " rows of width " + std::to_string(a.width));
  if (const std::int64_t i = first_bad_column(a.columns, a.cols, -1); i >= 0)
    fail("ELL matrix", "entry " + std::to_string(i) + " has column " + std::to_string(a.columns[i]) +
                           " outside [-1, " + std::to_string(a.cols) + ")");
}

void check(const HybridMatrix& a) {
  check(a.ell);
  const std::size_t n = a.coo_values.size();
  if (a.coo_rows.size() != n || a.coo_columns.size() != n)
    fail("hybrid matrix", "COO arrays differ in length");
  if (const std::int64_t i = first_bad_column(a.coo_columns, a.ell.cols, 0); i >= 0)
    fail("hybrid matrix", "COO entry " + std::to_string(i) + " has column " +
                              std::to_string(a.coo_columns[i]) + " outside the matrix");
  for (std::size_t i = 0; i < n; ++i)
    if (a.coo_rows[i] < 0 || a.coo_rows[i] >= a.ell.rows || (i > 0 && a.coo_rows[i] < a.coo_rows[i - 1]))
      fail("hybrid matrix", "COO entry " + std::to_string(i) + " has row " +
                                std::to_string(a.coo_rows[i]) + ": out of range or out of order");
}

EllMatrix csr_to_ell(const CsrMatrix& a) {
  check(a);
  std::int64_t width = 0;
#pragma omp parallel for num_threads(team_size()) schedule(static) reduction(max : width) \
    if (a.rows > kParallelMin)
  for (std::int64_t r = 0; r < a.rows; ++r) width = std::max(width, row_length(a, r));
  return ell_part(a, width);
}

std::int64_t choose_ell_width(const CsrMatrix& a) {
  check(a);
  if (a.rows == 0) return 0;
  std::int64_t longest = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) longest = std::max(longest, row_length(a, r));
  std::vector<std::int64_t> rows_of_length(static_cast<std::size_t>(longest + 1), 0);
  for (std::int64_t r = 0; r < a.rows; ++r) ++rows_of_length[row_length(a, r)];
  const std::int64_t needed = std::max(a.rows / 3, std::min<std::int64_t>(a.rows, 4096));
  std::int64_t at_least = 0;  // rows with length ≥ w, for w going down from the longest
  for (std::int64_t w = longest; w > 0; --w) {
    at_least += rows_of_length[w];
    if (at_least >= needed) return w;
  }
  return 0;
}

HybridMatrix csr_to_hybrid(const CsrMatrix& a, std::int64_t ell_width) {
  const std::int64_t width = ell_width < 0 ? choose_ell_width(a) : (check(a), ell_width);
  HybridMatrix h;
  h.ell = ell_part(a, width);
  std::vector<std::int64_t> overflow(static_cast<std::size_t>(a.rows));
  for (std::int64_t r = 0; r < a.rows; ++r) overflow[r] = std::max<std::int64_t>(0, row_length(a, r) - width);
  const std::vector<std::int64_t> coo_offsets = offsets_from_counts(overflow);
  const auto coo_count = static_cast<std::size_t>(coo_offsets.back());
  h.coo_rows.resize(coo_count);
  h.coo_columns.resize(coo_count);
  h.coo_values.resize(coo_count);
#pragma omp parallel for num_threads(team_size()) schedule(static) if (a.nnz() > kParallelMin)
  for (std::int64_t r = 0; r < a.rows; ++r)
    for (std::int64_t i = 0; i < overflow[r]; ++i) {
      const std::int64_t src = a.row_offsets[r] + width + i, dst = coo_offsets[r] + i;
      h.coo_rows[dst] = static_cast<std::int32_t>(r);
      h.coo_columns[dst] = a.columns[src];
      h.coo_values[dst] = a.values[src];
    }
  return h;
}

CsrMatrix hybrid_to_csr(const HybridMatrix& a) {
  check(a);
  return merge_to_csr(a.ell, a.coo_rows, a.coo_columns, a.coo_values);
}

CsrMatrix ell_to_csr(const EllMatrix& a) {
  check(a);
  return merge_to_csr(a, {}, {}, {});
}

}  // namespace dcsgrid::prims
