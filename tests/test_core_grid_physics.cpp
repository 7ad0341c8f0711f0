// Grid geometry, units and the pair kernel's physics against hand-derived values.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <omp.h>

#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/core/units.hpp"

using namespace dcsgrid;

TEST(Grid, IndexPositionRoundTrip) {
  const GridSpec g = grid_from_origin({-3.5, 2.0, 10.25}, {7, 5, 3}, 0.5);
  for (std::size_t n = 0; n < g.point_count(); ++n) {
    const auto ijk = g.ijk(n);
    EXPECT_EQ(g.index(ijk[0], ijk[1], ijk[2]), n);
    const auto p = g.position(ijk[0], ijk[1], ijk[2]);
    EXPECT_DOUBLE_EQ(p[0], -3.5 + 0.5 * ijk[0]);
    EXPECT_DOUBLE_EQ(p[2], 10.25 + 0.5 * ijk[2]);
  }
  EXPECT_EQ(g.index(1, 0, 0), 1u);  // x fastest
  EXPECT_EQ(g.index(0, 1, 0), 7u);
  EXPECT_EQ(g.index(0, 0, 1), 35u);
}

// --grid cell: point (i, j, k) of a cell's lattice is the cell's fractional point
// (i/n1, j/n2, k/n3), computed here from the cell's vectors alone.
TEST(Grid, CellLatticePointsAreTheCellsFractionalPoints) {
  const UnitCell cell = make_cell({20, 22, 19}, {75, 85, 65});
  const GridSpec grid = grid_on_cell(cell, 0.9);
  EXPECT_EQ(grid.dims, (std::array<std::int64_t, 3>{23, 25, 22}));  // ⌈length / 0.9⌉
  EXPECT_FALSE(grid.orthogonal());
  for (std::int64_t k = 0; k < grid.nz(); k += 7)
    for (std::int64_t j = 0; j < grid.ny(); j += 5)
      for (std::int64_t i = 0; i < grid.nx(); i += 3) {
        const double f[3] = {double(i) / 23, double(j) / 25, double(k) / 22};
        const auto p = grid.position(i, j, k);
        for (int d = 0; d < 3; ++d) {
          const double expected = f[0] * cell.vectors[0][d] + f[1] * cell.vectors[1][d] + f[2] * cell.vectors[2][d];
          EXPECT_NEAR(p[d], expected, 1e-12);
        }
        const auto c = grid.coordinates(p);
        EXPECT_NEAR(c[0], double(i), 1e-9);
        EXPECT_NEAR(c[1], double(j), 1e-9);
        EXPECT_NEAR(c[2], double(k), 1e-9);
      }
  // The bounds hold every corner, and are reached.
  const Box b = grid.bounds();
  for (int corner = 0; corner < 8; ++corner) {
    const auto p = grid.position(corner & 1 ? 22 : 0, corner & 2 ? 24 : 0, corner & 4 ? 21 : 0);
    for (int d = 0; d < 3; ++d) {
      EXPECT_GE(p[d], b.lo[d]);
      EXPECT_LE(p[d], b.hi[d]);
    }
  }
  // Its cell is the cell again; an orthorhombic cell's lattice is an orthogonal grid.
  const UnitCell back = cell_of_grid(grid);
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(back.lengths[d], cell.lengths[d], 1e-9);
    EXPECT_NEAR(back.angles[d], cell.angles[d], 1e-9);
  }
  const GridSpec box = grid_on_cell(make_cell({20, 18, 22}), 0.9);
  EXPECT_TRUE(box.orthogonal());
  EXPECT_NEAR(box.spacing[1], 18.0 / 20, 1e-15);
  EXPECT_THROW(require_orthogonal(grid, "the test"), Error);
  EXPECT_NO_THROW(require_orthogonal(box, "the test"));
  EXPECT_FALSE(grid.same_as(grid_on_cell(make_cell({20, 22, 19}, {75, 85, 66}), 0.9)));
}

TEST(Grid, AroundBoxCoversAtomsWithPadding) {
  Box box{{-1.0, 0.0, 2.0}, {3.0, 0.2, 2.0}};
  const GridSpec g = grid_around(box, 0.5, 10.0);
  for (int a = 0; a < 3; ++a) {
    EXPECT_LE(g.origin[a], box.lo[a] - 10.0 + 1e-9);
    EXPECT_GE(g.far_corner()[a], box.hi[a] + 10.0 - 1e-9);
    // Tight: less than one spacing beyond the padded box at either end.
    EXPECT_GT(g.origin[a], box.lo[a] - 10.0 - 0.5);
    EXPECT_LT(g.far_corner()[a], box.hi[a] + 10.0 + 0.5);
    // On the lattice of the spacing (what CCP4/MRC readers need to place the map).
    EXPECT_DOUBLE_EQ(g.origin[a] / 0.5, std::round(g.origin[a] / 0.5));
  }
  EXPECT_EQ(g.dims[0], 49);  // -11 .. 13 Å in 0.5 Å steps
  EXPECT_EQ(g.dims[1], 42);  // -10 .. 10.5 (0.2 + 10 rounds up to the lattice)
  EXPECT_DOUBLE_EQ(g.origin[1], -10.0);
}

TEST(Grid, AroundBoxOriginIsAMultipleOfAnOddSpacing) {
  // 0.37 Å steps: lo − padding = -7.3 lies between -20 and -19 steps.
  const GridSpec g = grid_around(Box{{-2.3, 1.0, 0.0}, {4.1, 1.0, 0.0}}, 0.37, 5.0);
  EXPECT_NEAR(g.origin[0], -20 * 0.37, 1e-12);
  EXPECT_NEAR(g.origin[1], -11 * 0.37, 1e-12);  // -4.0 / 0.37 = -10.8
  EXPECT_GE(g.far_corner()[0], 9.1 - 1e-9);
  EXPECT_LT(g.far_corner()[0], 9.1 + 0.37);
}

TEST(Grid, CenteredBoxAndBadInput) {
  const GridSpec g = grid_centered({1, 2, 3}, {10, 20, 5}, 0.375);
  EXPECT_NEAR(g.origin[0] + g.far_corner()[0], 2.0, 1e-9);
  EXPECT_GE(g.far_corner()[1] - g.origin[1], 20.0 - 1e-9);
  EXPECT_THROW(grid_centered({0, 0, 0}, {1, 1, 1}, 0.0), Error);
  EXPECT_THROW(grid_from_origin({0, 0, 0}, {0, 4, 4}, 1.0), Error);
  EXPECT_THROW(grid_around(Box{}, 0.5, -1.0), Error);
}

// The message of what `make` throws, or "" when it throws nothing.
template <typename Make>
std::string error_of(Make make) {
  try {
    make();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Issue 35 group 8: --size 1e30 converted 2e30 points to int64 (undefined) and printed a grid
// dimension of -9223372036854775807. Every axis is checked as a double, naming the size asked for.
TEST(Grid, AxisPointCountsBeyondTheLimitAreRefusedBeforeConversion) {
  std::string message = error_of([] { grid_centered({0, 0, 0}, {1e30, 1e30, 1e30}, 0.5); });
  EXPECT_NE(message.find("--size 1e+30 Å along x: 2e+30 points at spacing 0.5 Å, more than 2^30"),
            std::string::npos)
      << message;
  // Just past the limit: 2^30 steps are 2^30 + 1 points.
  message = error_of([] { grid_centered({0, 0, 0}, {1, 1, double(kMaxAxisPoints)}, 1.0); });
  EXPECT_NE(message.find("along z: 1.07e+09 points"), std::string::npos) << message;
  EXPECT_NO_THROW(grid_centered({0, 0, 0}, {1, 1, double(kMaxAxisPoints - 1)}, 1.0));
  Box far;
  far.lo = {0, 0, 0};
  far.hi = {1e300, 1, 1};
  message = error_of([&] { grid_around(far, 0.5, 1.0); });
  EXPECT_NE(message.find("the box with padding spans 1e+300 Å along x: 2e+300 points"), std::string::npos)
      << message;
  message = error_of([] { grid_from_origin({0, 0, 0}, {4, kMaxAxisPoints + 1, 4}, 1.0); });
  EXPECT_NE(message.find("grid dimension y is 1073741825: more than 2^30 points"), std::string::npos)
      << message;
}

TEST(Grid, RefusesGridsBeyondMemory) {
  const GridSpec huge = grid_from_origin({0, 0, 0}, {1 << 20, 1 << 20, 1 << 10}, 1.0);
  try {
    require_host_memory(huge);
    FAIL() << "a 4 PiB grid was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GiB"), std::string::npos) << e.what();
  }
}

TEST(Units, ConversionsFromKcal) {
  // kT at 298.15 K is 0.592483 kcal/mol.
  EXPECT_NEAR(1.0 / unit_factor(Unit::kT_per_e, 298.15), 0.592483, 1e-5);
  EXPECT_DOUBLE_EQ(unit_factor(Unit::kJ_per_mol_e, 300), 4.184);
  EXPECT_NEAR(unit_factor(Unit::volt, 300), 0.0433641, 1e-6);  // 1 kcal/mol/e in volts
  EXPECT_EQ(parse_unit("kcal/mol/e"), Unit::kcal_per_mol_e);
  EXPECT_THROW(parse_unit("eV"), Error);
}

TEST(Units, DebyeLengthOfWater) {
  // 1/κ = 3.04 Å / sqrt(I) for a 1:1 salt in water (ε 78.54) at 298.15 K.
  EXPECT_NEAR(1.0 / debye_kappa(0.15, 78.54, 298.15), 3.043 / std::sqrt(0.15), 0.01);
  EXPECT_EQ(debye_kappa(0.0, 78.54, 298.15), 0.0);
}

TEST(Physics, KernelForms) {
  Physics p;
  p.unit = Unit::kcal_per_mol_e;
  p.dielectric = 4;
  PairKernel k = make_pair_kernel(p);
  EXPECT_EQ(k.form, PairForm::coulomb);
  EXPECT_DOUBLE_EQ(k.scale_d, 332.0637 / 4);
  EXPECT_DOUBLE_EQ(pair_term_double(k, 4.0), 0.5);
  EXPECT_DOUBLE_EQ(pair_term_double(k, 0.0), 1.0 / p.min_distance);  // clamped, finite
  using Mf = ScalarMath<float>;
  EXPECT_NEAR(pair_term<PairForm::coulomb>(4.0f, Mf::rsqrt(4.0f), k.exp2_kappa), 0.5f, 1e-7);

  p.dielectric = 1;
  p.distance_dependent = true;
  k = make_pair_kernel(p);
  EXPECT_EQ(k.form, PairForm::distance_dependent);
  EXPECT_DOUBLE_EQ(k.scale_d * pair_term_double(k, 9.0), 332.0637 / (4 * 3 * 3));

  p.distance_dependent = false;
  p.dielectric = 78.54;
  p.ionic_strength = 0.1;
  k = make_pair_kernel(p);
  EXPECT_EQ(k.form, PairForm::debye_huckel);
  EXPECT_NEAR(pair_term_double(k, 25.0), std::exp(-k.kappa_d * 5.0) / 5.0, 1e-15);
  EXPECT_NEAR(pair_term<PairForm::debye_huckel>(25.0f, Mf::rsqrt(25.0f), k.exp2_kappa),
              std::exp(-k.kappa_d * 5.0) / 5.0, 1e-7);

  p.distance_dependent = true;
  EXPECT_THROW(make_pair_kernel(p), Error);  // ddd with screening
}

// Issue 35 group 1: OMP_NUM_THREADS=100000 (OpenMP's default on every thread that sets none) and
// --threads/threads= of 100000 made libgomp fail or crash. One bound holds for both.
TEST(Threads, TeamsStayWithinTheBoundWhateverIsAsked) {
  const int bound = max_threads();
  EXPECT_EQ(bound, kThreadsPerHardwareThread * std::max(1, omp_get_num_procs()));
  EXPECT_EQ(bounded_threads(1, "--threads"), 1);
  EXPECT_EQ(bounded_threads(bound, "--threads"), bound);
  EXPECT_EQ(bounded_threads(100000, "--threads"), bound);
  EXPECT_EQ(bounded_threads(std::int64_t(1) << 62, "--threads"), bound);

  const int before = omp_get_max_threads();
  omp_set_num_threads(100000);  // as OMP_NUM_THREADS=100000 leaves a new thread
  EXPECT_EQ(team_size(), bound);
  int team = 0;
#pragma omp parallel num_threads(team_size())
#pragma omp single
  team = omp_get_num_threads();
  EXPECT_LE(team, bound);
  EXPECT_GE(team, 1);

  set_openmp_threads(100000);
  EXPECT_EQ(omp_get_max_threads(), bound);
  set_openmp_threads(1);
  EXPECT_EQ(team_size(), 1);
  set_openmp_threads(0);  // 0 keeps the current default
  EXPECT_EQ(omp_get_max_threads(), 1);
  omp_set_num_threads(before);
}
