// The CPU direct-summation engine against float64 sums and closed-form potentials.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "helpers.hpp"

using namespace dcsgrid;
using namespace dcsgrid::engine;

namespace {

// k_C / (R·T) at 298.15 K: the Coulomb constant in kT/e·Å per e, from the constants themselves.
const double kKT = kCoulomb / (kGasConstant * kDefaultTemperature);

Physics coulomb(double eps = 1.0) {
  Physics p;
  p.dielectric = eps;
  return p;
}
Physics ddd() {
  Physics p;
  p.distance_dependent = true;
  return p;
}
Physics debye_huckel() {
  Physics p;
  p.dielectric = 78.54;
  p.ionic_strength = 0.15;
  return p;
}

std::vector<float> run_direct(const AtomSet& atoms, const GridSpec& grid, const Physics& physics,
                              Slab slab) {
  std::vector<float> out(grid.plane_size() * slab.planes(), NAN);
  direct_sum_cpu(atoms, grid, make_pair_kernel(physics), slab, out.data());
  return out;
}
std::vector<float> run_direct(const AtomSet& atoms, const GridSpec& grid, const Physics& physics) {
  return run_direct(atoms, grid, physics, Slab{0, grid.nz()});
}

double distance(const std::array<double, 3>& p, const AtomSet& atoms, std::size_t a) {
  return std::hypot(p[0] - atoms.x[a], p[1] - atoms.y[a], p[2] - atoms.z[a]);
}

}  // namespace

TEST(CpuDirect, MatchesFloat64SumForEveryPairForm) {
  // Far from the origin, so the grid frame's precision matters; nx = 13 leaves a partial vector.
  const Box box{{95, -55, 28}, {115, -37, 44}};
  const AtomSet atoms = test::random_atoms(3000, box, 7);
  const GridSpec grid = grid_from_origin({92.3, -57.1, 25.6}, {13, 11, 9}, 1.9);
  for (const Physics& physics : {coulomb(), coulomb(4.0), ddd(), debye_huckel()}) {
    const auto ref = test::reference_direct(atoms, grid, make_pair_kernel(physics));
    const auto got = run_direct(atoms, grid, physics);
    EXPECT_LT(test::relative_l2(got, ref), 1e-6) << describe(physics);
  }
}

TEST(CpuDirect, WaterBoxOf30000AtomsWithin1e6) {
  // A neutral solvent: most of each point's sum cancels, the hard case for float32 terms (the
  // whole box gives 8.7e-7, see src/engine/cpu_direct.cpp; this interior grid 6.3e-7).
  const AtomSet atoms = water_box_atoms(30000, 3);
  const Box box = bounding_box(atoms);
  const GridSpec grid = grid_centered(box.center(), {16, 8, 4}, 0.5);  // 33x17x9 points
  for (const Physics& physics : {coulomb(), debye_huckel()}) {
    const auto ref = test::reference_direct(atoms, grid, make_pair_kernel(physics));
    const double err = test::relative_l2(run_direct(atoms, grid, physics), ref);
    EXPECT_LT(err, 1e-6) << describe(physics);
    std::printf("water box, %s: relative L2 %.3g\n", describe(physics).c_str(), err);
  }
}

TEST(CpuDirect, OddGridShapesAndSlabs) {
  const AtomSet atoms = test::random_atoms(500, Box{{0, 0, 0}, {10, 10, 10}}, 11);
  const PairKernel kernel = make_pair_kernel(coulomb());
  for (const std::array<std::int64_t, 3> dims :
       {std::array<std::int64_t, 3>{1, 1, 1}, {7, 1, 2}, {8, 3, 1}, {33, 2, 3}, {1, 5, 4}}) {
    const GridSpec grid = grid_from_origin({-1.3, 0.2, 3.1}, dims, 0.6);
    const auto got = run_direct(atoms, grid, coulomb());
    EXPECT_LT(test::relative_l2(got, test::reference_direct(atoms, grid, kernel)), 1e-6)
        << grid.describe();
  }
  // Planes [3, 6) of 9, alone.
  const GridSpec grid = grid_from_origin({-2, -2, -2}, {19, 6, 9}, 1.5);
  const auto slab = run_direct(atoms, grid, coulomb(), Slab{3, 6});
  EXPECT_LT(test::relative_l2(slab, test::reference_direct(atoms, grid, kernel, 3, 6)), 1e-6);
}

TEST(CpuDirect, OneChargeIsAnalytic) {
  AtomSet atoms;
  const double q = 0.7;
  atoms.push_back(1.3, -0.4, 2.1, q);
  const GridSpec grid = grid_from_origin({-4, -6, -3}, {17, 12, 5}, 0.75);
  // Debye length of 0.15 M 1:1 salt in water at 298 K is 7.85 Å (0.304 nm / sqrt(I)).
  const double kappa = debye_kappa(0.15, 78.54, kDefaultTemperature);
  ASSERT_NEAR(1 / kappa, 3.04 / std::sqrt(0.15), 0.02);
  struct Case {
    Physics physics;
    double (*potential)(double q, double r, double kappa);
  };
  const Case cases[] = {
      {coulomb(2.0), [](double q, double r, double) { return q * kKT / (2.0 * r); }},
      {ddd(), [](double q, double r, double) { return q * kKT / (4 * r * r); }},
      {debye_huckel(),
       [](double q, double r, double k) { return q * kKT * std::exp(-k * r) / (78.54 * r); }},
  };
  for (const Case& c : cases) {
    const auto got = run_direct(atoms, grid, c.physics);
    for (std::size_t n = 0; n < grid.point_count(); ++n) {
      const auto ijk = grid.ijk(n);
      const double r = std::max(distance(grid.position(ijk[0], ijk[1], ijk[2]), atoms, 0), 0.5);
      const double expected = c.potential(q, r, kappa);
      ASSERT_NEAR(got[n], expected, 1e-6 * std::abs(expected)) << describe(c.physics) << " r=" << r;
    }
  }
}

TEST(CpuDirect, DipoleMatchesTwoChargesAndFarField) {
  // ±q at ±d/2 on z, centred at c.
  const double q = 0.5, d = 1.2;
  const std::array<double, 3> c{3.0, -2.0, 1.0};
  AtomSet atoms;
  atoms.push_back(c[0], c[1], c[2] + d / 2, q);
  atoms.push_back(c[0], c[1], c[2] - d / 2, -q);
  // A coarse grid 60 Å wide around the dipole: far-field points dominate.
  const GridSpec grid = grid_centered(c, {60, 60, 60}, 6.0);
  const auto got = run_direct(atoms, grid, coulomb());
  int far_points = 0;
  for (std::size_t n = 0; n < grid.point_count(); ++n) {
    const auto ijk = grid.ijk(n);
    const auto p = grid.position(ijk[0], ijk[1], ijk[2]);
    const double exact = q * kKT * (1 / distance(p, atoms, 0) - 1 / distance(p, atoms, 1));
    const double scale = q * kKT / std::max(distance(p, atoms, 0), 0.5);
    ASSERT_NEAR(got[n], exact, 1e-6 * scale) << "point " << n;
    const double R = std::hypot(p[0] - c[0], p[1] - c[1], p[2] - c[2]);
    if (R < 20) continue;
    // Far field: k·p·cosθ / R², with corrections of order (d/R)².
    const double far = kKT * q * d * ((p[2] - c[2]) / R) / (R * R);
    EXPECT_NEAR(got[n], far, 2 * (d / R) * (d / R) * kKT * q * d / (R * R)) << "R=" << R;
    ++far_points;
  }
  EXPECT_GT(far_points, 500);
}

TEST(CpuDirect, PointOnAnAtomIsFiniteAndUsesMinDistance) {
  AtomSet atoms;
  atoms.push_back(1.0, 2.0, 3.0, -0.4);
  atoms.push_back(1.25, 2.0, 3.0, 0.3);  // 0.25 Å away, inside r_min too
  const GridSpec grid = grid_from_origin({0, 1, 2}, {9, 3, 3}, 0.5);  // point (2, 2, 2) is on atom 0
  Physics physics = coulomb();
  physics.min_distance = 0.6;
  for (const Physics& p : {physics, ddd(), debye_huckel()}) {
    const auto got = run_direct(atoms, grid, p);
    for (float v : got) ASSERT_TRUE(std::isfinite(v)) << describe(p);
  }
  const auto got = run_direct(atoms, grid, physics);
  EXPECT_NEAR(got[grid.index(2, 2, 2)], (-0.4 + 0.3) * kKT / 0.6, 1e-6 * 0.1 * kKT / 0.6);
}

TEST(CpuDirect, BackendRunInSlabsEqualsOneSlab) {
  const AtomSet atoms = test::random_atoms(700, Box{{0, 0, 0}, {12, 9, 15}}, 5);
  PotentialRequest request;
  request.atoms = &atoms;
  request.grid = grid_from_origin({-2, -2, -2}, {21, 14, 11}, 0.9);
  request.physics = debye_huckel();
  auto backend = make_cpu_backend();
  EXPECT_EQ(backend->name(), "cpu");
  EXPECT_TRUE(backend->supports(Method::direct));
  EXPECT_TRUE(backend->supports(Method::cutoff));
  const auto whole = run_direct(atoms, request.grid, request.physics);
  backend->slab_bytes = 2 * request.grid.plane_size() * sizeof(float);  // 2 planes: 6 slabs
  int slabs = 0;
  backend->run(request, [&](Slab, const float*) { ++slabs; });
  EXPECT_EQ(slabs, 6);
  EXPECT_EQ(compute_grid(*backend, request), whole);
}

TEST(CpuDirect, RejectsSlabsOutsideTheGrid) {
  const AtomSet atoms = test::random_atoms(10, Box{{0, 0, 0}, {1, 1, 1}}, 1);
  const GridSpec grid = grid_from_origin({0, 0, 0}, {4, 4, 4}, 1.0);
  std::vector<float> out(grid.point_count());
  const PairKernel kernel = make_pair_kernel(coulomb());
  EXPECT_THROW(direct_sum_cpu(atoms, grid, kernel, Slab{2, 5}, out.data()), Error);
  EXPECT_THROW(direct_sum_cpu(atoms, grid, kernel, Slab{3, 1}, out.data()), Error);
}
