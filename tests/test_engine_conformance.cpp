// One conformance suite for every backend × method, in the manner of OpenMM's platform tests: the
// same cases (a point charge and a dipole against closed forms, random atoms, a real structure, a
// neutral water box, every physics option, odd grid shapes and slabs) run for each row of kRows
// against the float64 references of tests/helpers (reference_direct, reference_cutoff). A new
// backend, method or option set is one more row. GPU rows skip without a device.
//
// Tolerances (relative L2 against float64, and per point relative to the unsmoothed term q·g(r)
// in the closed-form cases):
//   cpu direct 1e-6: the accuracy goal of direct summation (float32 terms summed in double, see
//     src/engine/cpu_direct.cpp; the hard neutral water box measures 6.3e-7 here);
//   cpu cutoff 1e-6: the same arithmetic over the atoms within rc;
//   gpu direct 2e-5: 1/r of some points comes from two FMA-pipe Newton steps with a centred error
//     within ±3e-6 (cuda_direct_math.hpp), which a single charge does not average out, and
//     exp(−κr) carries it times (1 + κr); the neutral water box, whose potential is a small
//     remainder of large terms, measured 1.19e-5 on an H100;
//   gpu cutoff 1e-5: float sums per brick without compensation;
//   msm 1e-3 (both backends, default options: order 6, h 1.5 Å, a 10 Å): the method's own
//     accuracy target against the exact potential (docs/msm.md measures 1e-4 to 4e-4), so the
//     reference is the direct float64 sum.
// msm_short's value 1/r − γ_k/rc is a small remainder of two terms of the size of 1/r (MSM adds
// γ_k/rc back on its grids), so its relative L2 is taken against the norm of the 1/r terms
// within rc (the truncated sum), and its closed-form points against |q·g(r)| like every form.
// The truncated form jumps by q·g(rc) at rc, where float32 and float64 distances may fall on either
// side: points with a pair within 2e-5 Å of rc (a few float32 roundings of distances up to ~40 Å)
// are left out of its comparisons (test::points_near_cutoff), and the cases check that they are
// under 1% of the grid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"

namespace dcsgrid::engine {
namespace {

// ---- the rows: (backend, method, options) ----

struct Row {
  std::string backend;  // for make_backend: "cpu" or "gpu"
  Method method = Method::direct;
  CutoffForm form = CutoffForm::shifted;  // cutoff rows
  int softening_order = 2;                // msm_short rows
  double tolerance = 1e-6;                // see the header

  std::string name() const {
    std::string n = backend + "_" + method_name(method);
    if (method == Method::cutoff) n += "_" + cutoff_form_name(form);
    if (form == CutoffForm::msm_short && method == Method::cutoff)
      n += "_order" + std::to_string(softening_order);
    for (char& c : n)
      if (c == '-') c = '_';
    return n;
  }
};

// What GoogleTest prints for a row (instead of its bytes).
void PrintTo(const Row& row, std::ostream* os) { *os << row.name(); }

const Row kRows[] = {
    {"cpu", Method::direct, {}, 2, 1e-6},
    {"cpu", Method::cutoff, CutoffForm::truncated, 2, 1e-6},
    {"cpu", Method::cutoff, CutoffForm::shifted, 2, 1e-6},
    {"cpu", Method::cutoff, CutoffForm::switched, 2, 1e-6},
    {"cpu", Method::cutoff, CutoffForm::msm_short, 2, 1e-6},
    {"cpu", Method::cutoff, CutoffForm::msm_short, 5, 1e-6},
    {"cpu", Method::cutoff, CutoffForm::ewald_real, 2, 1e-6},
    {"gpu", Method::direct, {}, 2, 2e-5},
    {"gpu", Method::cutoff, CutoffForm::truncated, 2, 1e-5},
    {"gpu", Method::cutoff, CutoffForm::shifted, 2, 1e-5},
    {"gpu", Method::cutoff, CutoffForm::switched, 2, 1e-5},
    {"gpu", Method::cutoff, CutoffForm::msm_short, 2, 1e-5},
    {"gpu", Method::cutoff, CutoffForm::msm_short, 5, 1e-5},
    {"gpu", Method::cutoff, CutoffForm::ewald_real, 2, 1e-5},
    {"cpu", Method::msm, {}, 2, 1e-3},
    {"gpu", Method::msm, {}, 2, 1e-3},
};

// ---- physics options ----

Physics coulomb(double dielectric = 1.0, Unit unit = Unit::kT_per_e) {
  Physics p;
  p.dielectric = dielectric;
  p.unit = unit;
  return p;
}
Physics ddd() {
  Physics p;
  p.distance_dependent = true;
  p.unit = Unit::kJ_per_mol_e;
  p.min_distance = 0.8;
  return p;
}
Physics debye_huckel() {
  Physics p;
  p.dielectric = 78.54;
  p.ionic_strength = 0.15;
  return p;
}
// Every pair form, every unit, a dielectric and a non-default clamp.
std::vector<Physics> every_physics_option() {
  Physics clamp = coulomb(2.0, Unit::volt);
  clamp.min_distance = 0.6;
  return {coulomb(), coulomb(4.0, Unit::kcal_per_mol_e), clamp, ddd(), debye_huckel()};
}

// ---- closed forms, written out from the definitions (core/physics.hpp, engine.hpp) ----

// Output unit per kcal/(mol·e): kT/e at T, kcal, kJ (4.184 kJ/kcal), V (4184 J/mol per Faraday).
double unit_per_kcal(const Physics& p) {
  switch (p.unit) {
    case Unit::kT_per_e: return 1.0 / (kGasConstant * p.temperature);
    case Unit::kcal_per_mol_e: return 1.0;
    case Unit::kJ_per_mol_e: return 4.184;
    case Unit::volt: return 4184.0 / 96485.33212;
  }
  return NAN;
}

// γ_k(ρ) for ρ < 1: the binomial series of (1 + t)^(−1/2) in t = ρ² − 1 to degree k, its
// coefficients by their recurrence c_n = c_(n−1)·(1/2 − n)/n.
double softening_series(int k, double rho) {
  const double t = rho * rho - 1.0;
  double c = 1.0, power = 1.0, sum = 1.0;
  for (int n = 1; n <= k; ++n) {
    c *= (0.5 - n) / n;
    power *= t;
    sum += c * power;
  }
  return sum;
}

// The potential of charge q at distance r from it, under the row's method.
double closed_form(const Row& row, const Physics& p, const CutoffOptions& cut, double q,
                   double r_true) {
  const double r = std::max(r_true, p.min_distance);
  const double kappa = debye_kappa(p.ionic_strength, p.dielectric, p.temperature);
  const double g = p.distance_dependent ? 1.0 / (4 * r * r) : std::exp(-kappa * r) / (p.dielectric * r);
  double v = g;
  if (row.method == Method::cutoff) {
    const double rc = cut.radius;
    if (r_true >= rc) return 0.0;
    if (row.form == CutoffForm::shifted) v = g * std::pow(1 - r * r / (rc * rc), 2);
    if (row.form == CutoffForm::switched) {
      const double t = std::max(0.0, (r - cut.switch_start) / (rc - cut.switch_start));
      v = g * (1 - 3 * t * t + 2 * t * t * t);
    }
    if (row.form == CutoffForm::msm_short)
      v = (1 / r - softening_series(row.softening_order, r_true / rc) / rc) / p.dielectric;
    if (row.form == CutoffForm::ewald_real) v = g * std::erfc(cut.ewald_beta * r);
  }
  return q * kCoulomb * unit_per_kcal(p) * v;
}

// The same term without the cutoff's smoothing: the scale of a point's value and its error.
double unsmoothed(const Physics& p, double q, double r_true) {
  Row direct;
  return closed_form(direct, p, {}, q, r_true);
}

double l2_norm(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x * x;
  return std::sqrt(sum);
}

double distance(const std::array<double, 3>& p, const AtomSet& atoms, std::size_t a) {
  return std::hypot(p[0] - atoms.x[a], p[1] - atoms.y[a], p[2] - atoms.z[a]);
}

// ---- the fixture: one backend, one method ----

class Conformance : public ::testing::TestWithParam<Row> {
 protected:
  void SetUp() override {
    if (row().backend == "gpu" && !test::have_gpu())
      GTEST_SKIP() << "no CUDA device present: GPU rows skipped";
    backend_ = make_backend(row().backend);
  }
  const Row& row() const { return GetParam(); }

  // The cutoff options of this row at radius rc (switch start at 0.7 rc).
  CutoffOptions cutoff(double rc) const {
    CutoffOptions c;
    c.radius = rc;
    c.form = row().form;
    c.switch_start = 0.7 * rc;
    c.softening_order = row().softening_order;
    c.ewald_beta = 4.5 / rc;  // erfc(4.5) = 2e-10: no jump at rc above float rounding
    return c;
  }
  PotentialRequest request(const AtomSet& atoms, const GridSpec& grid, const Physics& physics,
                           double rc = 8.0) const {
    PotentialRequest r;
    r.atoms = &atoms;
    r.grid = grid;
    r.physics = physics;
    r.method = row().method;
    r.cutoff = cutoff(rc);
    return r;
  }
  // The splittings of msm_short (and so msm) and ewald_real hold for 1/r only.
  bool supports(const Physics& p) const {
    const bool splits = row().method == Method::msm ||
                        (row().method == Method::cutoff && (row().form == CutoffForm::msm_short ||
                                                            row().form == CutoffForm::ewald_real));
    return !(splits && (p.distance_dependent || p.ionic_strength > 0));
  }

  std::vector<float> compute(const PotentialRequest& r) { return compute_grid(*backend_, r); }
  std::vector<double> reference(const PotentialRequest& r) const {
    const PairKernel kernel = make_pair_kernel(r.physics);
    if (r.method != Method::cutoff) return test::reference_direct(*r.atoms, r.grid, kernel);
    return test::reference_cutoff(*r.atoms, r.grid, kernel, r.cutoff);
  }

  // Relative L2 of the backend's grid against float64 within the row's tolerance (points at a
  // truncation edge left out); an unsupported physics must be refused with an Error instead.
  void expect_matches_reference(const PotentialRequest& r, const std::string& what) {
    SCOPED_TRACE(what + ", " + describe(r.physics) + ", grid " + r.grid.describe());
    if (!supports(r.physics)) {
      EXPECT_THROW(compute(r), Error);
      return;
    }
    const std::vector<float> got = compute(r);
    const std::vector<double> ref = reference(r);
    std::vector<char> skip(got.size(), 0);
    if (r.method == Method::cutoff && r.cutoff.form == CutoffForm::truncated) {
      skip = test::points_near_cutoff(*r.atoms, r.grid, r.cutoff.radius, 2e-5);
      EXPECT_LE(std::count(skip.begin(), skip.end(), 1), std::ptrdiff_t(skip.size() / 100 + 1));
    }
    double err = test::relative_l2(test::kept(got, skip), test::kept(ref, skip));
    if (r.method == Method::cutoff && r.cutoff.form == CutoffForm::msm_short) {
      // 1/r − γ/a is a small remainder of two terms of the size of 1/r, and MSM adds γ/a back:
      // its error counts against the 1/r terms it splits (the truncated sum), not the remainder.
      CutoffOptions truncated = r.cutoff;
      truncated.form = CutoffForm::truncated;
      const std::vector<double> terms = test::reference_cutoff(
          *r.atoms, r.grid, make_pair_kernel(r.physics), truncated);
      err *= l2_norm(ref) / l2_norm(terms);
    }
    EXPECT_LT(err, row().tolerance);
  }

  // Every point against Σ closed_form over the atoms, within the row's tolerance of the largest
  // unsmoothed term at that point.
  void expect_closed_form(const AtomSet& atoms, const GridSpec& grid, const Physics& physics,
                          double rc, const std::vector<float>& got) {
    const CutoffOptions cut = cutoff(rc);
    for (std::size_t n = 0; n < grid.point_count(); ++n) {
      const auto ijk = grid.ijk(n);
      const auto p = grid.position(ijk[0], ijk[1], ijk[2]);
      double exact = 0, scale = 0;
      bool at_edge = false;
      for (std::size_t a = 0; a < atoms.size(); ++a) {
        const double r = distance(p, atoms, a);
        exact += closed_form(row(), physics, cut, atoms.q[a], r);
        scale = std::max(scale, std::abs(unsmoothed(physics, atoms.q[a], r)));
        at_edge |= row().form == CutoffForm::truncated && std::abs(r - rc) < 2e-5;
      }
      if (row().method == Method::cutoff && at_edge) continue;
      ASSERT_NEAR(got[n], exact, row().tolerance * scale)
          << describe(physics) << ", point " << ijk[0] << "," << ijk[1] << "," << ijk[2];
    }
  }

  std::unique_ptr<Backend> backend_;
};

// ---- the cases ----

// One charge exactly on a grid point (the clamp gives the value at min_distance there), under
// every physics option, against the closed form at every point.
TEST_P(Conformance, PointChargeIsAnalytic) {
  AtomSet atoms;
  atoms.push_back(0.5, 1.0, 0.5, -0.7);  // grid point (9, 8, 5): binary-exact origin and spacing
  const GridSpec grid = grid_from_origin({-4, -3, -2}, {37, 21, 13}, 0.5);
  for (const Physics& physics : every_physics_option()) {
    const PotentialRequest r = request(atoms, grid, physics, 7.5);
    if (!supports(physics)) {
      EXPECT_THROW(compute(r), Error) << describe(physics);
      continue;
    }
    const std::vector<float> got = compute(r);
    expect_closed_form(atoms, grid, physics, 7.5, got);
    ASSERT_TRUE(std::isfinite(got[grid.index(9, 8, 5)]));
  }
}

// ±q 1.2 Å apart: the two-charge closed form everywhere; for direct summation, also the dipole far
// field k·q·d·cosθ/R² (corrections of order (d/R)²); beyond rc + d/2 a cutoff method gives 0.
TEST_P(Conformance, DipoleMatchesTwoChargesAndFarField) {
  const double q = 0.5, d = 1.2;
  const std::array<double, 3> c{3.0, -2.0, 1.0};
  AtomSet atoms;
  atoms.push_back(c[0], c[1], c[2] + d / 2, q);
  atoms.push_back(c[0], c[1], c[2] - d / 2, -q);
  const GridSpec grid = grid_centered(c, {60, 60, 60}, 6.0);  // far-field points dominate
  const Physics physics = coulomb();
  const double rc = 20.0;
  const std::vector<float> got = compute(request(atoms, grid, physics, rc));
  expect_closed_form(atoms, grid, physics, rc, got);
  const double k = kCoulomb * unit_per_kcal(physics);
  int far_points = 0;
  for (std::size_t n = 0; n < grid.point_count(); ++n) {
    const auto ijk = grid.ijk(n);
    const auto p = grid.position(ijk[0], ijk[1], ijk[2]);
    const double R = std::hypot(p[0] - c[0], p[1] - c[1], p[2] - c[2]);
    if (row().method == Method::cutoff) {
      if (R > rc + d) ASSERT_EQ(got[n], 0.0f) << "R = " << R;
      continue;
    }
    if (R < 20 || row().method != Method::direct) continue;  // the far field: direct's exactness
    const double far = k * q * d * ((p[2] - c[2]) / R) / (R * R);
    EXPECT_NEAR(got[n], far, 2 * (d / R) * (d / R) * k * q * d / (R * R)) << "R = " << R;
    ++far_points;
  }
  if (row().method == Method::direct) EXPECT_GT(far_points, 500);
}

// Random charges overhanging the grid on every side (some beyond rc of it), far from the origin so
// that the backends' local frames matter; nx = 13 leaves a partial SIMD vector.
TEST_P(Conformance, RandomAtomsMatchFloat64) {
  const AtomSet atoms = test::random_atoms(2000, Box{{85, -65, 18}, {125, -27, 54}}, 7);
  const GridSpec grid = grid_from_origin({92.3, -57.1, 25.6}, {13, 11, 9}, 1.9);
  for (const Physics& physics : {coulomb(), ddd(), debye_huckel()})
    expect_matches_reference(request(atoms, grid, physics, 8.0), "random atoms");
}

// FKBP (data/1d7h-min.pqr, APBS example, 1663 atoms with charges) read through io, 2 Å grid.
TEST_P(Conformance, RealStructureMatchesFloat64) {
  const AtomSet atoms = io::read_structure(test::data_file("1d7h-min.pqr")).atoms;
  ASSERT_GT(atoms.size(), 1000u);
  const GridSpec grid = grid_around(bounding_box(atoms), 2.0, 6.0);
  for (const Physics& physics : {coulomb(), debye_huckel()})
    expect_matches_reference(request(atoms, grid, physics, 12.0), "1d7h");
}

// A neutral solvent: most of each point's sum cancels, the hard case for float32 terms.
TEST_P(Conformance, WaterBoxMatchesFloat64) {
  const AtomSet atoms = water_box_atoms(12000, 4);
  const GridSpec grid = grid_centered(bounding_box(atoms).center(), {16, 8, 4}, 0.5);
  expect_matches_reference(request(atoms, grid, coulomb(), 10.0), "water box");
}

// Every physics option on one input, atoms on grid points (the clamp) among them.
TEST_P(Conformance, EveryPhysicsOptionMatchesFloat64) {
  const GridSpec grid = grid_from_origin({-2, -3, -1}, {20, 17, 11}, 0.7);
  AtomSet atoms = test::random_atoms(600, Box{{-5, -6, -4}, {16, 12, 10}}, 8);
  for (std::int64_t k : {std::int64_t(0), std::int64_t(5), std::int64_t(10)}) {
    const auto p = grid.position(7, 4, k);
    atoms.push_back(p[0], p[1], p[2], 0.9);
  }
  for (const Physics& physics : every_physics_option())
    expect_matches_reference(request(atoms, grid, physics, 6.0), "physics option");
}

// Grids of one point, one point wide, prime sizes and a long row; the backends' tiles, vectors and
// bricks all end in padding somewhere.
TEST_P(Conformance, OddGridShapesMatchFloat64) {
  const AtomSet atoms = test::random_atoms(500, Box{{-3, -3, -3}, {12, 12, 12}}, 11);
  for (const std::array<std::int64_t, 3> dims :
       {std::array<std::int64_t, 3>{1, 1, 1}, {1, 5, 4}, {7, 1, 2}, {37, 11, 5}, {133, 3, 2}})
    expect_matches_reference(request(atoms, grid_from_origin({-1.3, 0.2, 3.1}, dims, 0.6), coulomb(), 6.0),
                             "odd shape");
}

// Slabs of 2 planes over 7 (the last slab short), and 3 planes over 23: the same values as the
// float64 reference, delivered in z order.
TEST_P(Conformance, SlabsThatDoNotDivideTheGridMatchFloat64) {
  const AtomSet atoms = test::random_atoms(700, Box{{0, 0, 0}, {12, 9, 15}}, 5);
  for (const std::int64_t planes : {std::int64_t(2), std::int64_t(3)}) {
    const GridSpec grid = grid_from_origin({-2, -2, -2}, {21, 14, planes == 2 ? 7 : 23}, 0.9);
    backend_->slab_bytes = std::size_t(planes) * grid.plane_size() * sizeof(float);
    const PotentialRequest r = request(atoms, grid, debye_huckel(), 6.0);
    if (!supports(r.physics)) {
      expect_matches_reference(r, "slabs");
      continue;
    }
    std::int64_t next = 0;
    backend_->run(r, [&](Slab s, const float*) {
      EXPECT_EQ(s.z_begin, next);
      EXPECT_LE(s.planes(), planes);
      next = s.z_end;
    });
    EXPECT_EQ(next, grid.nz());
    expect_matches_reference(r, "slabs of " + std::to_string(planes) + " planes");
  }
}

// Atoms only outside the grid: a cutoff method counts those within rc and gives exactly 0 where
// none is; a cutoff larger than the whole box is the direct sum of its form.
TEST_P(Conformance, AtomsOutsideTheGridAndLargeCutoffs) {
  const GridSpec grid = grid_from_origin({0, 0, 0}, {11, 9, 10}, 1.0);
  const AtomSet near = test::random_atoms(400, Box{{-10, -10, -10}, {-3, 20, 20}}, 3);
  const AtomSet far = test::random_atoms(200, Box{{30, 30, 30}, {40, 40, 40}}, 4);
  AtomSet both = near;
  for (std::size_t a = 0; a < far.size(); ++a) both.push_back(far.x[a], far.y[a], far.z[a], far.q[a]);
  expect_matches_reference(request(both, grid, coulomb(), 7.5), "atoms outside the grid");
  expect_matches_reference(request(both, grid, debye_huckel(), 80.0), "cutoff beyond the box");
  if (row().method == Method::cutoff)
    for (float v : compute(request(far, grid, coulomb(), 7.5))) ASSERT_EQ(v, 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Rows, Conformance, ::testing::ValuesIn(kRows),
                         [](const ::testing::TestParamInfo<Row>& info) { return info.param.name(); });

}  // namespace
}  // namespace dcsgrid::engine
