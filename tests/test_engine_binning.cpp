// Bin geometry and the capacity rule (host side of binning.hpp): neighbour lists checked against
// brute-force distances, capacities against a naive search.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/binning.hpp"
#include "helpers.hpp"

namespace dcsgrid::engine {
namespace {

// The bins a brick reads, by flat index (as the kernel forms them).
std::set<std::uint32_t> neighbour_bins_of(const BinGeometry& g, int bx, int by, int bz) {
  const int ax = g.axis[0].anchor(bx), ay = g.axis[1].anchor(by), az = g.axis[2].anchor(bz);
  std::set<std::uint32_t> bins;
  for (const NeighbourRow& r : g.rows)
    for (int i = 0; i < r.len; ++i) {
      const int x = ax + r.dx + i, y = ay + r.dy, z = az + r.dz;
      EXPECT_TRUE(x >= 0 && x < g.axis[0].bins && y >= 0 && y < g.axis[1].bins && z >= 0 &&
                  z < g.axis[2].bins)
          << "neighbour bin outside the bin grid";
      bins.insert(std::uint32_t((std::int64_t(z) * g.axis[1].bins + y) * g.axis[0].bins + x));
    }
  return bins;
}

TEST(BinGeometry, FourAngstromBinsForTheCutcpSetting) {
  // 0.5 Å grid, 12 Å cutoff: 4 Å bins, one per brick. The brick's points span 3.5 Å from 0.25 Å
  // inside its bin, so offsets ±1, ±2, ±3 are 0.25, 4.25, 8.25 Å away: of the 7³ offsets, those
  // with two 8.25 and one 4.25 (24) or three 8.25 (8) are beyond 12 Å.
  GridSpec grid = grid_from_origin({-3.1, 2.0, 7.7}, {40, 33, 20}, 0.5);
  const BinGeometry g = make_bin_geometry(grid, {0, 20}, 12.0);
  for (int a = 0; a < 3; ++a) {
    EXPECT_DOUBLE_EQ(g.axis[a].edge, 4.0);
    EXPECT_EQ(g.axis[a].bins_per_brick, 1);
    EXPECT_EQ(g.axis[a].bricks_per_bin, 1);
    EXPECT_EQ(g.axis[a].halo, 3);
  }
  EXPECT_EQ(g.neighbour_bins(), 343u - 32u);
  EXPECT_EQ(g.rows.size(), 49u);
  EXPECT_EQ(g.axis[0].bricks, 5);
  EXPECT_EQ(g.axis[1].bricks, 5);  // 33 points: the last brick holds one
  EXPECT_EQ(g.axis[0].bins, 3 + 5 + 3);
}

TEST(BinGeometry, EdgeFollowsTheBrickPitch) {
  struct Case {
    double spacing;
    double edge;
    int m, k;
  };
  for (const Case c : {Case{1.0, 4.0, 2, 1}, Case{0.25, 4.0, 1, 2}, Case{0.375, 3.0, 1, 1},
                       Case{0.6, 4.8, 1, 1}, Case{0.125, 4.0, 1, 4}}) {
    const BinGeometry g = make_bin_geometry(grid_from_origin({0, 0, 0}, {20, 20, 20}, c.spacing),
                                            {0, 20}, 10.0);
    EXPECT_NEAR(g.axis[0].edge, c.edge, 1e-12) << "spacing " << c.spacing;
    EXPECT_EQ(g.axis[0].bins_per_brick, c.m) << "spacing " << c.spacing;
    EXPECT_EQ(g.axis[0].bricks_per_bin, c.k) << "spacing " << c.spacing;
  }
}

TEST(BinGeometry, LargeCutoffGrowsTheBinsToFitTheRowLimit) {
  const BinGeometry g = make_bin_geometry(grid_from_origin({0, 0, 0}, {30, 30, 30}, 0.5), {0, 30}, 60.0);
  EXPECT_LE(g.rows.size(), std::size_t(kMaxNeighbourRows));
  EXPECT_GT(g.axis[0].edge, 4.0);
}

TEST(BinGeometry, RejectsBadInput) {
  const GridSpec grid = grid_from_origin({0, 0, 0}, {10, 10, 10}, 0.5);
  EXPECT_THROW(make_bin_geometry(grid, {0, 10}, 0.0), Error);
  EXPECT_THROW(make_bin_geometry(grid, {0, 10}, NAN), Error);
  EXPECT_THROW(make_bin_geometry(grid, {5, 11}, 12.0), Error);
  EXPECT_THROW(make_bin_geometry(grid, {4, 4}, 12.0), Error);
}

TEST(BinKey, FacesNaNAndOutside) {
  BinLookup b{{0.0f, 0.0f, 0.0f}, {0.25f, 0.25f, 0.25f}, {3, 4, 5}, {0, 0, 0}};
  EXPECT_EQ(bin_key(b, 0.0f, 0.0f, 0.0f), 0u);
  EXPECT_EQ(bin_key(b, 4.0f, 0.0f, 0.0f), 1u);  // a face belongs to the bin above it
  EXPECT_EQ(bin_key(b, 3.99f, 4.0f, 8.0f), 0u + 1u * 3 + 2u * 12);
  EXPECT_EQ(bin_key(b, 11.99f, 15.99f, 19.99f), 59u);
  const std::uint32_t outside = 60;
  EXPECT_EQ(bin_key(b, 12.0f, 0.0f, 0.0f), outside);
  EXPECT_EQ(bin_key(b, -0.001f, 0.0f, 0.0f), outside);
  EXPECT_EQ(bin_key(b, 1.0f, NAN, 1.0f), outside);
  EXPECT_EQ(bin_key(b, 1.0f, 1.0f, INFINITY), outside);
  EXPECT_EQ(bin_key(b, -1e30f, 1.0f, 1.0f), outside);
}

// Every atom within rc of a grid point must be binned into one of the bins that point's brick
// reads, and every dropped atom must be farther than rc from the whole slab: checked by brute
// force over random points and atoms, in float as the device computes.
void check_coverage(const GridSpec& grid, Slab slab, double rc, std::uint64_t seed) {
  SCOPED_TRACE(grid.describe() + ", rc " + std::to_string(rc) + ", planes " +
               std::to_string(slab.z_begin) + ".." + std::to_string(slab.z_end));
  const BinGeometry g = make_bin_geometry(grid, slab, rc);
  const BinLookup lookup = make_bin_lookup(g);
  const std::uint32_t outside = std::uint32_t(g.bin_count());
  const auto first = grid.position(0, 0, slab.z_begin);
  const auto last = grid.position(grid.nx() - 1, grid.ny() - 1, slab.z_end - 1);
  Box around;
  for (int a = 0; a < 3; ++a) {
    around.lo[a] = first[a] - rc - 3;
    around.hi[a] = last[a] + rc + 3;
  }
  const AtomSet atoms = test::random_atoms(4000, around, seed);
  std::vector<std::uint32_t> key(atoms.size());
  std::vector<std::array<float, 3>> in_frame(atoms.size());
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    in_frame[i] = {atoms.x[i] - g.frame_origin[0], atoms.y[i] - g.frame_origin[1],
                   atoms.z[i] - g.frame_origin[2]};
    key[i] = bin_key(lookup, in_frame[i][0], in_frame[i][1], in_frame[i][2]);
  }

  std::mt19937_64 rng(seed + 1);
  int within = 0;
  for (int sample = 0; sample < 60; ++sample) {
    const std::int64_t i = std::int64_t(rng() % grid.nx()), j = std::int64_t(rng() % grid.ny());
    const std::int64_t k = slab.z_begin + std::int64_t(rng() % slab.planes());
    const auto p = grid.position(i, j, k);
    const auto reads = neighbour_bins_of(g, int(i / kBrickPoints), int(j / kBrickPoints),
                                         int((k - slab.z_begin + g.skipped_planes) / kBrickPoints));
    for (std::size_t a = 0; a < atoms.size(); ++a) {
      const double dx = p[0] - atoms.x[a], dy = p[1] - atoms.y[a], dz = p[2] - atoms.z[a];
      if (dx * dx + dy * dy + dz * dz >= rc * rc) continue;
      ++within;
      ASSERT_NE(key[a], outside) << "atom " << a << " within rc of point " << i << "," << j << ","
                                 << k << " was dropped";
      ASSERT_TRUE(reads.count(key[a])) << "atom " << a << " within rc of point " << i << "," << j
                                       << "," << k << " is in bin " << key[a]
                                       << ", which its brick does not read";
    }
  }
  EXPECT_GT(within, 1000);
  for (std::size_t a = 0; a < atoms.size(); ++a) {
    if (key[a] != outside) continue;
    double d2 = 0;  // distance from the atom to the box of the slab's points
    const double pos[3] = {atoms.x[a], atoms.y[a], atoms.z[a]};
    for (int ax = 0; ax < 3; ++ax) {
      const double gap = std::max({0.0, first[ax] - pos[ax], pos[ax] - last[ax]});
      d2 += gap * gap;
    }
    EXPECT_GE(d2, rc * rc) << "dropped atom " << a << " is within rc of the slab";
  }
}

TEST(BinGeometry, NeighbourBinsHoldEveryAtomWithinTheCutoff) {
  check_coverage(grid_from_origin({-7.3, 1.1, 100.2}, {37, 29, 41}, 0.5), {0, 41}, 12.0, 1);
  check_coverage(grid_from_origin({-7.3, 1.1, 100.2}, {37, 29, 41}, 0.5), {13, 30}, 12.0, 2);
  check_coverage(grid_from_origin({0.0, 0.0, 0.0}, {23, 19, 30}, 1.0), {3, 30}, 8.0, 3);
  check_coverage(grid_from_origin({5.0, -5.0, 2.0}, {61, 50, 45}, 0.25), {0, 45}, 9.5, 4);
  check_coverage(grid_from_origin({5.0, -5.0, 2.0}, {40, 40, 40}, 0.375), {7, 39}, 15.0, 5);
  GridSpec uneven = grid_from_origin({1.0, 2.0, 3.0}, {30, 20, 24}, 0.5);
  uneven.spacing = {0.5, 0.8, 0.3};
  check_coverage(uneven, {5, 24}, 10.0, 6);
}

// Σ min(count, c) >= fraction·N by direct search, then rounded up.
int naive_capacity(const std::vector<std::uint32_t>& counts, double fraction, int multiple) {
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  for (int c = 0;; ++c) {
    double fit = 0;
    for (std::uint32_t v : counts) fit += std::min<double>(v, c);
    if (fit >= fraction * total) return std::max(1, (c + multiple - 1) / multiple) * multiple;
  }
}

TEST(BinCapacity, SmallestCapacityForNinetyFivePercent) {
  // 19 bins of 1 atom and one of 20: 39 atoms, 37.05 must fit. c = 18 fits 19 + 18 = 37,
  // c = 19 fits 38.
  std::vector<std::uint32_t> counts(19, 1);
  counts.push_back(20);
  EXPECT_EQ(choose_bin_capacity(bin_occupancy(counts), 0.95, 1), 19);
  EXPECT_EQ(choose_bin_capacity(bin_occupancy(counts), 0.95, 8), 24);
  // Uniform bins of 6: c = 6 fits all, c = 5 only 5/6.
  EXPECT_EQ(choose_bin_capacity(bin_occupancy(std::vector<std::uint32_t>(100, 6)), 0.95, 1), 6);
  EXPECT_EQ(choose_bin_capacity(bin_occupancy(std::vector<std::uint32_t>(100, 6))), 8);
  // No atoms at all: the smallest capacity.
  EXPECT_EQ(choose_bin_capacity(bin_occupancy(std::vector<std::uint32_t>(10, 0))), 8);
  EXPECT_THROW(choose_bin_capacity(bin_occupancy(counts), 0.0, 8), Error);
  EXPECT_THROW(choose_bin_capacity(bin_occupancy(counts), 0.95, 0), Error);
}

TEST(BinCapacity, MatchesNaiveSearchOnRandomCounts) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 50; ++trial) {
    std::poisson_distribution<int> poisson(0.5 + trial % 12);
    std::vector<std::uint32_t> counts(200 + trial * 7);
    for (auto& c : counts) c = std::uint32_t(poisson(rng));
    if (trial % 5 == 0) counts[trial] = 300;  // one crowded bin
    for (int multiple : {1, 4, 8})
      EXPECT_EQ(choose_bin_capacity(bin_occupancy(counts), 0.95, multiple),
                naive_capacity(counts, 0.95, multiple))
          << "trial " << trial << ", multiple " << multiple;
  }
}

TEST(BinCapacity, TruncatedOccupancyAnswersBelowItsSizeOnly) {
  // 100 bins of 5 atoms and 2 of 2000 (crowded beyond a 16-entry occupancy histogram).
  std::vector<std::uint32_t> counts(100, 5);
  counts.push_back(2000);
  counts.push_back(2000);
  BinOccupancy truncated;
  truncated.bins_with.assign(16, 0);
  truncated.bins_with[5] = 100;
  truncated.crowded_bins = 2;
  truncated.atoms = 4500;
  // 4275 must fit: every c < 16 fits 100·min(5,c) + 2c < 4275, so the answer is not in range.
  EXPECT_EQ(choose_bin_capacity(truncated, 0.95, 1), 0);
  EXPECT_EQ(choose_bin_capacity(bin_occupancy(counts), 0.95, 1), naive_capacity(counts, 0.95, 1));
  // With a fraction that a small capacity meets, the truncated form answers exactly.
  EXPECT_EQ(choose_bin_capacity(truncated, 0.1, 1), naive_capacity(counts, 0.1, 1));
}

}  // namespace
}  // namespace dcsgrid::engine
