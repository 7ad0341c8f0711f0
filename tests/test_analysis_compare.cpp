// Map comparison on maps that differ by a known field: RMS, maximum and its place, relative L2,
// histogram and shells checked against values worked out here; each point's distance shell
// against a float64 brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>

#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "helpers.hpp"

namespace dcsgrid::analysis {
namespace {

namespace fs = std::filesystem;

// Reference values and errors that float holds exactly, so every difference is exact:
// reference = 1 + i/16 + j/32 + k/4; error = +δ where i+j+k is even, −δ where odd, and 5δ at
// the spike (an even point), δ = 2⁻¹⁰.
struct KnownDifference {
  GridSpec grid = grid_from_origin({-1.5, 2.0, 0.25}, {12, 10, 8}, 0.5);
  std::array<std::int64_t, 3> spike{3, 4, 5};
  double delta = 1.0 / 1024;
  std::vector<float> reference, test;
  KnownDifference() {
    for (std::int64_t k = 0; k < grid.nz(); ++k)
      for (std::int64_t j = 0; j < grid.ny(); ++j)
        for (std::int64_t i = 0; i < grid.nx(); ++i) {
          const double r = 1 + i / 16.0 + j / 32.0 + k / 4.0;
          double e = (i + j + k) % 2 == 0 ? delta : -delta;
          if (std::array<std::int64_t, 3>{i, j, k} == spike) e = 5 * delta;
          reference.push_back(float(r));
          test.push_back(float(r + e));
        }
  }
};

TEST(CompareMaps, KnownDifferenceGivesAnalyticErrors) {
  KnownDifference d;
  CompareOptions options;
  options.histogram_bins = 10;
  options.keep_difference = true;
  const CompareReport report = compare_maps(d.grid, d.reference, d.test, nullptr, options);
  const double n = 960;  // 12·10·8, half of the points odd
  EXPECT_EQ(report.overall.points, 960u);
  EXPECT_EQ(report.non_finite, 0u);
  EXPECT_NEAR(report.overall.rms_error, d.delta * std::sqrt((n - 1 + 25) / n), 1e-15);
  EXPECT_DOUBLE_EQ(report.overall.max_abs_error, 5 * d.delta);
  EXPECT_EQ(report.max_ijk, d.spike);
  EXPECT_EQ(report.max_index, d.grid.index(3, 4, 5));
  const auto where = d.grid.position(3, 4, 5);
  for (int a = 0; a < 3; ++a) EXPECT_DOUBLE_EQ(report.max_position[a], where[a]);
  EXPECT_DOUBLE_EQ(report.reference_at_max, 1 + 3 / 16.0 + 4 / 32.0 + 5 / 4.0);
  EXPECT_DOUBLE_EQ(report.test_at_max - report.reference_at_max, 5 * d.delta);

  double reference2 = 0;
  for (float r : d.reference) reference2 += double(r) * r;
  EXPECT_NEAR(report.overall.relative_l2, d.delta * std::sqrt(n - 1 + 25) / std::sqrt(reference2), 1e-15);
  EXPECT_NEAR(report.overall.rms_reference, std::sqrt(reference2 / n), 1e-12);

  // 10 bins over about [−5δ, 5δ], each δ wide: −δ in bin 4, +δ in bin 5, the spike in bin 9.
  const auto& h = report.error_histogram;
  ASSERT_EQ(h.counts.size(), 10u);
  EXPECT_NEAR(h.hi, 5 * d.delta, 1e-8);
  EXPECT_NEAR(h.lo, -5 * d.delta, 1e-8);
  for (std::size_t b = 0; b < 10; ++b) {
    const std::uint64_t expected = b == 4 ? 480 : b == 5 ? 479 : b == 9 ? 1 : 0;
    EXPECT_EQ(h.counts[b], expected) << "bin " << b;
  }
  EXPECT_EQ(h.underflow + h.overflow + h.nan, 0u);

  ASSERT_EQ(report.difference.size(), 960u);
  for (std::size_t i = 0; i < 960; ++i) EXPECT_EQ(report.difference[i], d.test[i] - d.reference[i]);
}

TEST(CompareMaps, IdenticalMapsHaveNoError) {
  KnownDifference d;
  const CompareReport report = compare_maps(d.grid, d.reference, d.reference);
  EXPECT_EQ(report.overall.rms_error, 0.0);
  EXPECT_EQ(report.overall.max_abs_error, 0.0);
  EXPECT_EQ(report.overall.relative_l2, 0.0);
  EXPECT_TRUE(report.difference.empty());
  std::uint64_t total = 0;
  for (auto c : report.error_histogram.counts) total += c;
  EXPECT_EQ(total, 960u);
}

TEST(CompareMaps, NonFinitePointsAreCountedAndLeftOut) {
  KnownDifference d;
  d.test[7] = std::numeric_limits<float>::quiet_NaN();
  d.reference[100] = std::numeric_limits<float>::infinity();
  const CompareReport report = compare_maps(d.grid, d.reference, d.test);
  EXPECT_EQ(report.non_finite, 2u);
  EXPECT_EQ(report.overall.points, 958u);
  EXPECT_DOUBLE_EQ(report.overall.max_abs_error, 5 * d.delta);
  const auto& h = report.error_histogram;  // NaN − x is NaN, x − inf is −inf
  EXPECT_EQ(h.nan, 1u);
  EXPECT_EQ(h.underflow, 1u);
}

TEST(CompareMaps, ErrorByDistanceFromTheNearestAtom) {
  // One atom off the grid's points; the error at each point is its distance from the atom, so
  // each shell's RMS and maximum follow from the points that fall in it (counted here by brute
  // force).
  const GridSpec grid = grid_from_origin({0, 0, 0}, {30, 28, 26}, 1.0);
  AtomSet atoms;
  atoms.push_back(10.3, 9.6, 12.2, 1.0);
  std::vector<float> reference(grid.point_count(), 2.0f), test(grid.point_count());
  std::vector<double> distance(grid.point_count());
  for (std::size_t i = 0; i < grid.point_count(); ++i) {
    const auto ijk = grid.ijk(i);
    const auto p = grid.position(ijk[0], ijk[1], ijk[2]);
    distance[i] = std::hypot(p[0] - 10.3, p[1] - 9.6, p[2] - 12.2);
    test[i] = 2.0f + float(distance[i]);
  }
  const CompareReport report = compare_maps(grid, reference, test, &atoms);
  const std::vector<double> edges{0, 2, 4, 8, 12, 20};
  ASSERT_EQ(report.shells.size(), edges.size());
  for (std::size_t s = 0; s < edges.size(); ++s) {
    const double hi = s + 1 < edges.size() ? edges[s + 1] : INFINITY;
    std::size_t count = 0;
    double sum2 = 0, most = 0;
    for (std::size_t i = 0; i < grid.point_count(); ++i) {
      if (distance[i] < edges[s] || distance[i] >= hi) continue;
      ++count;
      const double e = double(test[i]) - 2.0;
      sum2 += e * e;
      most = std::max(most, e);
    }
    const ShellError& shell = report.shells[s];
    EXPECT_EQ(shell.r_lo, edges[s]);
    EXPECT_EQ(shell.r_hi, hi);
    EXPECT_EQ(shell.error.points, count) << "shell " << s;
    if (count) {
      EXPECT_NEAR(shell.error.rms_error, std::sqrt(sum2 / count), 1e-9) << "shell " << s;
      EXPECT_NEAR(shell.error.max_abs_error, most, 1e-9) << "shell " << s;
      EXPECT_NEAR(shell.error.relative_l2, std::sqrt(sum2 / (4.0 * count)), 1e-9) << "shell " << s;
    }
  }
  EXPECT_GT(report.shells.back().error.points, 0u);  // the grid's far corner is > 20 Å away
}

// Random maps on a grid of 9 planes, with atoms for the shells, and a tie for the largest error
// (two parts of plane 2, and plane 6): the first of the three is the place reported.
struct RandomMaps {
  GridSpec grid = grid_from_origin({-3, -2, -4}, {17, 37, 9}, 0.75);  // 37 rows: parts of 16, 16, 5
  AtomSet atoms;
  std::vector<float> reference, test;
  RandomMaps() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> value(-3, 3), error(-0.01f, 0.01f), place(-2, 2);
    for (int a = 0; a < 5; ++a) atoms.push_back(place(rng), place(rng), place(rng), 1.0);
    for (std::size_t i = 0; i < grid.point_count(); ++i) {
      reference.push_back(value(rng));
      test.push_back(reference.back() + error(rng));
    }
    for (auto [i, j, k] : {std::array<std::int64_t, 3>{3, 4, 2}, {5, 30, 2}, {8, 1, 6}}) {
      reference[grid.index(i, j, k)] = 1.0f;
      test[grid.index(i, j, k)] = 1.5f;
    }
  }
};

// The report through MapComparison, the slabs given in `order` (z_begin, planes), the histogram
// by a second sweep over the same slabs or over the held differences.
CompareReport compare_by_slabs(const RandomMaps& d, std::shared_ptr<const AtomShells> shells,
                               const std::vector<std::pair<std::int64_t, std::int64_t>>& order, bool hold) {
  MapComparison comparison(d.grid, std::move(shells));
  if (hold) comparison.hold_differences();
  const std::size_t plane = d.grid.plane_size();
  for (auto [z, planes] : order)
    comparison.add(z, planes, d.reference.data() + std::size_t(z) * plane, d.test.data() + std::size_t(z) * plane);
  if (hold)
    comparison.histogram_of_held_differences();
  else
    for (auto [z, planes] : order)
      comparison.add_to_histogram(z, planes, d.reference.data() + std::size_t(z) * plane,
                                  d.test.data() + std::size_t(z) * plane);
  return comparison.report();
}

TEST(MapComparison, SlabsInAnyOrderSizeAndThreadCountGiveTheSameReport) {
  const RandomMaps d;
  const auto shells = std::make_shared<const AtomShells>(atom_shells(d.atoms, d.grid, CompareOptions{}.shell_edges));
  const std::string whole = compare_by_slabs(d, shells, {{0, 9}}, true).to_json().dump();
  const std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> orders{
      {{0, 9}},
      {{8, 1}, {7, 1}, {6, 1}, {5, 1}, {4, 1}, {3, 1}, {2, 1}, {1, 1}, {0, 1}},
      {{5, 4}, {0, 2}, {2, 3}},
      {{6, 3}, {2, 4}, {0, 2}}};
  for (int threads : {1, 3}) {
    set_openmp_threads(threads);
    for (const auto& order : orders)
      for (bool hold : {false, true})
        EXPECT_EQ(compare_by_slabs(d, shells, order, hold).to_json().dump(), whole)
            << threads << " threads, " << order.size() << " slabs, differences held: " << hold;
  }
  set_openmp_threads(0);
  const CompareReport report = compare_by_slabs(d, shells, {{6, 3}, {0, 6}}, false);
  EXPECT_EQ(report.max_index, d.grid.index(3, 4, 2));
  EXPECT_EQ(report.test_at_max - report.reference_at_max, 0.5);
}

TEST(MapComparison, SumsAreThePartsSumsInGridOrder) {
  // Each part's sums (kRowsPerPart rows of a plane) in point order, added in grid order: the same
  // double operations done here.
  const RandomMaps d;
  const CompareReport report = compare_by_slabs(d, nullptr, {{4, 5}, {0, 4}}, true);
  const std::size_t part_points = std::size_t(MapComparison::kRowsPerPart * d.grid.nx());
  double error2 = 0, reference2 = 0;
  for (std::int64_t z = 0; z < d.grid.nz(); ++z)
    for (std::size_t first = 0; first < d.grid.plane_size(); first += part_points) {
      double part_error2 = 0, part_reference2 = 0;
      const std::size_t begin = std::size_t(z) * d.grid.plane_size() + first;
      const std::size_t end = std::size_t(z) * d.grid.plane_size() + std::min(d.grid.plane_size(), first + part_points);
      for (std::size_t i = begin; i < end; ++i) {
        const double e = double(d.test[i]) - double(d.reference[i]);
        part_error2 += e * e;
        part_reference2 += double(d.reference[i]) * double(d.reference[i]);
      }
      error2 += part_error2;
      reference2 += part_reference2;
    }
  const double n = double(d.grid.point_count());
  EXPECT_EQ(report.overall.rms_error, std::sqrt(error2 / n));
  EXPECT_EQ(report.overall.rms_reference, std::sqrt(reference2 / n));
  EXPECT_EQ(report.overall.relative_l2, std::sqrt(error2 / reference2));
}

TEST(MapComparison, PlanesTwiceOrMissingAreRefused) {
  const RandomMaps d;
  const std::size_t plane = d.grid.plane_size();
  MapComparison twice(d.grid, nullptr);
  twice.add(0, 5, d.reference.data(), d.test.data());
  EXPECT_THROW(twice.add(4, 2, d.reference.data() + 4 * plane, d.test.data() + 4 * plane), Error);
  MapComparison missing(d.grid, nullptr);
  missing.hold_differences();
  missing.add(0, 8, d.reference.data(), d.test.data());
  EXPECT_THROW(missing.histogram_of_held_differences(), Error);  // its range needs every plane
  EXPECT_THROW(missing.report(), Error);
  MapComparison late(d.grid, nullptr);
  late.add(0, 1, d.reference.data(), d.test.data());
  EXPECT_THROW(late.hold_differences(), Error);
  EXPECT_THROW(late.histogram_of_held_differences(), Error);
}

// The float64 brute force of AtomShells' rule: the nearest atom's squared distance (Δx² + Δy² +
// Δz², fused as atom_shells does), its float rounding, and the edge at or below it; beyond the
// last edge when d2 ≥ last edge².
std::vector<std::uint8_t> brute_force_shells(const AtomSet& atoms, const GridSpec& grid,
                                             const std::vector<double>& edges) {
  std::vector<std::uint8_t> shells(grid.point_count());
  const double reach2 = edges.back() * edges.back();
  for (std::int64_t k = 0; k < grid.nz(); ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i) {
        const auto p = grid.position(i, j, k);
        double best = INFINITY;
        for (std::size_t a = 0; a < atoms.size(); ++a) {
          const double dx = p[0] - atoms.x[a], dy = p[1] - atoms.y[a], dz = p[2] - atoms.z[a];
          best = std::min(best, std::fma(dz, dz, std::fma(dy, dy, dx * dx)));
        }
        const double d = best < reach2 ? double(float(std::sqrt(best))) : INFINITY;
        shells[grid.index(i, j, k)] =
            std::uint8_t(std::upper_bound(edges.begin(), edges.end(), d) - edges.begin() - 1);
      }
  return shells;
}

void expect_same_shells(const AtomShells& got, const std::vector<std::uint8_t>& expected) {
  ASSERT_EQ(got.shell.size(), expected.size());
  std::size_t differ = 0;
  for (std::size_t n = 0; n < expected.size(); ++n)
    if (got.shell[n] != expected[n] && differ++ < 5) {
      const auto ijk = got.grid.ijk(n);
      ADD_FAILURE() << "point " << ijk[0] << "," << ijk[1] << "," << ijk[2] << ": shell "
                    << int(got.shell[n]) << ", brute force " << int(expected[n]);
    }
  EXPECT_EQ(differ, 0u);
}

// atom_shells against the brute force, every shell holding more than 100 points (so the test
// reaches each).
void expect_brute_force_shells_every_one_filled(const AtomSet& atoms, const GridSpec& grid,
                                                const std::vector<double>& edges) {
  const std::vector<std::uint8_t> expected = brute_force_shells(atoms, grid, edges);
  expect_same_shells(atom_shells(atoms, grid, edges), expected);
  std::vector<std::size_t> per_shell(edges.size());
  for (const std::uint8_t s : expected) ++per_shell[s];
  for (std::size_t s = 0; s < edges.size(); ++s) EXPECT_GT(per_shell[s], 100u) << "shell " << s;
}

TEST(AtomShells, MatchBruteForceOnRandomAtoms) {
  // Several blocks of 16³ points (the last ones partial), unequal spacings, atoms bunched in a
  // corner and some outside the grid, so every shell up to beyond 20 Å is filled.
  GridSpec grid = grid_from_origin({-4.0, 1.0, 2.5}, {47, 35, 40}, 0.75);
  grid.spacing = {0.75, 0.8, 0.7};
  const AtomSet atoms = test::random_atoms(300, Box{{-10, -5, 0}, {6, 8, 12}}, 3);
  const std::vector<double> edges{0, 2, 4, 8, 12, 20};
  expect_brute_force_shells_every_one_filled(atoms, grid, edges);
  // No atoms: every point lies beyond the last edge.
  for (const std::uint8_t s : atom_shells(AtomSet{}, grid, edges).shell) ASSERT_EQ(s, edges.size() - 1);
}

// A skewed grid (a triclinic cell's lattice): its parts are parallelepipeds, their centres and
// radii from the grid's steps.
TEST(AtomShells, MatchBruteForceOnASkewedGrid) {
  GridSpec grid = grid_on_cell(make_cell({30, 26, 28}, {70, 110, 60}), 0.8);
  grid.origin = {-3.0, 2.0, 1.5};
  ASSERT_FALSE(grid.orthogonal());
  const Box box = grid.bounds();
  const AtomSet atoms = test::random_atoms(250, Box{box.lo, {box.lo[0] + 18, box.lo[1] + 14, box.lo[2] + 15}}, 4);
  const std::vector<double> edges{0, 2, 4, 8, 12, 20};
  expect_brute_force_shells_every_one_filled(atoms, grid, edges);
}

TEST(AtomShells, PointsOnTheEdgesFollowTheFloatRule) {
  // Atoms placed at float(point + edge) along x and one float step either side: grid points lie
  // exactly on an edge, or within the float rounding of the distance on either side of it. The
  // spacing 0.1 is inexact in binary, so the positions themselves carry rounding.
  const GridSpec grid = grid_from_origin({0.3, -0.2, 0.1}, {40, 36, 34}, 0.1);
  const std::vector<double> edges{0, 0.7, 1.3, 2, 2.5};
  AtomSet atoms;
  const std::array<std::array<std::int64_t, 3>, 4> anchors{{{3, 5, 7}, {20, 30, 4}, {9, 18, 27}, {35, 2, 30}}};
  for (std::size_t n = 0; n < anchors.size(); ++n) {
    const auto p = grid.position(anchors[n][0], anchors[n][1], anchors[n][2]);
    const float x = float(p[0] + edges[1 + n]);
    const float step = n % 2 ? std::nextafter(x, 1e9f) : std::nextafter(x, -1e9f);
    atoms.push_back(x, float(p[1]), float(p[2]), 1.0);
    atoms.push_back(step, float(p[1]) + 1.1f, float(p[2]), 1.0);
  }
  const std::vector<std::uint8_t> expected = brute_force_shells(atoms, grid, edges);
  expect_same_shells(atom_shells(atoms, grid, edges), expected);
  // The float distance of some points is exactly an edge: the test does reach the edges.
  std::size_t on_edge = 0;
  for (std::size_t n = 0; n < anchors.size(); ++n) {
    const auto p = grid.position(anchors[n][0], anchors[n][1], anchors[n][2]);
    const double dx = p[0] - atoms.x[2 * n], dy = p[1] - atoms.y[2 * n], dz = p[2] - atoms.z[2 * n];
    on_edge += double(float(std::sqrt(dx * dx + dy * dy + dz * dz))) == edges[1 + n];
  }
  EXPECT_GT(on_edge, 0u);
}

TEST(AtomShells, SharedShellsMustMatchTheGridAndEdges) {
  const GridSpec grid = grid_from_origin({0, 0, 0}, {10, 10, 10}, 0.5);
  AtomSet atoms;
  atoms.push_back(1.0, 2.0, 3.0, 1.0);
  const auto shells = std::make_shared<const AtomShells>(atom_shells(atoms, grid, CompareOptions{}.shell_edges));
  EXPECT_NO_THROW(MapComparison(grid, shells));
  GridSpec moved = grid;
  moved.origin[0] = 0.25;
  EXPECT_THROW(MapComparison(moved, shells), Error);
  CompareOptions other;
  other.shell_edges = {0, 3, 6};
  EXPECT_THROW(MapComparison(grid, shells, other), Error);
  std::vector<double> too_many(kMaxShells + 1);
  for (std::size_t s = 0; s < too_many.size(); ++s) too_many[s] = 0.01 * double(s);
  EXPECT_THROW(atom_shells(atoms, grid, too_many), Error);
  too_many.pop_back();
  EXPECT_NO_THROW(atom_shells(atoms, grid, too_many));
}

TEST(CompareMaps, GridsMustMatch) {
  const GridSpec a = grid_from_origin({0, 0, 0}, {10, 10, 10}, 0.5);
  GridSpec b = a;
  b.dims[1] = 11;
  try {
    require_same_grid(a, b);
    FAIL() << "different point counts accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("10x10x10 against 10x11x10"), std::string::npos) << e.what();
  }
  b = a;
  b.origin[2] = 0.01;
  EXPECT_THROW(require_same_grid(a, b), Error);
  EXPECT_NO_THROW(require_same_grid(a, b, 0.05));  // 0.01 Å is 0.02 of the 0.5 Å spacing
  // Issue 35 group 8: a NaN tolerance passed every comparison, so any grids "matched".
  for (const double tolerance : {std::nan(""), std::numeric_limits<double>::infinity(), -0.1, 1.5}) {
    try {
      require_same_grid(a, b, tolerance);
      FAIL() << "tolerance " << tolerance << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("must be a fraction of the spacing from 0 to 1"),
                std::string::npos)
          << e.what();
    }
  }
  b = a;
  b.spacing = {0.5, 0.5, 0.51};
  try {
    require_same_grid(a, b);
    FAIL() << "different spacings accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("spacing"), std::string::npos) << e.what();
  }
  std::vector<float> values(1000, 1.0f), short_map(999, 1.0f);
  EXPECT_THROW(compare_maps(a, values, short_map), Error);
  CompareOptions bad;
  bad.shell_edges = {1, 2};
  EXPECT_THROW(compare_maps(a, values, values, nullptr, bad), Error);
}

// APBS prints DX headers with 7 significant digits ("%12.6e"): such a file's grid is ours.
TEST(CompareMaps, SevenDigitDxGridIsTheSameGrid) {
  GridSpec exact;
  exact.dims = {3, 2, 2};
  exact.origin = {-23.456789123, 111.11111111, 7.7777777777};
  exact.spacing = {0.337123456, 0.337123456, 0.337123456};
  const fs::path dir = test::temp_dir("compare_apbs");
  std::ofstream(dir / "apbs.dx")
      << "# Data from APBS 3.4\n"
         "object 1 class gridpositions counts 3 2 2\n"
         "origin -2.345679e+01 1.111111e+02 7.777778e+00\n"
         "delta 3.371235e-01 0.000000e+00 0.000000e+00\n"
         "delta 0.000000e+00 3.371235e-01 0.000000e+00\n"
         "delta 0.000000e+00 0.000000e+00 3.371235e-01\n"
         "object 2 class gridconnections counts 3 2 2\n"
         "object 3 class array type double rank 0 items 12 data follows\n"
         "1.0 2.0 3.0\n4.0 5.0 6.0\n7.0 8.0 9.0\n1.0e+01 1.1e+01 1.2e+01\n"
         "attribute \"dep\" string \"positions\"\n"
         "object \"regular positions regular connections\" class field\n"
         "component \"positions\" value 1\ncomponent \"connections\" value 2\n"
         "component \"data\" value 3\n";
  const io::MapFile apbs = io::read_map(dir / "apbs.dx");
  EXPECT_NE(apbs.grid.origin, exact.origin);  // the digits really are lost
  EXPECT_NO_THROW(require_same_grid(exact, apbs.grid));
  std::vector<float> values(12);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = apbs.data[i];
  EXPECT_NO_THROW(compare_maps(io::MapFile{exact, apbs.meta, values}, apbs));

  // A real shift (0.01 Å, 3% of the spacing) is named, with every digit of both origins.
  GridSpec shifted = exact;
  shifted.origin[1] += 0.01;
  try {
    require_same_grid(exact, shifted);
    FAIL() << "a shifted grid was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    for (const char* part : {"origins differ along y", "111.11111111", "111.12111111", "-23.456789123"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
    EXPECT_EQ(m.find("spacings differ"), std::string::npos) << m;
  }
  // A spacing 1e-5 Å off moves the far points of a 200-point axis by 2e-3 Å: 0.6% of a step.
  GridSpec wide = exact;
  wide.dims = {200, 2, 2};
  GridSpec stretched = wide;
  stretched.spacing[0] += 1e-5;
  try {
    require_same_grid(wide, stretched);
    FAIL() << "a stretched grid was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("spacings differ along x"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0.33713345"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(CompareMaps, MapFilesNeedTheSameUnits) {
  KnownDifference d;
  io::MapFile reference{d.grid, {}, d.reference}, test{d.grid, {}, d.test};
  EXPECT_NEAR(compare_maps(reference, test).overall.max_abs_error, 5 * d.delta, 1e-12);
  test.meta.units = "kcal/mol/e";
  EXPECT_THROW(compare_maps(reference, test), Error);
  test.meta.units = reference.meta.units;
  test.grid.origin[0] += 1.0;
  EXPECT_THROW(compare_maps(reference, test), Error);
}

TEST(CompareMaps, JsonAndTable) {
  KnownDifference d;
  AtomSet atoms;
  atoms.push_back(0.0, 4.0, 2.0, -1.0);
  io::MapFile reference{d.grid, {}, d.reference}, test{d.grid, {}, d.test};
  const CompareReport report = compare_maps(reference, test, &atoms);
  const nlohmann::json j = report.to_json();
  EXPECT_EQ(j["overall"]["points"], 960);
  EXPECT_EQ(j["max_error"]["ijk"], nlohmann::json({3, 4, 5}));
  EXPECT_EQ(j["shells"].size(), 6u);
  EXPECT_TRUE(j["shells"].back()["r_hi"].is_null());
  EXPECT_EQ(j["units"], "kT/e");
  const std::string table = report.table();
  EXPECT_NE(table.find("largest error"), std::string::npos) << table;
  EXPECT_NE(table.find("(3, 4, 5)"), std::string::npos) << table;
  EXPECT_NE(table.find(">20 Å"), std::string::npos) << table;
}

}  // namespace
}  // namespace dcsgrid::analysis
