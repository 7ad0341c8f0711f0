// Multilevel summation, the long-range part (engine/msm.hpp): the interpolation basis against
// its defining properties, and the long-range potential plus a float64 short-range sum computed
// here against the float64 direct sum, on random atoms, 1HPV and a water box, and against
// analytic potentials far from the charges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/softening.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/engine/msm.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"

using namespace dcsgrid;
using namespace dcsgrid::engine;

namespace {

// Float64 split sums at every grid point: short = Σ_{r<a} q (1/max(r, r_min) − γ(r/a)/a),
// long = Σ q γ(r/a)/a, both times the kernel's scale.
struct SplitReference {
  std::vector<double> short_range, long_range;
};
SplitReference split_reference(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel,
                               double a, int softening_order) {
  SplitReference ref;
  ref.short_range.assign(grid.point_count(), 0.0);
  ref.long_range.assign(grid.point_count(), 0.0);
  const double r_min = std::sqrt(kernel.min_r2_d);
  for (std::size_t n = 0; n < grid.point_count(); ++n) {
    const auto ijk = grid.ijk(n);
    const auto p = grid.position(ijk[0], ijk[1], ijk[2]);
    double s = 0, l = 0;
    for (std::size_t i = 0; i < atoms.size(); ++i) {
      const double dx = p[0] - atoms.x[i], dy = p[1] - atoms.y[i], dz = p[2] - atoms.z[i];
      const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
      const double smooth = softening(softening_order, r / a) / a;
      l += atoms.q[i] * smooth;
      if (r < a) s += atoms.q[i] * (1.0 / std::max(r, r_min) - smooth);
    }
    ref.short_range[n] = kernel.scale_d * s;
    ref.long_range[n] = kernel.scale_d * l;
  }
  return ref;
}

std::vector<float> long_range(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel,
                              const MsmOptions& options) {
  const MsmLongRange msm(atoms, grid, kernel.scale, options);
  std::vector<float> out(grid.point_count(), 0.0f);
  msm.add_to({0, grid.nz()}, out.data());
  return out;
}

// Short-range reference plus MSM's long range, against the float64 direct sum.
struct MsmErrors {
  double total = 0;       // relative L2 of the total against direct
  double long_range = 0;  // relative L2 of the long-range part against its float64 sum
};
MsmErrors msm_errors(const AtomSet& atoms, const GridSpec& grid, const MsmOptions& options) {
  const PairKernel kernel = make_pair_kernel(Physics{});
  const SplitReference ref = split_reference(atoms, grid, kernel, options.cutoff, softening_order_used(options));
  const std::vector<double> direct = test::reference_direct(atoms, grid, kernel);
  const std::vector<float> lr = long_range(atoms, grid, kernel, options);
  std::vector<float> total(lr.size());
  for (std::size_t n = 0; n < lr.size(); ++n) total[n] = float(ref.short_range[n] + lr[n]);
  return {test::relative_l2(total, direct), test::relative_l2(lr, ref.long_range)};
}

MsmOptions options_of_order(int order) {
  MsmOptions o;
  o.order = order;
  return o;
}

using test::error_message;

AtomSet read_1hpv() {
  return io::read_structure(test::data_file("1hpv_pdb2pqr_amber.pqr.gz")).atoms;
}

}  // namespace

TEST(EngineMsmBasis, CatmullRomForOrderFour) {
  const MsmBasis b = make_msm_basis(4);
  for (double t = -2.5; t <= 2.5; t += 0.0625) {
    const double u = std::abs(t);
    const double expected = u <= 1 ? 1 - 2.5 * u * u + 1.5 * u * u * u
                                   : (u <= 2 ? 2 - 4 * u + 2.5 * u * u - 0.5 * u * u * u : 0.0);
    EXPECT_NEAR(msm_phi(b, t), expected, 1e-13) << "t = " << t;
  }
}

// Order 6 against the closed form of the quintic (Hardy's thesis; LAMMPS's msm uses it too).
TEST(EngineMsmBasis, QuinticForOrderSix) {
  const MsmBasis b = make_msm_basis(6);
  for (double t = -3.5; t <= 3.5; t += 0.0625) {
    const double u = std::abs(t), u2 = u * u;
    double expected = 0;
    if (u <= 1)
      expected = (1 - u2) * (2 - u) * (6 + 3 * u - 5 * u2) / 12;
    else if (u <= 2)
      expected = -(u - 1) * (2 - u) * (3 - u) * (4 + 9 * u - 5 * u2) / 24;
    else if (u <= 3)
      expected = (u - 1) * (u - 2) * (3 - u) * (3 - u) * (4 - u) / 24;
    EXPECT_NEAR(msm_phi(b, t), expected, 1e-12) << "t = " << t;
  }
}

TEST(EngineMsmBasis, NodalEvenC1AndReproducesPolynomials) {
  for (int p : {4, 6, 8, 10}) {
    const MsmBasis b = make_msm_basis(p);
    for (int n = -p; n <= p; ++n) EXPECT_NEAR(msm_phi(b, n), n == 0 ? 1.0 : 0.0, 1e-12) << p << " " << n;
    const double eps = 1e-6;
    for (int n = -p / 2; n <= p / 2; ++n) {  // value and slope continuous across each knot
      EXPECT_NEAR(msm_phi(b, n - eps), msm_phi(b, n + eps), 1e-5) << "order " << p << " knot " << n;
      const double left = (msm_phi(b, n - eps) - msm_phi(b, n - 2 * eps)) / eps;
      const double right = (msm_phi(b, n + 2 * eps) - msm_phi(b, n + eps)) / eps;
      EXPECT_NEAR(left, right, 1e-4) << "order " << p << " knot " << n;
    }
    for (double t = 0.03; t < p; t += 0.17) EXPECT_NEAR(msm_phi(b, t), msm_phi(b, -t), 1e-12);
    EXPECT_EQ(msm_phi(b, p / 2 + 0.01), 0.0);
    // Interpolating f(u) = (u − 0.3)^k from the nodes gives it back for k ≤ p − 2.
    for (int k = 0; k <= p - 2; ++k)
      for (double u = -1.3; u < 2.0; u += 0.11) {
        double sum = 0;
        for (int node = -p; node <= p + 2; ++node) sum += msm_phi(b, u - node) * std::pow(node - 0.3, k);
        EXPECT_NEAR(sum, std::pow(u - 0.3, k), 1e-9 * std::pow(3.0, k)) << "order " << p << " degree " << k;
      }
  }
}

TEST(EngineMsmOptions, RejectsBadSettingsByName) {
  auto message = [](MsmOptions o) { return error_message([&] { validate(o); }); };
  MsmOptions o;
  EXPECT_EQ(message(o), "");
  o.order = 5;
  EXPECT_NE(message(o).find("order must be 4, 6, 8 or 10, got 5"), std::string::npos);
  o = {};
  o.cutoff = -1;
  EXPECT_NE(message(o).find("cutoff must be positive"), std::string::npos);
  o = {};
  o.spacing = 0;
  EXPECT_NE(message(o).find("spacing must be positive"), std::string::npos);
  o = {};
  o.spacing = 20;
  EXPECT_NE(message(o).find("cutoff/spacing must lie in [1, 16]"), std::string::npos);
  o = {};
  o.softening_order = 9;
  EXPECT_NE(message(o).find("softening order"), std::string::npos);
  EXPECT_EQ(softening_order_used(options_of_order(6)), 3);
}

// The documented settings (docs/msm.md): the default and the high-accuracy one.
MsmOptions high_accuracy() {
  MsmOptions o;
  o.order = 10;
  return o;
}

TEST(EngineMsmOptions, RefusesPhysicsWithoutAMultilevelForm) {
  Physics physics;
  physics.dielectric = 4.0;
  EXPECT_NO_THROW(require_constant_dielectric("msm", physics));
  physics.distance_dependent = true;
  EXPECT_THROW(require_constant_dielectric("msm", physics), Error);
  physics = {};
  physics.ionic_strength = 0.15;
  EXPECT_NE(error_message([&] { require_constant_dielectric("msm", physics); }).find("Debye"), std::string::npos);
}

TEST(EngineMsm, RandomAtomsMeetTheTargets) {
  const AtomSet atoms = test::random_atoms(400, Box{{0, 0, 0}, {24, 24, 24}}, 7);
  const GridSpec grid = grid_from_origin({-6, -6, -6}, {19, 19, 19}, 2.0);
  EXPECT_LT(msm_errors(atoms, grid, MsmOptions{}).total, 1e-3);
  EXPECT_LT(msm_errors(atoms, grid, high_accuracy()).total, 1e-4);
}

TEST(EngineMsm, ProteinMeetsTheTargets) {
  const AtomSet atoms = read_1hpv();
  const GridSpec grid = grid_around(bounding_box(atoms), 2.0, 4.0);
  EXPECT_LT(msm_errors(atoms, grid, MsmOptions{}).total, 1e-3);
  EXPECT_LT(msm_errors(atoms, grid, high_accuracy()).total, 1e-4);
}

TEST(EngineMsm, WaterBox) {
  const AtomSet atoms = water_box(18.0, 5);
  const GridSpec grid = grid_around(bounding_box(atoms), 0.6, 2.0);
  // Order 4 at the default spacing misses 1e-3 on water (docs/msm.md): held to what it gives;
  // order 6, the default, meets it at the same cost.
  MsmOptions order4;
  order4.order = 4;
  EXPECT_LT(msm_errors(atoms, grid, order4).total, 5e-3);
  EXPECT_EQ(MsmOptions{}.order, 6);
  EXPECT_LT(msm_errors(atoms, grid, MsmOptions{}).total, 1e-3);
  EXPECT_LT(msm_errors(atoms, grid, high_accuracy()).total, 1e-4);
}

// Beyond a the short-range part is zero, so φ_long alone is the whole Coulomb potential.
TEST(EngineMsm, PointChargeAndDipoleFarAway) {
  const PairKernel kernel = make_pair_kernel(Physics{});
  const GridSpec grid = grid_from_origin({14.3, -7.1, -6.6}, {12, 15, 14}, 1.1);
  AtomSet charge, dipole;
  charge.push_back(0.2, 0.1, -0.3, 1.0);
  dipole.push_back(0.7, 0.1, -0.3, 1.0);
  dipole.push_back(-0.3, 0.1, -0.3, -1.0);
  for (const AtomSet* atoms : {&charge, &dipole}) {
    std::vector<double> exact(grid.point_count());
    for (std::size_t n = 0; n < exact.size(); ++n) {
      const auto ijk = grid.ijk(n);
      const auto p = grid.position(ijk[0], ijk[1], ijk[2]);
      for (std::size_t i = 0; i < atoms->size(); ++i)
        exact[n] += kernel.scale_d * atoms->q[i] /
                    std::hypot(p[0] - atoms->x[i], p[1] - atoms->y[i], p[2] - atoms->z[i]);
    }
    const bool is_dipole = atoms->size() == 2;
    EXPECT_LT(test::relative_l2(long_range(*atoms, grid, kernel, MsmOptions{}), exact), is_dipole ? 1e-2 : 1e-3);
    EXPECT_LT(test::relative_l2(long_range(*atoms, grid, kernel, high_accuracy()), exact), is_dipole ? 1e-3 : 1e-4);
  }
}

TEST(EngineMsm, OutputGridNotAlignedAndAnisotropic) {
  const AtomSet atoms = test::random_atoms(200, Box{{0, 0, 0}, {16, 16, 16}}, 11);
  GridSpec grid = grid_from_origin({-3.37, 1.13, 2.71}, {23, 17, 13}, 1.0);
  grid.spacing = {0.77, 0.61, 0.93};
  EXPECT_LT(msm_errors(atoms, grid, MsmOptions{}).total, 1e-3);
}

// A grid of a few points inside one MSM cell, in the middle of the atoms (most of them outside it).
TEST(EngineMsm, GridSmallerThanOneCellAmongAtoms) {
  const AtomSet atoms = test::random_atoms(300, Box{{0, 0, 0}, {20, 20, 20}}, 13);
  GridSpec grid = grid_from_origin({9.1, 10.3, 8.7}, {3, 2, 2}, 0.4);
  const MsmErrors e = msm_errors(atoms, grid, MsmOptions{});
  EXPECT_LT(e.total, 1e-3);
  EXPECT_LT(e.long_range, 2e-3);
}

TEST(EngineMsm, OneAtomAndAllAtomsInOneSpot) {
  const PairKernel kernel = make_pair_kernel(Physics{});
  const GridSpec grid = grid_from_origin({-5, -4, -6}, {11, 10, 12}, 1.0);
  AtomSet one, pile;
  one.push_back(0.3, 0.4, -0.2, 1.0);
  EXPECT_LT(msm_errors(one, grid, MsmOptions{}).total, 1e-3);
  // 40 charges on one spot act as one atom of their total charge (the method is linear).
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> q(-1, 1);
  for (int i = 0; i < 40; ++i) pile.push_back(0.3, 0.4, -0.2, q(rng));
  AtomSet merged;
  merged.push_back(0.3, 0.4, -0.2, pile.total_charge());
  const std::vector<float> a = long_range(pile, grid, kernel, MsmOptions{});
  const std::vector<float> b = long_range(merged, grid, kernel, MsmOptions{});
  EXPECT_LT(test::relative_l2(a, b), 1e-6);
  EXPECT_LT(msm_errors(pile, grid, MsmOptions{}).total, 1e-3);
}

TEST(EngineMsm, SlabsAddToWhatOutHolds) {
  const AtomSet atoms = test::random_atoms(100, Box{{0, 0, 0}, {10, 10, 10}}, 17);
  const GridSpec grid = grid_from_origin({-2, -2, -2}, {9, 8, 7}, 1.7);
  const MsmLongRange msm(atoms, grid, 2.5f, MsmOptions{});
  std::vector<float> whole(grid.point_count(), 0.0f), parts(grid.point_count(), 1.0f);
  msm.add_to({0, grid.nz()}, whole.data());
  msm.add_to({0, 3}, parts.data());
  msm.add_to({3, grid.nz()}, parts.data() + 3 * grid.plane_size());
  for (std::size_t n = 0; n < whole.size(); ++n) ASSERT_FLOAT_EQ(parts[n], whole[n] + 1.0f) << n;
  EXPECT_THROW(msm.add_to({2, grid.nz() + 1}, parts.data()), Error);
}

TEST(EngineMsm, RefusesNonFiniteAtoms) {
  AtomSet atoms;
  atoms.push_back(1, 2, 3, 1.0);
  atoms.push_back(1, std::nan(""), 3, 1.0);
  const GridSpec grid = grid_from_origin({0, 0, 0}, {4, 4, 4}, 1.0);
  const std::string message = error_message([&] { MsmLongRange(atoms, grid, 1.0f, MsmOptions{}); });
  EXPECT_NE(message.find("atom 2 has a non-finite coordinate"), std::string::npos) << message;
}

TEST(EngineMsm, ThreadsAddDisjointSlabsAtOnce) {
  const AtomSet atoms = test::random_atoms(300, Box{{0, 0, 0}, {14, 14, 14}}, 19);
  const GridSpec grid = grid_from_origin({-1, -1, -1}, {17, 15, 16}, 1.0);
  const MsmLongRange msm(atoms, grid, 1.5f, MsmOptions{});
  std::vector<float> whole(grid.point_count(), 0.0f), parts(grid.point_count(), 0.0f);
  msm.add_to({0, grid.nz()}, whole.data());
  std::vector<std::thread> threads;
  for (std::int64_t z = 0; z < grid.nz(); z += 4)
    threads.emplace_back([&, z] {
      msm.add_to({z, std::min(grid.nz(), z + 4)}, parts.data() + z * grid.plane_size());
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(parts, whole);
}

TEST(EngineMsm, NoAtomsGiveZero) {
  const GridSpec grid = grid_from_origin({0, 0, 0}, {4, 4, 4}, 1.0);
  const std::vector<float> out = long_range(AtomSet{}, grid, make_pair_kernel(Physics{}), MsmOptions{});
  for (float v : out) EXPECT_EQ(v, 0.0f);
}

TEST(EngineMsm, HierarchyIsLinearInSize) {
  // A 400 Å box of output: each level has about 1/8 of the points of the one below (less the
  // interpolation margins), and the top level is small.
  const GridSpec grid = grid_from_origin({0, 0, 0}, {201, 201, 201}, 2.0);
  const MsmPlan plan = make_msm_plan(AtomSet{}, grid, MsmOptions{});
  ASSERT_GE(plan.levels.size(), 3u);
  for (std::size_t l = 1; l < plan.levels.size(); ++l)
    EXPECT_LT(plan.levels[l].points(), plan.levels[l - 1].points() / 3);
  EXPECT_LT(plan.levels.back().points(), 20000u);
}

TEST(EngineMsmLevels, FftConvolutionIsTheDenseSum) {
  // Every level of an anisotropic hierarchy (the top one too), convolved by FFTs and by the dense
  // sums, and at sampled points by the sum written out here: equal to rounding. A padding too
  // small to hold the stencil's reach would wrap sums around the level's ends.
  const AtomSet atoms = test::random_atoms(300, Box{{0, 0, 0}, {64, 44, 36}}, 11);
  const GridSpec grid = grid_from_origin({0, 0, 0}, {33, 23, 19}, 2.0);
  const MsmPlan plan = make_msm_plan(atoms, grid, MsmOptions{});
  ASSERT_GE(plan.levels.size(), 3u);
  std::vector<double> q = msm_anterpolate(plan, atoms);
  for (int level = 0; level <= plan.top(); ++level) {
    if (level > 0) q = msm_restrict(plan, level - 1, q);
    const std::vector<double> fft = msm_level_potential(plan, level, q, MsmConvolution::fft);
    const std::vector<double> dense = msm_level_potential(plan, level, q, MsmConvolution::dense);
    ASSERT_EQ(fft.size(), dense.size());
    double most = 0, worst = 0;
    for (std::size_t i = 0; i < fft.size(); ++i) {
      most = std::max(most, std::abs(dense[i]));
      worst = std::max(worst, std::abs(fft[i] - dense[i]));
    }
    EXPECT_GT(most, 0.0) << "level " << level;
    EXPECT_LE(worst, 1e-12 * most) << "level " << level;

    const auto n = plan.levels[level].n;
    const int r = plan.stencil_radius, w = 2 * r + 1;
    const auto kernel = [&](std::int64_t dx, std::int64_t dy, std::int64_t dz) {
      if (level == plan.top())
        return plan.top_kernel[(std::abs(dz) * n[1] + std::abs(dy)) * n[0] + std::abs(dx)];
      if (std::abs(dx) > r || std::abs(dy) > r || std::abs(dz) > r) return 0.0;
      return plan.stencil[((dz + r) * w + dy + r) * w + dx + r] / double(1 << level);
    };
    std::mt19937_64 rng(level);
    for (int sample = 0; sample < 40; ++sample) {
      const std::int64_t x = rng() % n[0], y = rng() % n[1], z = rng() % n[2];
      double sum = 0;
      for (std::int64_t k = 0, j = 0; k < n[2]; ++k)
        for (std::int64_t m = 0; m < n[1]; ++m)
          for (std::int64_t i = 0; i < n[0]; ++i, ++j) sum += q[j] * kernel(x - i, y - m, z - k);
      EXPECT_NEAR(fft[(z * n[1] + y) * n[0] + x], sum, 1e-12 * most) << "level " << level;
    }
  }
  // The whole long range, FFTs where they pay against dense sums everywhere.
  const float scale = make_pair_kernel(Physics{}).scale;
  const MsmLongRange chosen(atoms, grid, scale, MsmOptions{});
  const MsmLongRange dense(atoms, grid, scale, MsmOptions{}, MsmConvolution::dense);
  EXPECT_LT(test::relative_l2(std::vector<float>(chosen.finest_potential().begin(), chosen.finest_potential().end()),
                              dense.finest_potential()),
            1e-7);
}
