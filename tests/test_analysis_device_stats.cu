// DeviceMapStats (analysis/device_stats.hpp): the statistics of a map on the GPU equal map_stats'
// of the same values on the host bit for bit (sums, extremes with the sign of a zero, counts, the
// histogram), for maps that end inside a block and inside a group of eight, with NaN and
// infinities, constant and empty maps, given ranges; and both agree with a plain float64 loop
// written here (mean and deviation to rounding, the histogram's counts exactly).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "dcsgrid/analysis/device_stats.hpp"
#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "helpers.hpp"

namespace dcsgrid::test {
namespace {

std::unique_ptr<engine::CudaDeviceMap> upload(const std::vector<float>& v, std::size_t extra = 0) {
  auto map = std::make_unique<engine::CudaDeviceMap>(v.size() + extra);
  if (!v.empty())
    DCSGRID_CUDA_CHECK(cudaMemcpy(map->data(), v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
  return map;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_identical(const analysis::MapStats& device, const analysis::MapStats& host) {
  EXPECT_EQ(device.count, host.count);
  EXPECT_EQ(device.non_finite, host.non_finite);
  EXPECT_TRUE(same_bits(device.min, host.min)) << device.min << " vs " << host.min;
  EXPECT_TRUE(same_bits(device.max, host.max)) << device.max << " vs " << host.max;
  EXPECT_TRUE(same_bits(device.mean, host.mean)) << device.mean << " vs " << host.mean;
  EXPECT_TRUE(same_bits(device.stddev, host.stddev)) << device.stddev << " vs " << host.stddev;
  EXPECT_EQ(device.edges, host.edges);
  EXPECT_EQ(device.counts, host.counts);
  EXPECT_EQ(device.below, host.below);
  EXPECT_EQ(device.above, host.above);
}

// The figures from a plain loop: mean and population deviation of the finite values in float64
// (two passes), and each finite value's bin over [lo, hi) by floor((v − lo)·bins/(hi − lo)).
void expect_plain_figures(const std::vector<float>& v, const analysis::MapStats& s) {
  double sum = 0;
  std::size_t count = 0;
  for (float x : v)
    if (std::isfinite(x)) sum += x, ++count;
  ASSERT_EQ(s.count, count);
  if (count == 0) return;
  const double mean = sum / double(count);
  double m2 = 0;
  for (float x : v)
    if (std::isfinite(x)) m2 += (x - mean) * (x - mean);
  EXPECT_NEAR(s.mean, mean, 1e-12 * (std::abs(mean) + 1));
  EXPECT_NEAR(s.stddev, std::sqrt(m2 / double(count)), 1e-10 * (std::sqrt(m2 / double(count)) + 1));
  const std::size_t bins = s.counts.size();
  const double lo = s.edges.front(), hi = s.edges.back();
  std::vector<std::uint64_t> counts(bins);
  for (float x : v) {
    if (!std::isfinite(x) || x < lo || x > hi) continue;
    const auto b = std::min<std::size_t>(bins - 1, std::size_t((double(x) - lo) * (double(bins) / (hi - lo))));
    if (x < hi || b == bins - 1) ++counts[b];
  }
  // A value exactly at hi counts as above a given range; the automatic range's maximum is in
  // the last bin (stats.hpp).
  if (s.above > 0) counts.back() -= std::uint64_t(std::count(v.begin(), v.end(), float(hi)));
  EXPECT_EQ(s.counts, counts);
}

void check(const std::vector<float>& v, const analysis::HistogramOptions& options = {}) {
  analysis::DeviceMapStats device;
  const auto map = upload(v, 5);  // a map longer than the points asked
  const analysis::MapStats on_device = device.compute(*map, v.size(), options);
  const analysis::MapStats on_host = analysis::map_stats(v, options);
  expect_identical(on_device, on_host);
  expect_plain_figures(v, on_device);
}

// Values of wide dynamic range (sums whose order shows in their last bits), ties at both
// extremes, zeros of both signs.
std::vector<float> rough_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = float(normal(rng) * (i % 89 == 0 ? 1e5 : i % 7 == 0 ? 1e-3 : 30));
  return v;
}

TEST(DeviceMapStats, EqualsTheHostsStatisticsBitForBit) {
  DCSGRID_REQUIRE_GPU();
  for (const std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(8), std::size_t(65536), std::size_t(65541),
                              std::size_t(3 * 65536 + 13), std::size_t(200003)}) {
    SCOPED_TRACE(n);
    check(rough_values(n, n));
  }
}

TEST(DeviceMapStats, NonFiniteValuesZerosAndTiesAreCountedAsOnTheHost) {
  DCSGRID_REQUIRE_GPU();
  std::vector<float> v = rough_values(140000, 9);
  const float inf = std::numeric_limits<float>::infinity();
  for (std::size_t i = 3; i < v.size(); i += 1013) v[i] = std::nanf("");
  for (std::size_t i = 5; i < v.size(); i += 2027) v[i] = inf;
  for (std::size_t i = 11; i < v.size(); i += 3001) v[i] = -inf;
  v[v.size() - 1] = std::nanf("");  // in the last block's last values
  v[v.size() - 2] = -inf;
  check(v);
  // Only zeros of both signs and positives: the minimum is the first zero in the sums' order.
  std::vector<float> zeros(70001);
  for (std::size_t i = 0; i < zeros.size(); ++i) zeros[i] = i % 3 == 0 ? -0.0f : i % 3 == 1 ? 0.0f : float(i);
  check(zeros);
  for (std::size_t i = 0; i < zeros.size(); ++i) zeros[i] = i % 5 == 0 ? 0.0f : i % 5 == 1 ? -0.0f : -float(i);
  check(zeros);
}

TEST(DeviceMapStats, ConstantEmptyAndAllNaNMapsAndGivenRanges) {
  DCSGRID_REQUIRE_GPU();
  check(std::vector<float>(70000, 2.5f));
  check(std::vector<float>(70000, 1e20f));
  check({});
  check(std::vector<float>(1000, std::nanf("")));
  const std::vector<float> v = rough_values(131075, 4);
  analysis::HistogramOptions given;
  given.bins = 7;
  given.lo = -20;
  given.hi = 20;
  check(v, given);
  analysis::HistogramOptions fine;
  fine.bins = 5000;
  check(v, fine);
  std::vector<float> at_edges = v;
  for (std::size_t i = 0; i < at_edges.size(); i += 17) at_edges[i] = float(-20 + 40.0 * double(i % 8) / 7);
  check(at_edges, given);
}

TEST(DeviceMapStats, RefusesMorePointsThanTheMapHolds) {
  DCSGRID_REQUIRE_GPU();
  analysis::DeviceMapStats device;
  const auto map = upload(std::vector<float>(100, 1.0f));
  EXPECT_THROW(device.compute(*map, 101), Error);
  analysis::HistogramOptions bad;
  bad.bins = 0;
  EXPECT_THROW(device.compute(*map, 100, bad), Error);
}

}  // namespace
}  // namespace dcsgrid::test
