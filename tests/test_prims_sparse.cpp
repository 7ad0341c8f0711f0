// CPU sparse products and conversions: CSR, ELL and hybrid SpMV against a float64 loop on
// special-case matrices, SpMM, round trips, the ELL width rule, padding semantics, checks.
#include <gtest/gtest.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/prims/sparse.hpp"
#include "test_prims_sparse_reference.hpp"

namespace dcsgrid::test {
namespace {

void expect_same_csr(const prims::CsrMatrix& a, const prims::CsrMatrix& b, const std::string& what) {
  EXPECT_EQ(a.rows, b.rows) << what;
  EXPECT_EQ(a.cols, b.cols) << what;
  EXPECT_EQ(a.row_offsets, b.row_offsets) << what;
  EXPECT_EQ(a.columns, b.columns) << what;
  EXPECT_EQ(a.values, b.values) << what;
}

TEST(SparseCpu, AllFormatsMatchFloat64) {
  std::uint64_t seed = 100;
  for (const auto& [name, a] : sparse_test_matrices()) {
    const std::vector<float> x = random_vector(a.cols, seed++);
    const SpmvReference ref = reference_spmv(a, x.data());
    std::vector<float> y(a.rows, std::numeric_limits<float>::quiet_NaN());
    prims::spmv_cpu(a, x.data(), y.data());
    expect_spmv_matches(ref, y.data(), name + " (CSR)");
    if (ell_is_practical(a)) {
      std::fill(y.begin(), y.end(), std::numeric_limits<float>::quiet_NaN());
      prims::spmv_cpu(prims::csr_to_ell(a), x.data(), y.data());
      expect_spmv_matches(ref, y.data(), name + " (ELL)");
    }
    for (std::int64_t width : {-1, 0, 2}) {
      std::fill(y.begin(), y.end(), std::numeric_limits<float>::quiet_NaN());
      prims::spmv_cpu(prims::csr_to_hybrid(a, width), x.data(), y.data());
      expect_spmv_matches(ref, y.data(), name + " (hybrid, width " + std::to_string(width) + ")");
    }
  }
}

TEST(SparseCpu, SpmmMatchesColumnByColumn) {
  for (const auto& [name, a] : sparse_test_matrices()) {
    for (std::int64_t count : {1, 3, 17}) {
      const std::int64_t ldx = a.cols + 3, ldy = a.rows + 5;
      const std::vector<float> x = random_vector(ldx * count, 7 + count);
      std::vector<float> y(ldy * count, -7.0f);
      prims::spmm_cpu(a, x.data(), ldx, count, y.data(), ldy);
      for (std::int64_t j = 0; j < count; ++j) {
        expect_spmv_matches(reference_spmv(a, x.data() + j * ldx), y.data() + j * ldy,
                            name + " (SpMM column " + std::to_string(j) + ")");
        for (std::int64_t r = a.rows; r < ldy; ++r) ASSERT_EQ(y[j * ldy + r], -7.0f) << "padding written";
      }
    }
  }
}

TEST(SparseCpu, ConversionsRoundTrip) {
  for (const auto& [name, a] : sparse_test_matrices()) {
    std::int64_t longest = 0;
    for (std::int64_t r = 0; r < a.rows; ++r)
      longest = std::max(longest, a.row_offsets[r + 1] - a.row_offsets[r]);
    if (ell_is_practical(a)) {
      const prims::EllMatrix ell = prims::csr_to_ell(a);
      EXPECT_EQ(ell.width, longest) << name;
      expect_same_csr(prims::ell_to_csr(ell), a, name + " via ELL");
    }
    for (std::int64_t width : {std::int64_t(-1), std::int64_t(0), std::int64_t(1), std::int64_t(5),
                               std::min<std::int64_t>(longest + 2, 300)}) {
      const prims::HybridMatrix h = prims::csr_to_hybrid(a, width);
      if (width >= 0) EXPECT_EQ(h.ell.width, width) << name;
      std::int64_t in_ell = 0;
      for (std::int32_t c : h.ell.columns) in_ell += c >= 0;
      EXPECT_EQ(in_ell + std::int64_t(h.coo_values.size()), a.nnz()) << name;
      expect_same_csr(prims::hybrid_to_csr(h), a, name + " via hybrid width " + std::to_string(width));
    }
  }
}

// Explicit zeros are entries (NaN·0 = NaN, as the loop gives); ELL padding reads nothing.
TEST(SparseCpu, PaddingIsNotAnEntryButExplicitZerosAre) {
  prims::CsrMatrix a;
  a.rows = 3;
  a.cols = 3;
  a.row_offsets = {0, 2, 3, 3};
  a.columns = {1, 2, 0};
  a.values = {2.0f, 3.0f, 0.0f};
  const std::vector<float> x = {std::numeric_limits<float>::quiet_NaN(), 1.0f, 2.0f};
  const prims::EllMatrix ell = prims::csr_to_ell(a);
  EXPECT_EQ(ell.columns, (std::vector<std::int32_t>{1, 0, -1, 2, -1, -1}));
  std::vector<float> y(3);
  for (int format = 0; format < 3; ++format) {
    if (format == 0) prims::spmv_cpu(a, x.data(), y.data());
    if (format == 1) prims::spmv_cpu(ell, x.data(), y.data());
    if (format == 2) prims::spmv_cpu(prims::csr_to_hybrid(a, 1), x.data(), y.data());
    EXPECT_EQ(y[0], 8.0f) << format;
    EXPECT_TRUE(std::isnan(y[1])) << format;
    EXPECT_EQ(y[2], 0.0f) << format;
  }
}

// Bell & Garland: the widest w that at least max(rows/3, min(rows, 4096)) rows reach.
TEST(SparseCpu, EllWidthRule) {
  const auto mostly_8 = random_csr(10000, 100, [](std::int64_t r) { return r < 9000 ? 8 : 50; }, 1);
  EXPECT_EQ(prims::choose_ell_width(mostly_8), 8);
  const auto half_long = random_csr(30000, 100, [](std::int64_t r) { return r % 2 ? 4 : 40; }, 2);
  EXPECT_EQ(prims::choose_ell_width(half_long), 40);  // 15000 rows ≥ 10000 reach 40
  const auto small = random_csr(10, 100, [](std::int64_t r) { return 3 + r; }, 3);
  EXPECT_EQ(prims::choose_ell_width(small), 3);  // fewer than 4096 rows: all rows must reach w
  EXPECT_EQ(prims::choose_ell_width(random_csr(0, 3, [](std::int64_t) { return 0; }, 4)), 0);
}

TEST(SparseCpu, ChecksRejectMalformedMatrices) {
  prims::CsrMatrix good = random_csr(5, 5, [](std::int64_t) { return 2; }, 5);
  EXPECT_NO_THROW(prims::check(good));
  auto broken = [&](auto&& edit) {
    prims::CsrMatrix a = good;
    edit(a);
    return a;
  };
  EXPECT_THROW(prims::check(broken([](auto& a) { a.row_offsets.pop_back(); })), Error);
  EXPECT_THROW(prims::check(broken([](auto& a) { a.row_offsets[2] = 9; })), Error);
  EXPECT_THROW(prims::check(broken([](auto& a) { a.row_offsets.back() = 3; })), Error);
  EXPECT_THROW(prims::check(broken([](auto& a) { a.columns[4] = 5; })), Error);
  EXPECT_THROW(prims::check(broken([](auto& a) { a.columns[4] = -1; })), Error);
  EXPECT_THROW(prims::check(broken([](auto& a) { a.values.pop_back(); })), Error);
  EXPECT_THROW(prims::check(broken([](auto& a) { a.cols = std::int64_t(1) << 31; })), Error);
  EXPECT_THROW(prims::csr_to_ell(broken([](auto& a) { a.columns[0] = 99; })), Error);
  prims::HybridMatrix h = prims::csr_to_hybrid(good, 1);
  std::swap(h.coo_rows.front(), h.coo_rows.back());
  EXPECT_THROW(prims::check(h), Error);
  prims::EllMatrix e = prims::csr_to_ell(good);
  e.values.pop_back();
  EXPECT_THROW(prims::check(e), Error);
  std::vector<float> x(5), y(5);
  EXPECT_THROW(prims::spmv_cpu(broken([](auto& a) { a.values.pop_back(); }), x.data(), y.data()), Error);
  EXPECT_THROW(prims::spmm_cpu(good, x.data(), 4, 1, y.data(), 5), Error);
}

}  // namespace
}  // namespace dcsgrid::test
