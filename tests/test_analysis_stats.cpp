// Map statistics against naive float64 loops; stats stored into and read back from map files.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "helpers.hpp"

using namespace dcsgrid;
using namespace dcsgrid::analysis;

namespace {

std::vector<float> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(-3.0, 7.0);
  std::vector<float> v(n);
  for (auto& x : v) x = float(normal(rng));
  return v;
}

struct Naive {
  std::size_t count = 0;
  double min = INFINITY, max = -INFINITY, mean = 0, stddev = 0;
};
Naive naive(const std::vector<float>& v) {
  Naive s;
  double sum = 0;
  for (float x : v) {
    if (!std::isfinite(x)) continue;
    ++s.count;
    sum += x;
    s.min = std::min(s.min, double(x));
    s.max = std::max(s.max, double(x));
  }
  s.mean = sum / double(s.count);
  double m2 = 0;
  for (float x : v)
    if (std::isfinite(x)) m2 += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(m2 / double(s.count));
  return s;
}

// Counts per bin by direct comparison with the edges, in double; last bin closed when asked.
std::vector<std::uint64_t> naive_counts(const std::vector<float>& v, const std::vector<double>& edges,
                                        bool last_closed) {
  std::vector<std::uint64_t> counts(edges.size() - 1, 0);
  for (float x : v) {
    if (!std::isfinite(x)) continue;
    for (std::size_t b = 0; b + 1 < edges.size(); ++b) {
      const bool last = b + 2 == edges.size();
      if (x >= edges[b] && (x < edges[b + 1] || (last && last_closed && x == edges[b + 1]))) {
        ++counts[b];
        break;
      }
    }
  }
  return counts;
}

}  // namespace

TEST(Stats, MomentsAndAutomaticHistogramAgainstNaiveLoops) {
  std::vector<float> v = random_values(300001, 3);  // several blocks, a partial last one
  v[5] = std::numeric_limits<float>::quiet_NaN();
  v[70000] = std::numeric_limits<float>::infinity();
  v[200000] = -std::numeric_limits<float>::infinity();
  HistogramOptions o;
  o.bins = 37;
  const MapStats s = map_stats(v, o);
  const Naive n = naive(v);
  EXPECT_EQ(s.count, n.count);
  EXPECT_EQ(s.non_finite, 3u);
  EXPECT_EQ(s.min, n.min);
  EXPECT_EQ(s.max, n.max);
  EXPECT_NEAR(s.mean, n.mean, 1e-12 * std::abs(n.mean) + 1e-12);
  EXPECT_NEAR(s.stddev, n.stddev, 1e-12 * n.stddev);
  ASSERT_EQ(s.edges.size(), 38u);
  EXPECT_EQ(s.edges.front(), n.min);
  EXPECT_NEAR(s.edges.back(), n.max, 1e-12);
  // Bin assignment near the edges can differ by rounding between edge comparison and the
  // primitive's (v - lo)·scale; the totals cannot.
  const auto counts = naive_counts(v, s.edges, true);
  std::uint64_t total = 0, differences = 0;
  for (std::size_t b = 0; b < counts.size(); ++b) {
    total += s.counts[b];
    differences += std::uint64_t(std::llabs(std::int64_t(s.counts[b]) - std::int64_t(counts[b])));
  }
  EXPECT_EQ(total, n.count);
  EXPECT_LE(differences, 4u);
  EXPECT_EQ(s.below, 0u);
  EXPECT_EQ(s.above, 0u);
  EXPECT_GE(s.counts.back(), 1u);  // the maximum is in the last bin
}

TEST(Stats, GivenRangeCountsOutsideValues) {
  const std::vector<float> v = {-5, -1, -0.5f, 0, 0.25f, 0.99f, 1, 2, NAN};
  HistogramOptions o;
  o.bins = 4;
  o.lo = -1;
  o.hi = 1;
  const MapStats s = map_stats(v, o);
  EXPECT_EQ(s.below, 1u);  // -5
  EXPECT_EQ(s.above, 2u);  // 1 (= hi) and 2
  EXPECT_EQ(s.counts, (std::vector<std::uint64_t>{1, 1, 2, 1}));
  EXPECT_EQ(s.edges, (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_EQ(s.non_finite, 1u);
  EXPECT_EQ(s.count, 8u);
  EXPECT_EQ(s.min, -5);
  EXPECT_EQ(s.max, 2);
}

// Infinities and NaN counted apart wherever they fall: in the 8-value lanes the blocks are
// summed in and in the tail after them; the extremes in the tail only.
TEST(Stats, NonFiniteValuesApartInLanesAndTail) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {inf, 0.5f, -inf, NAN, 0.25f, -inf, inf, inf,        // lanes
                          -0.75f, 0.5f, NAN, NAN, 0.0f, 0.125f, -0.25f, 0.5f,  // lanes
                          inf, -9.0f, -inf, 7.0f, NAN};                        // tail
  HistogramOptions o;
  o.bins = 2;
  o.lo = -1;
  o.hi = 1;
  const MapStats s = map_stats(v, o);
  const Naive n = naive(v);
  EXPECT_EQ(s.count, 10u);
  EXPECT_EQ(s.non_finite, 11u);
  EXPECT_EQ(s.min, -9.0);
  EXPECT_EQ(s.max, 7.0);
  EXPECT_NEAR(s.mean, n.mean, 1e-15);
  EXPECT_NEAR(s.stddev, n.stddev, 1e-12 * n.stddev);
  EXPECT_EQ(s.below, 1u);  // -9 (the infinities are not values outside the range)
  EXPECT_EQ(s.above, 1u);  // 7
  EXPECT_EQ(s.counts, (std::vector<std::uint64_t>{2, 6}));  // -0.75 -0.25 | 0 0.125 0.25 0.5 ×3
}

TEST(Stats, ConstantAndEmptyMapsAndBadOptions) {
  const std::vector<float> c(1000, 2.5f);
  const MapStats s = map_stats(c, {});
  EXPECT_EQ(s.mean, 2.5);
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.edges.front(), 2.0);
  EXPECT_EQ(s.edges.back(), 3.0);
  std::uint64_t total = 0;
  for (auto k : s.counts) total += k;
  EXPECT_EQ(total, 1000u);

  // Issue 21: a constant map of 1e20 (and of the largest floats, either sign): 0.5 vanishes in
  // the rounding of such values, so the range must widen with them and hold every value.
  for (const float value : {1e20f, -1e20f, std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max()}) {
    const std::vector<float> big(1000, value);
    const MapStats b = map_stats(big, {});
    EXPECT_EQ(b.mean, double(value));
    EXPECT_LT(b.edges.front(), double(value));
    EXPECT_GT(b.edges.back(), double(value));
    std::uint64_t in_bins = 0;
    for (auto k : b.counts) in_bins += k;
    EXPECT_EQ(in_bins, 1000u) << value;
    EXPECT_EQ(b.below + b.above, 0u) << value;
  }

  const std::vector<float> nan(4, NAN);
  const MapStats e = map_stats(nan, {});
  EXPECT_EQ(e.count, 0u);
  EXPECT_TRUE(std::isnan(e.mean));

  HistogramOptions bad;
  bad.bins = 0;
  EXPECT_THROW(map_stats(c, bad), Error);
  bad.bins = 4;
  bad.lo = 1;
  EXPECT_THROW(map_stats(c, bad), Error);  // only one end
  bad.hi = 0;
  EXPECT_THROW(map_stats(c, bad), Error);  // lo > hi
}

TEST(Stats, FileStatsWrittenAndReadBack) {
  const auto dir = test::temp_dir("stats-file");
  const GridSpec g = grid_from_origin({0, 0, 0}, {9, 8, 7}, 0.5);
  const std::vector<float> data = random_values(g.point_count(), 9);
  io::MapMetadata meta;
  meta.units = "kcal/mol/e";
  const auto path = dir / "map.h5";
  io::write_hdf5(path, g, data.data(), meta);
  EXPECT_FALSE(read_stored_stats(path).has_value());

  FileStatsOptions o;
  o.file = path;
  o.histogram.bins = 10;
  o.write = true;
  const FileStats fs = file_stats(o);
  ASSERT_EQ(fs.maps.size(), 1u);
  EXPECT_EQ(fs.units, "kcal/mol/e");
  EXPECT_EQ(fs.maps[0].mean, map_stats(data, o.histogram).mean);
  EXPECT_EQ(fs.to_json()["maps"][0]["frame"], 0);

  const auto stored = read_stored_stats(path);
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->maps.size(), 1u);
  EXPECT_EQ(stored->maps[0].count, g.point_count());
  EXPECT_EQ(stored->maps[0].non_finite, 0u);
  EXPECT_EQ(stored->maps[0].min, fs.maps[0].min);
  EXPECT_EQ(stored->maps[0].stddev, fs.maps[0].stddev);
  EXPECT_EQ(stored->maps[0].counts, fs.maps[0].counts);
  EXPECT_EQ(stored->maps[0].edges, fs.maps[0].edges);
  // The map itself is untouched, and writing again replaces the stats.
  EXPECT_EQ(io::read_hdf5(path).data, data);
  o.histogram.bins = 3;
  file_stats(o);
  EXPECT_EQ(read_stored_stats(path)->maps[0].counts.size(), 3u);
}
