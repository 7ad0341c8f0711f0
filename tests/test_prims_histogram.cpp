// CPU histograms against naive counting loops: many sizes, bin counts and key patterns; value
// histograms with every special value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/prims/histogram.hpp"
#include "test_prims_histogram_cases.hpp"

namespace dcsgrid::test {
namespace {

TEST(CpuHistogram, KeysMatchNaiveLoop) {
  for (const std::uint32_t bins : {1u, 2u, 7u, 256u, 1024u, 4096u, 4097u, 65536u, 300000u})
    for (const KeyPattern pattern : all_key_patterns)
      for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(3), std::size_t(4095),
                                  std::size_t(65537), std::size_t(1299709)}) {
        const auto keys = make_keys(n, bins, pattern, n + bins);
        std::vector<std::uint32_t> counts(bins, 12345);  // must be overwritten
        prims::histogram_cpu(keys.data(), n, counts.data(), bins);
        EXPECT_EQ(counts, naive_key_histogram(keys, bins))
            << pattern_name(pattern) << " bins=" << bins << " n=" << n;
      }
}

TEST(CpuHistogram, ManyMillionKeys) {
  const std::size_t n = 5000011;
  for (const KeyPattern pattern : {KeyPattern::uniform, KeyPattern::one_bin}) {
    const auto keys = make_keys(n, 256, pattern, 5);
    std::vector<std::uint32_t> counts(256);
    prims::histogram_cpu(keys.data(), n, counts.data(), 256);
    EXPECT_EQ(counts, naive_key_histogram(keys, 256)) << pattern_name(pattern);
  }
}

TEST(CpuHistogram, ValuesMatchNaiveLoop) {
  for (const std::uint32_t bins : {1u, 3u, 100u, 4096u, 100000u})
    for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(1299709)}) {
      const auto values = make_values(n, bins, n + bins);
      const prims::ValueHistogram h = prims::histogram_values_cpu(values.data(), n, -2.0, 3.0, bins);
      const auto ref = naive_value_histogram<double>(values, -2.0, 3.0, bins);
      const std::string what = "bins=" + std::to_string(bins) + " n=" + std::to_string(n);
      EXPECT_EQ(h.lo, -2.0);
      EXPECT_EQ(h.hi, 3.0);
      ASSERT_EQ(h.counts.size(), bins) << what;
      EXPECT_TRUE(std::equal(h.counts.begin(), h.counts.end(), ref.begin())) << what;
      EXPECT_EQ(h.underflow, ref[bins]) << what;
      EXPECT_EQ(h.overflow, ref[bins + 1]) << what;
      EXPECT_EQ(h.nan, ref[bins + 2]) << what;
    }
}

TEST(CpuHistogram, ValueEdgesLandWhereDocumented) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v = {0.0f, 0.25f, 0.5f, std::nextafter(1.0f, 0.0f), 1.0f, -0.0f,
                                std::nextafter(0.0f, -1.0f), inf, -inf,
                                std::numeric_limits<float>::quiet_NaN()};
  const prims::ValueHistogram h = prims::histogram_values_cpu(v.data(), v.size(), 0.0, 1.0, 4);
  EXPECT_EQ(h.counts, (std::vector<std::uint64_t>{2, 1, 1, 1}));  // 0, -0 | 0.25 | 0.5 | 1−ε
  EXPECT_EQ(h.underflow, 2u);  // −denormal, −inf
  EXPECT_EQ(h.overflow, 2u);   // 1, +inf
  EXPECT_EQ(h.nan, 1u);
}

TEST(CpuHistogram, BadRangeIsAnError) {
  const float v = 1.0f;
  EXPECT_THROW(prims::histogram_values_cpu(&v, 1, 1.0, 1.0, 4), Error);
  EXPECT_THROW(prims::histogram_values_cpu(&v, 1, 0.0, INFINITY, 4), Error);
  EXPECT_THROW(prims::histogram_values_cpu(&v, 1, 0.0, 1.0, 0), Error);
}

}  // namespace
}  // namespace dcsgrid::test
