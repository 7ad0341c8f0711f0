// The periodic methods' engine pieces (engine/periodic.hpp) against float64 references written
// here with plain loops and no engine code: the real-space sum over every image within a radius
// where erfc(β_ref·r)/r < 1e-16, and the reciprocal sum over every k with e^{−k²/4β_ref²} ≥ 1e-17,
// at a β_ref of the reference's own (the full Ewald potential does not depend on β). Physics with
// a 0.01 Å minimum distance: the clamp (taken at the engine's β) never meets a point here, so
// the engine's split and the reference's may differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/periodic.hpp"
#include "helpers.hpp"
#include "periodic_reference.hpp"

namespace dcsgrid::test {
namespace {

using engine::PeriodicOptions;
using engine::Slab;

// ---- the engine, composed as a backend would ----

enum class Reciprocal { ewald, pme };

std::vector<float> engine_map(const AtomSet& atoms, const UnitCell& cell, const GridSpec& grid,
                              const PeriodicOptions& options, Reciprocal method,
                              bool background = true) {
  std::vector<float> out(grid.point_count(), 0.0f);
  const Slab all{0, grid.nz()};
  const PairKernel kernel = make_pair_kernel(test_physics());
  double beta = 0, rc = 0;
  if (method == Reciprocal::ewald) {
    const engine::EwaldParameters p = engine::resolve_ewald(cell, options);
    engine::EwaldReciprocal reciprocal(cell, p, kernel.scale_d, background);
    reciprocal.set_atoms(atoms);
    reciprocal.add_to(grid, all, out.data());
    beta = p.beta;
    rc = p.real_cutoff;
  } else {
    const engine::PmeParameters p = engine::resolve_pme(cell, options);
    engine::PmeReciprocal reciprocal(cell, p, kernel.scale_d, background);
    reciprocal.set_atoms(atoms);
    reciprocal.add_to(grid, all, out.data());
    beta = p.beta;
    rc = p.real_cutoff;
  }
  if (rc > 0) {
    const AtomSet images = engine::periodic_images(atoms, cell, engine::grid_box(grid), rc);
    engine::cutoff_accumulate_cpu(images, grid, kernel, engine::ewald_real_space(beta, rc), all,
                                  out.data());
  }
  return out;
}

// The smooth map: the reciprocal part of Gaussian charges, no background.
std::vector<float> smooth_map(const AtomSet& atoms, const UnitCell& cell, const GridSpec& grid,
                              PeriodicOptions options) {
  return engine_map(atoms, cell, grid, options, Reciprocal::pme, false);
}

double rms(const std::vector<float>& v) {
  double sum = 0;
  for (float x : v) sum += double(x) * x;
  return std::sqrt(sum / double(v.size()));
}

double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  return worst;
}


// ---- parameters and pieces ----

TEST(Periodic, BsplineWeightsAreTheCardinalBspline) {
  for (int order = 4; order <= 12; ++order)
    for (double w : {0.0, 0.1, 0.5, 0.77, 0.999}) {
      double m[12];
      engine::bspline_weights(w, order, m);
      double sum = 0, mean = 0;
      for (int j = 0; j < order; ++j) {
        sum += m[j];
        mean += m[j] * (w + j);
      }
      EXPECT_NEAR(sum, 1.0, 1e-14);                 // partition of unity
      EXPECT_NEAR(mean, order / 2.0, 1e-12);        // M_p is symmetric about p/2
      if (order == 4) {                             // the cubic's closed form
        EXPECT_NEAR(m[0], w * w * w / 6, 1e-15);
        EXPECT_NEAR(m[3], std::pow(1 - w, 3) / 6, 1e-15);
      }
    }
}

TEST(Periodic, ParametersFollowTheTolerance) {
  PeriodicOptions o;
  o.real_cutoff = 9;
  o.tolerance = 1e-6;
  const engine::EwaldParameters e = engine::resolve_ewald(triclinic(), o);
  EXPECT_NEAR(std::erfc(e.beta * 9), 1e-6, 1e-12);
  EXPECT_NEAR(std::exp(-e.k_cutoff * e.k_cutoff / (4 * e.beta * e.beta)), 1e-6, 1e-12);
  for (int a = 0; a < 3; ++a)  // |m_a| = |k·a_a|/2π ≤ k_cutoff·|a_a|/2π
    EXPECT_GE(e.kmax[a], e.k_cutoff * norm(triclinic().vectors[a]) / (2 * kPi));
  o.mesh_spacing = 0.9;
  const engine::PmeParameters p = engine::resolve_pme(triclinic(), o);
  EXPECT_EQ(p.beta, e.beta);
  for (int a = 0; a < 3; ++a) {
    EXPECT_GE(double(p.mesh[a]), triclinic().lengths[a] / 0.9);
    EXPECT_TRUE(prims::fft_size_supported(p.mesh[a]));
    EXPECT_EQ(p.mesh[a], prims::fft_good_size(std::size_t(std::ceil(triclinic().lengths[a] / 0.9))));
  }
  o.smooth_beta = 0.25;
  const engine::PmeParameters s = engine::resolve_pme(triclinic(), o);
  EXPECT_EQ(s.beta, 0.25);
  EXPECT_EQ(s.real_cutoff, 0.0);
  for (auto bad : {&PeriodicOptions::real_cutoff, &PeriodicOptions::tolerance,
                   &PeriodicOptions::mesh_spacing}) {
    PeriodicOptions b;
    b.*bad = 0;
    EXPECT_THROW(engine::resolve_pme(triclinic(), b), Error);
  }
  PeriodicOptions b;
  b.pme_order = 3;
  EXPECT_THROW(engine::resolve_pme(triclinic(), b), Error);
  b.pme_order = 13;
  EXPECT_THROW(engine::validate(b), Error);
}

// The images within reach of a region are exactly those a brute-force enumeration finds.
TEST(Periodic, ImagesAreEveryCopyWithinReach) {
  const UnitCell& cell = triclinic();
  AtomSet atoms = atoms_in_cell(cell, 40, 3);
  atoms.push_back(95.0, -70.0, 130.0, 0.5);  // far outside the cell: not wrapped, still imaged
  const Box region{{-7, 3, -12}, {31, 24, 5}};
  const double reach = 6.5;
  const AtomSet images = engine::periodic_images(atoms, cell, region, reach);
  std::vector<std::array<double, 4>> expected, got;
  for (std::size_t i = 0; i < atoms.size(); ++i)
    for (int n1 = -20; n1 <= 20; ++n1)
      for (int n2 = -20; n2 <= 20; ++n2)
        for (int n3 = -20; n3 <= 20; ++n3) {
          Vec3 p{atoms.x[i], atoms.y[i], atoms.z[i]};
          double d2 = 0;
          for (int d = 0; d < 3; ++d) {
            p[d] += n1 * cell.vectors[0][d] + n2 * cell.vectors[1][d] + n3 * cell.vectors[2][d];
            const double gap = std::max({region.lo[d] - p[d], p[d] - region.hi[d], 0.0});
            d2 += gap * gap;
          }
          if (d2 < reach * reach)
            expected.push_back({double(float(p[0])), double(float(p[1])), double(float(p[2])), atoms.q[i]});
        }
  for (std::size_t i = 0; i < images.size(); ++i)
    got.push_back({images.x[i], images.y[i], images.z[i], images.q[i]});
  std::sort(expected.begin(), expected.end());
  std::sort(got.begin(), got.end());
  ASSERT_GT(expected.size(), 2 * atoms.size());
  EXPECT_EQ(got, expected);
  try {
    engine::periodic_images(atoms, cell, region, reach, expected.size() - 1);
    ADD_FAILURE() << "the image limit was not enforced";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(expected.size())), std::string::npos) << e.what();
  }
}

// ---- accuracy against float64 ----

TEST(Periodic, EwaldMatchesFloat64InOrthorhombicAndTriclinicCells) {
  for (const UnitCell* cell : {&orthorhombic(), &triclinic()}) {
    const AtomSet atoms = atoms_in_cell(*cell, 120, 5);
    const GridSpec grid = grid_over_cell(*cell, 2.0, 14);  // points outside the cell too
    const std::vector<double> ref = reference_ewald(atoms, *cell, grid);
    const std::vector<float> got = engine_map(atoms, *cell, grid, PeriodicOptions{}, Reciprocal::ewald);
    EXPECT_LT(relative_l2(got, ref), 1e-5) << cell->describe();
  }
}

TEST(Periodic, PmeMatchesFloat64WithDefaultsAndFinerSettings) {
  for (const UnitCell* cell : {&orthorhombic(), &triclinic()}) {
    const AtomSet atoms = atoms_in_cell(*cell, 150, 6);
    const GridSpec grid = grid_over_cell(*cell, 1.0, 14);
    const std::vector<double> ref = reference_ewald(atoms, *cell, grid);
    EXPECT_LT(relative_l2(engine_map(atoms, *cell, grid, PeriodicOptions{}, Reciprocal::pme), ref), 1e-4)
        << "defaults, " << cell->describe();
    PeriodicOptions fine;  // docs/periodic.md: order 8, 0.8 Å mesh
    fine.pme_order = 8;
    fine.mesh_spacing = 0.8;
    EXPECT_LT(relative_l2(engine_map(atoms, *cell, grid, fine, Reciprocal::pme), ref), 1e-5)
        << "finer, " << cell->describe();
  }
}

// The CPU backend's ewald and pme methods (the run a front end makes) against float64, with the
// cell in the request; the smooth map through --smooth's option.
TEST(Periodic, CpuBackendMethodsMatchFloat64) {
  const auto cpu = engine::make_backend("cpu");
  for (const UnitCell* cell : {&orthorhombic(), &triclinic()}) {
    const AtomSet atoms = atoms_in_cell(*cell, 120, 8, 1.0);  // charged: the background counts
    engine::PotentialRequest r;
    r.atoms = &atoms;
    r.grid = grid_over_cell(*cell, 2.0, 14);
    r.physics = test_physics();
    r.cell = *cell;
    const std::vector<double> ref = reference_ewald(atoms, *cell, r.grid);
    r.method = engine::Method::ewald;
    EXPECT_LT(relative_l2(engine::compute_grid(*cpu, r), ref), 1e-5) << "ewald, " << cell->describe();
    r.method = engine::Method::pme;
    EXPECT_LT(relative_l2(engine::compute_grid(*cpu, r), ref), 1e-4) << "pme, " << cell->describe();
    const ReferenceParts smooth = reference_parts(atoms, *cell, r.grid, 0.25, 0.01, false);
    std::vector<double> smooth_ref(smooth.reciprocal);
    for (double& v : smooth_ref) v *= scale();
    r.periodic.smooth_beta = 0.25;
    for (const engine::Method m : {engine::Method::ewald, engine::Method::pme}) {
      r.method = m;
      EXPECT_LT(relative_l2(engine::compute_grid(*cpu, r), smooth_ref), 1e-5)
          << "smooth " << engine::method_name(m) << ", " << cell->describe();
    }
  }
}

// --grid cell: the maps on a triclinic cell's own (skewed) lattice, its origin off the cell's,
// against float64 at the same points: the real-space part alone (the cutoff engine's rows start
// at other x on every row), ewald, pme and the smooth map, through the CPU backend.
TEST(Periodic, MapsOnTheCellsOwnLatticeMatchFloat64) {
  const UnitCell& cell = triclinic();
  const AtomSet atoms = atoms_in_cell(cell, 120, 12, 1.0);
  GridSpec grid = grid_on_cell(cell, 1.7);
  grid.origin = {0.37, -0.21, 0.13};
  ASSERT_FALSE(grid.orthogonal());
  const double beta = 0.35, rc = 11.0;
  const ReferenceParts parts = reference_parts(atoms, cell, grid, beta, 0.01);
  std::vector<float> real(grid.point_count(), 0.0f);
  const PairKernel kernel = make_pair_kernel(test_physics());
  engine::cutoff_accumulate_cpu(engine::periodic_images(atoms, cell, engine::grid_box(grid), rc), grid, kernel,
                                engine::ewald_real_space(beta, rc), Slab{0, grid.nz()}, real.data());
  std::vector<double> real_ref(parts.real);
  for (double& v : real_ref) v *= scale();
  EXPECT_LT(relative_l2(real, real_ref), 1e-6);  // erfc(0.35·11) = 6e-8: little lies beyond rc
  const auto cpu = engine::make_backend("cpu");
  engine::PotentialRequest r;
  r.atoms = &atoms;
  r.grid = grid;
  r.physics = test_physics();
  r.cell = cell;
  const std::vector<double> ref = reference_ewald(atoms, cell, grid);
  r.method = engine::Method::ewald;
  EXPECT_LT(relative_l2(engine::compute_grid(*cpu, r), ref), 1e-5);
  r.method = engine::Method::pme;
  EXPECT_LT(relative_l2(engine::compute_grid(*cpu, r), ref), 1e-4);
  const ReferenceParts smooth = reference_parts(atoms, cell, grid, 0.25, 0.01, false);
  std::vector<double> smooth_ref(smooth.reciprocal);
  for (double& v : smooth_ref) v *= scale();
  r.periodic.smooth_beta = 0.25;
  EXPECT_LT(relative_l2(engine::compute_grid(*cpu, r), smooth_ref), 1e-5);
  // The lattice holds one period: a grid one point longer along each axis repeats its first plane,
  // row and column there.
  r.periodic = {};
  r.grid.dims = {grid.dims[0] + 1, grid.dims[1] + 1, grid.dims[2] + 1};
  const std::vector<float> longer = engine::compute_grid(*cpu, r);
  const GridSpec& g = r.grid;
  const double tolerance = 1e-5 * rms(longer);  // float sums over other images (pme)
  for (std::int64_t k = 0; k < grid.nz(); ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j) {
      const std::int64_t i = (j + k) % grid.nx();
      ASSERT_NEAR(longer[g.index(grid.nx(), j, k)], longer[g.index(0, j, k)], tolerance);
      ASSERT_NEAR(longer[g.index(i, grid.ny(), k)], longer[g.index(i, 0, k)], tolerance);
      ASSERT_NEAR(longer[g.index(i, j, grid.nz())], longer[g.index(i, j, 0)], tolerance);
    }
  // Methods of orthogonal grids refuse it.
  r.method = engine::Method::direct;
  EXPECT_THROW(engine::compute_grid(*cpu, r), Error);
}

// The smooth map against the float64 reciprocal sum of Gaussian charges of Ewald factor 0.25.
TEST(Periodic, SmoothMapIsTheGaussianChargeReciprocalSum) {
  for (const UnitCell* cell : {&orthorhombic(), &triclinic()}) {
    const AtomSet atoms = atoms_in_cell(*cell, 150, 7, 2.0);  // charged: no background either way
    const GridSpec grid = grid_over_cell(*cell, 3.0, 14);
    const ReferenceParts parts = reference_parts(atoms, *cell, grid, 0.25, 0.01, false);
    std::vector<double> ref(parts.reciprocal);
    for (double& v : ref) v *= scale();
    PeriodicOptions o;
    o.smooth_beta = 0.25;
    EXPECT_LT(relative_l2(smooth_map(atoms, *cell, grid, o), ref), 1e-5) << cell->describe();
  }
}

// PME approaches Ewald as the order and the mesh refine.
TEST(Periodic, PmeConvergesToEwaldWithOrderAndMesh) {
  const AtomSet atoms = atoms_in_cell(triclinic(), 100, 9);
  const GridSpec grid = grid_over_cell(triclinic(), 0.0, 12);
  PeriodicOptions o;
  o.tolerance = 1e-8;  // Ewald's own truncation well below PME's finest error here
  const std::vector<float> ewald = engine_map(atoms, triclinic(), grid, o, Reciprocal::ewald);
  double previous = INFINITY;
  for (const auto& [order, spacing] : {std::pair{4, 1.5}, {4, 1.0}, {6, 1.0}, {8, 0.8}, {10, 0.6}}) {
    o.pme_order = order;
    o.mesh_spacing = spacing;
    const double err = relative_l2(engine_map(atoms, triclinic(), grid, o, Reciprocal::pme), ewald);
    EXPECT_LT(err, previous) << "order " << order << ", spacing " << spacing;
    previous = err;
  }
}

// ---- invariances and closed forms ----

// Translating every atom by a lattice vector, or wrapping them into the cell, changes nothing
// beyond float rounding of the sums (1e-6 of the map's RMS); a point and its translate by a
// lattice vector have the same value. The lattice vectors are integers and the atoms on a 1/4096 Å lattice, so the moved and
// wrapped atoms are exact in float: only the summation order changes.
TEST(Periodic, LatticeTranslationsAndWrappingChangeNothing) {
  const UnitCell cell = *cell_from_vectors({Vec3{16, 0, 0}, Vec3{-4, 16, 0}, Vec3{3, -2, 16}});
  AtomSet atoms, moved, wrapped;
  const AtomSet random = atoms_in_cell(cell, 100, 11);
  const auto dyadic = [](double v) { return std::round(v * 4096) / 4096; };
  for (std::size_t i = 0; i < random.size(); ++i) {
    const Vec3 p{dyadic(random.x[i]), dyadic(random.y[i]), dyadic(random.z[i])};
    atoms.push_back(p[0], p[1], p[2], random.q[i]);
    const Vec3 shift = cell.cartesian({1.0, -2.0, double(i % 3)});
    const Vec3 m{p[0] + shift[0], p[1] + shift[1], p[2] + shift[2]};
    moved.push_back(m[0], m[1], m[2], random.q[i]);
    const Vec3 w = cell.wrap(m);
    wrapped.push_back(w[0], w[1], w[2], random.q[i]);
  }
  ASSERT_EQ(moved.x[7], atoms.x[7] + 27.0f);  // 16 − 2·(−4) + 3, exact
  // Points 16 Å apart along x are translates by the lattice vector a.
  const GridSpec grid = grid_from_origin({-3.1, 0.4, 2.2}, {21, 9, 7}, 1.0);
  for (const Reciprocal method : {Reciprocal::ewald, Reciprocal::pme}) {
    const std::vector<float> base = engine_map(atoms, cell, grid, {}, method);
    const double tolerance = 1e-6 * rms(base);
    EXPECT_LT(max_difference(engine_map(moved, cell, grid, {}, method), base), tolerance);
    EXPECT_LT(max_difference(engine_map(wrapped, cell, grid, {}, method), base), tolerance);
    // Here the float32 real-space sums of two different points: within 1e-6 of the value too.
    for (std::int64_t k = 0; k < grid.nz(); ++k)
      for (std::int64_t j = 0; j < grid.ny(); ++j)
        for (std::int64_t i = 0; i + 16 < grid.nx(); ++i) {
          const float v = base[grid.index(i, j, k)];
          ASSERT_NEAR(v, base[grid.index(i + 16, j, k)], tolerance + 1e-6 * std::abs(v));
        }
  }
}

// The full Ewald potential does not depend on β; for a charged system only with the background
// term, whose share is −scale·πQ/(β²V).
TEST(Periodic, FullPotentialIsIndependentOfBeta) {
  const UnitCell& cell = triclinic();
  const GridSpec grid = grid_over_cell(cell, 0.0, 12);
  for (const double charge : {0.0, 3.0}) {
    const AtomSet atoms = atoms_in_cell(cell, 80, 12, charge);
    PeriodicOptions a, b;
    a.real_cutoff = 8;
    b.real_cutoff = 12;
    b.tolerance = 1e-7;
    const std::vector<float> map_a = engine_map(atoms, cell, grid, a, Reciprocal::ewald);
    const std::vector<float> map_b = engine_map(atoms, cell, grid, b, Reciprocal::ewald);
    EXPECT_LT(relative_l2(map_a, map_b), 1e-5) << "charge " << charge;
    const std::vector<float> bare_a = engine_map(atoms, cell, grid, a, Reciprocal::ewald, false);
    const double beta = engine::resolve_ewald(cell, a).beta;
    const double background = scale() * kPi * charge / (beta * beta * cell.volume);
    for (std::size_t n = 0; n < grid.point_count(); n += 97)
      EXPECT_NEAR(bare_a[n] - map_a[n], background, 1e-5 * std::abs(background) + 1e-6 * rms(map_a))
          << n;
  }
}

// One charge in a cubic cell with the neutralising background: φ(r) = q/r + q·ξ/L + (2π q/3V)·r²
// + O(r⁴/L⁵), ξ = −2.837297479 the Madelung constant of the simple cubic lattice (Wigner
// lattice with uniform background): the background term's closed form.
TEST(Periodic, SingleChargeMatchesTheMadelungConstant) {
  const double L = 24, q = 0.8, xi = -2.8372974794806;
  const UnitCell cell = make_cell({L, L, L});
  AtomSet atoms;
  atoms.push_back(10, 10, 10, q);
  const GridSpec grid = grid_from_origin({9, 9, 9}, {3, 3, 3}, 1.0);  // neighbours at 1 Å
  PeriodicOptions fine;
  fine.tolerance = 1e-8;
  fine.pme_order = 8;
  fine.mesh_spacing = 0.8;
  for (const Reciprocal method : {Reciprocal::ewald, Reciprocal::pme}) {
    const std::vector<float> map = engine_map(atoms, cell, grid, fine, method);
    const double expected = scale() * q * (1.0 + xi / L + 2 * kPi / (3 * L * L * L));
    for (const auto& ijk : {std::array<int, 3>{0, 1, 1}, {2, 1, 1}, {1, 0, 1}, {1, 1, 2}})
      EXPECT_NEAR(map[grid.index(ijk[0], ijk[1], ijk[2])], expected,
                  1e-5 * scale() * q * std::abs(xi / L))
          << (method == Reciprocal::ewald ? "ewald" : "pme");
  }
}

// A neutral pair in ever larger cells approaches the non-periodic direct sum (the images'
// dipole field falls as 1/L³).
TEST(Periodic, NeutralSystemInAHugeCellApproachesTheDirectSum) {
  AtomSet atoms;
  atoms.push_back(0.3, -0.2, 0.6, 0.7);
  atoms.push_back(1.1, 0.5, -0.4, -0.7);
  atoms.push_back(-0.9, 0.4, -0.1, 0.2);
  atoms.push_back(0.2, -1.0, 0.3, -0.2);
  const GridSpec grid = grid_from_origin({-5.05, -5.05, -5.05}, {11, 11, 11}, 1.0);
  const std::vector<double> direct = reference_direct(atoms, grid, make_pair_kernel(test_physics()));
  double previous = INFINITY;
  for (const double L : {40.0, 80.0, 160.0}) {
    PeriodicOptions o;
    o.real_cutoff = L / 3;  // β ∝ 1/L: the k sum keeps the same few hundred vectors
    const std::vector<float> map = engine_map(atoms, make_cell({L, L, L}), grid, o, Reciprocal::ewald);
    const double err = relative_l2(map, direct);
    EXPECT_LT(err, previous) << "L = " << L;
    previous = err;
  }
  EXPECT_LT(previous, 1e-4);
}

// The reciprocal parts alone, whose error is hidden in a full map by the real part near atoms:
// Ewald's to the tolerance, PME's within its defaults' reach.
TEST(Periodic, ReciprocalPartsMatchFloat64) {
  const UnitCell& cell = triclinic();
  const AtomSet atoms = atoms_in_cell(cell, 150, 13);
  const GridSpec grid = grid_over_cell(cell, 1.0, 12);
  PeriodicOptions o;
  const double beta = engine::resolve_ewald(cell, o).beta;
  const ReferenceParts parts = reference_parts(atoms, cell, grid, beta, 0.01, false);
  std::vector<double> ref(parts.reciprocal);
  for (double& v : ref) v *= scale();
  std::vector<float> ewald(grid.point_count(), 0.0f), pme(grid.point_count(), 0.0f);
  engine::EwaldReciprocal e(cell, engine::resolve_ewald(cell, o), scale());
  e.set_atoms(atoms);
  e.add_to(grid, Slab{0, grid.nz()}, ewald.data());
  engine::PmeReciprocal p(cell, engine::resolve_pme(cell, o), scale());
  p.set_atoms(atoms);
  p.add_to(grid, Slab{0, grid.nz()}, pme.data());
  EXPECT_LT(relative_l2(ewald, ref), 1e-5);
  EXPECT_LT(relative_l2(pme, ref), 1e-5);  // measured 2.4e-6 (defaults: order 6, 1 Å)
  // Slabs: the same values computed plane by plane.
  std::vector<float> slabs(grid.point_count(), 0.0f);
  for (std::int64_t z = 0; z < grid.nz(); z += 5) {
    const Slab s{z, std::min(grid.nz(), z + 5)};
    p.add_to(grid, s, slabs.data() + grid.plane_size() * z);
  }
  EXPECT_EQ(slabs, pme);
}

// Every order 4..12, odd ones included (their B-spline modulus vanishes at the Nyquist frequency
// of an even mesh: 40 and 36 points here): the reciprocal part against the float64 sum.
TEST(Periodic, EveryPmeOrderMatchesTheReciprocalSum) {
  const UnitCell& cell = orthorhombic();
  const AtomSet atoms = atoms_in_cell(cell, 80, 17);
  const GridSpec grid = grid_over_cell(cell, 0.0, 10);
  PeriodicOptions o;
  o.mesh_spacing = 0.5;  // K = 40, 36, 45
  const double beta = engine::resolve_ewald(cell, o).beta;
  const ReferenceParts parts = reference_parts(atoms, cell, grid, beta, 0.01, false);
  std::vector<double> ref(parts.reciprocal);
  for (double& v : ref) v *= scale();
  for (int order = 4; order <= 12; ++order) {
    o.pme_order = order;
    const engine::PmeParameters p = engine::resolve_pme(cell, o);
    ASSERT_EQ(p.mesh[0] % 2, 0u);
    engine::PmeReciprocal pme(cell, p, scale(), false);
    pme.set_atoms(atoms);
    std::vector<float> got(grid.point_count(), 0.0f);
    pme.add_to(grid, Slab{0, grid.nz()}, got.data());
    // Measured 8.8e-6 at order 4, 3e-7 at 5, 2.5e-8 (float output) from 7 on.
    EXPECT_LT(relative_l2(got, ref), order == 4 ? 2e-5 : 1e-6) << "order " << order;
  }
}

// One object, frame after frame (a trajectory in a fixed cell): each set_atoms replaces the last.
TEST(Periodic, ReciprocalObjectsServeFrameAfterFrame) {
  const UnitCell& cell = triclinic();
  const GridSpec grid = grid_over_cell(cell, 0.0, 10);
  const AtomSet first = atoms_in_cell(cell, 60, 15), second = atoms_in_cell(cell, 90, 16, -1.0);
  const engine::PmeParameters pp = engine::resolve_pme(cell, {});
  const engine::EwaldParameters ep = engine::resolve_ewald(cell, {});
  engine::PmeReciprocal pme(cell, pp, scale());
  engine::EwaldReciprocal ewald(cell, ep, scale());
  pme.set_atoms(first);
  ewald.set_atoms(first);
  pme.set_atoms(second);
  ewald.set_atoms(second);
  std::vector<float> reused_pme(grid.point_count()), reused_ewald(grid.point_count());
  pme.add_to(grid, Slab{0, grid.nz()}, reused_pme.data());
  ewald.add_to(grid, Slab{0, grid.nz()}, reused_ewald.data());
  engine::PmeReciprocal fresh_pme(cell, pp, scale());
  engine::EwaldReciprocal fresh_ewald(cell, ep, scale());
  fresh_pme.set_atoms(second);
  fresh_ewald.set_atoms(second);
  std::vector<float> new_pme(grid.point_count()), new_ewald(grid.point_count());
  fresh_pme.add_to(grid, Slab{0, grid.nz()}, new_pme.data());
  fresh_ewald.add_to(grid, Slab{0, grid.nz()}, new_ewald.data());
  EXPECT_EQ(reused_pme, new_pme);
  EXPECT_EQ(reused_ewald, new_ewald);
}

// A backend that keeps set-up (keep_setup, as batch's frame workers) keeps the reciprocal part's
// between runs (MethodCache): a second frame in the same cell reuses it, and a frame in another
// cell or with another order makes its own. Every run must equal the same run on a fresh backend,
// bit for bit; a reused plan of the wrong cell, order or split would not (on the GPU: to float
// rounding). Both backends (the GPU's skips without a device).
TEST(Periodic, BackendsReuseSetUpOnlyForTheSameCellAndParameters) {
  const UnitCell& cell = triclinic();
  const UnitCell stretched = make_cell({cell.lengths[0] * 0.996, cell.lengths[1], cell.lengths[2]}, cell.angles);
  const AtomSet first = atoms_in_cell(cell, 60, 21), second = atoms_in_cell(cell, 90, 22, -1.0);
  const GridSpec grid = grid_over_cell(cell, 1.0, 11);
  struct Run {
    const AtomSet* atoms;
    const UnitCell* cell;
    engine::Method method;
    int order;
    double smooth;
  };
  const std::vector<Run> runs{
      {&first, &cell, engine::Method::pme, 6, 0},        {&second, &cell, engine::Method::pme, 6, 0},
      {&second, &stretched, engine::Method::pme, 6, 0},  {&second, &cell, engine::Method::pme, 6, 0},
      {&first, &cell, engine::Method::pme, 8, 0},        {&first, &cell, engine::Method::pme, 8, 0.25},
      {&first, &cell, engine::Method::ewald, 6, 0},      {&second, &cell, engine::Method::ewald, 6, 0},
      {&second, &stretched, engine::Method::ewald, 6, 0}};
  for (const std::string device : {"cpu", "gpu"}) {
    if (device == "gpu" && !have_gpu()) {
      std::cout << "no CUDA device present: the GPU backend's runs skipped\n";
      continue;
    }
    const auto kept = engine::make_backend(device);
    kept->keep_setup = true;
    for (std::size_t n = 0; n < runs.size(); ++n) {
      engine::PotentialRequest r;
      r.atoms = runs[n].atoms;
      r.grid = grid;
      r.physics = test_physics();
      r.cell = *runs[n].cell;
      r.method = runs[n].method;
      r.periodic.pme_order = runs[n].order;
      r.periodic.smooth_beta = runs[n].smooth;
      const std::vector<float> reused = engine::compute_grid(*kept, r);
      const std::vector<float> fresh = engine::compute_grid(*engine::make_backend(device), r);
      if (device == "cpu")
        EXPECT_EQ(reused, fresh) << "run " << n;
      else  // the GPU's spreading may add in another order: float rounding apart
        EXPECT_LT(relative_l2(reused, std::vector<double>(fresh.begin(), fresh.end())), 1e-7) << "gpu, run " << n;
    }
  }
}

// A mesh too thin for two slabs of order − 1 planes (9 planes, order 8) spreads on one thread;
// the result is the same reciprocal part.
TEST(Periodic, SmallMeshSpreadsSerially) {
  const UnitCell cell = make_cell({9, 9.5, 9}, {90, 80, 90});
  const AtomSet atoms = atoms_in_cell(cell, 30, 14, 1.0);
  const GridSpec grid = grid_over_cell(cell, 0.5, 8);
  PeriodicOptions o;
  o.real_cutoff = 8;
  o.pme_order = 8;
  const engine::PmeParameters p = engine::resolve_pme(cell, o);
  ASSERT_LT(p.mesh[2] / std::size_t(p.order - 1), 2u);
  const ReferenceParts parts = reference_parts(atoms, cell, grid, p.beta, 0.01, false);
  std::vector<double> ref(parts.reciprocal);
  for (double& v : ref) v *= scale();
  std::vector<float> pme(grid.point_count(), 0.0f);
  engine::PmeReciprocal reciprocal(cell, p, scale(), false);
  reciprocal.set_atoms(atoms);
  reciprocal.add_to(grid, Slab{0, grid.nz()}, pme.data());
  EXPECT_LT(relative_l2(pme, ref), 1e-4);
}

// The reciprocal part is the same bit for bit whatever the number of threads (batch workers on the
// CPU share the cores, and --average's mean must not depend on how): PME's in double and the
// smooth map's in float, on an orthorhombic and a triclinic cell whose meshes hold several slabs.
TEST(Periodic, ReciprocalPartIsTheSameForAnyThreadCount) {
  for (const UnitCell* cell : {&orthorhombic(), &triclinic()}) {
    const AtomSet atoms = atoms_in_cell(*cell, 300, 21, 0.5);
    const GridSpec grid = grid_over_cell(*cell, 1.3, 17);
    for (const double smooth : {0.0, 0.25}) {
      PeriodicOptions o;
      o.smooth_beta = smooth;
      o.mesh_spacing = 0.6;
      const engine::PmeParameters p = engine::resolve_pme(*cell, o);
      ASSERT_GE(p.mesh[2] / std::size_t(p.order - 1), 6u);  // slabs for three threads, twice over
      std::vector<float> one_thread;
      for (const int threads : {1, 2, 3}) {
        set_openmp_threads(threads);
        engine::PmeReciprocal reciprocal(*cell, p, scale(), smooth == 0);
        reciprocal.set_atoms(atoms);
        std::vector<float> map(grid.point_count(), 0.0f);
        reciprocal.add_to(grid, Slab{0, grid.nz()}, map.data());
        if (threads == 1) one_thread = map;
        else EXPECT_EQ(map, one_thread) << threads << " threads, smooth " << smooth << ", " << cell->describe();
      }
      set_openmp_threads(0);
    }
  }
}

TEST(Periodic, RefusesMeshesAndSumsBeyondTheirLimits) {
  engine::PmeParameters p;
  p.beta = 0.3;
  p.order = 6;
  p.mesh = {4096, 4096, 4096};
  EXPECT_THROW(engine::PmeReciprocal(triclinic(), p, 1.0), Error);
  p.mesh = {32, 32, 5};
  EXPECT_THROW(engine::PmeReciprocal(triclinic(), p, 1.0), Error);  // fewer points than the order
  p.mesh = {32, 32, 32};
  p.order = 3;
  EXPECT_THROW(engine::PmeReciprocal(triclinic(), p, 1.0), Error);
  PeriodicOptions o;
  o.beta = 3.0;  // a huge k sphere
  const UnitCell big = make_cell({500, 500, 500});
  EXPECT_THROW(engine::EwaldReciprocal(big, engine::resolve_ewald(big, o), 1.0), Error);
}

}  // namespace
}  // namespace dcsgrid::test
