// What is particular to the CPU cutoff engine: atoms on its column borders, accumulating into
// existing values, the GPU engine's overflow cases (few scattered atoms, parts on their own
// grids), slabs computed alone, its argument checks. Accuracy of every form against float64 and
// closed forms, for every backend, is in test_engine_conformance.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/cutoff_form.hpp"
#include "engine/cpu_simd.hpp"
#include "helpers.hpp"

using namespace dcsgrid;
using namespace dcsgrid::engine;

namespace {

CutoffOptions cutoff(double radius, CutoffForm form) {
  CutoffOptions o;
  o.radius = radius;
  o.form = form;
  o.switch_start = 0.7 * radius;
  o.ewald_beta = 3.0 / radius;
  return o;
}

std::vector<float> run_cutoff(const AtomSet& atoms, const GridSpec& grid, const Physics& physics,
                              const CutoffOptions& o, Slab slab) {
  std::vector<float> out(grid.plane_size() * slab.planes(), NAN);
  cutoff_sum_cpu(atoms, grid, make_pair_kernel(physics), o, slab, out.data());
  return out;
}

// Relative L2 against the float64 reference over the points a truncated cutoff leaves well
// defined (test::points_near_cutoff; all points for the continuous forms).
double check(const AtomSet& atoms, const GridSpec& grid, const Physics& physics,
             const CutoffOptions& o, Slab slab) {
  const std::vector<double> ref = test::reference_cutoff(atoms, grid, make_pair_kernel(physics), o,
                                                         slab.z_begin, slab.z_end);
  const std::vector<float> got = run_cutoff(atoms, grid, physics, o, slab);
  if (o.form != CutoffForm::truncated) return test::relative_l2(got, ref);
  std::vector<char> near = test::points_near_cutoff(atoms, grid, o.radius, 1e-5);
  near.erase(near.begin() + grid.plane_size() * slab.z_end, near.end());
  near.erase(near.begin(), near.begin() + grid.plane_size() * slab.z_begin);
  EXPECT_LT(std::count(near.begin(), near.end(), 1), std::ptrdiff_t(near.size() / 100 + 1));
  return test::relative_l2(test::kept(got, near), test::kept(ref, near));
}

const CutoffForm kForms[] = {CutoffForm::truncated, CutoffForm::shifted, CutoffForm::switched,
                             CutoffForm::msm_short, CutoffForm::ewald_real};

}  // namespace

TEST(CpuCutoff, AtomsOnCellBordersAndGridPoints) {
  // rc = 4: columns are 2 Å wide and start at the lowest atom, here y = z = 0 in the grid's
  // frame. Atoms on a 1 Å lattice sit on every column border and on grid points, and many pairs
  // are exactly rc apart (distances of half-Å lattices are exact in float).
  AtomSet atoms;
  for (int k = 0; k <= 6; ++k)
    for (int j = 0; j <= 6; ++j)
      for (int i = -2; i <= 8; i += 2) atoms.push_back(i, j, k, ((i + 3 * j + 5 * k) % 7 - 3) / 3.0);
  const GridSpec grid = grid_from_origin({0, 0, 0}, {13, 14, 11}, 0.5);
  for (CutoffForm form : kForms) {
    const CutoffOptions o = cutoff(4.0, form);
    const std::vector<double> ref =
        test::reference_cutoff(atoms, grid, make_pair_kernel(Physics{}), o);
    const auto got = run_cutoff(atoms, grid, Physics{}, o, Slab{0, grid.nz()});
    EXPECT_LT(test::relative_l2(got, ref), 1e-6) << cutoff_form_name(form);
  }
}

TEST(CpuCutoff, SlabAndAccumulateIntoExistingValues) {
  const AtomSet atoms = test::random_atoms(600, Box{{0, 0, 0}, {12, 12, 12}}, 10);
  const GridSpec grid = grid_from_origin({-2, -2, -2}, {17, 16, 15}, 1.0);
  const CutoffOptions o = cutoff(5.0, CutoffForm::shifted);
  const PairKernel kernel = make_pair_kernel(Physics{});
  EXPECT_LT(check(atoms, grid, Physics{}, o, Slab{4, 9}), 1e-6);

  const std::vector<double> ref = test::reference_cutoff(atoms, grid, kernel, o, 4, 9);
  std::vector<float> out(ref.size());
  for (std::size_t n = 0; n < out.size(); ++n) out[n] = float(n % 13) - 6.0f;
  cutoff_accumulate_cpu(atoms, grid, kernel, o, Slab{4, 9}, out.data());
  std::vector<double> expected(out.size());
  for (std::size_t n = 0; n < out.size(); ++n) expected[n] = ref[n] + double(n % 13) - 6.0;
  EXPECT_LT(test::relative_l2(out, expected), 1e-6);
}

TEST(CpuCutoff, FewScatteredAtomsOnALargeGrid) {
  // The GPU engine's overflow case: a handful of atoms far apart, added into a big slab.
  const AtomSet atoms = test::random_atoms(6, Box{{0, 0, 0}, {80, 70, 60}}, 12);
  const GridSpec grid = grid_from_origin({0, 0, 0}, {81, 71, 31}, 1.0);
  const CutoffOptions o = cutoff(8.0, CutoffForm::switched);
  EXPECT_LT(check(atoms, grid, Physics{}, o, Slab{0, grid.nz()}), 1e-6);
  std::vector<float> out(grid.point_count(), 1.5f);
  cutoff_accumulate_cpu(atoms, grid, make_pair_kernel(Physics{}), o, Slab{0, grid.nz()}, out.data());
  const std::vector<double> ref = test::reference_cutoff(atoms, grid, make_pair_kernel(Physics{}), o);
  for (std::size_t n = 0; n < out.size(); ++n)
    if (ref[n] == 0) ASSERT_EQ(out[n], 1.5f) << "point " << n << " beyond every atom's reach";
}

TEST(CpuCutoff, BackendRunsTheCutoffMethod) {
  const AtomSet atoms = test::random_atoms(500, Box{{0, 0, 0}, {10, 10, 10}}, 13);
  PotentialRequest request;
  request.atoms = &atoms;
  request.grid = grid_from_origin({-1, -1, -1}, {13, 12, 11}, 1.0);
  request.method = Method::cutoff;
  request.cutoff = cutoff(6.0, CutoffForm::switched);
  auto backend = make_cpu_backend();
  backend->slab_bytes = 3 * request.grid.plane_size() * sizeof(float);
  const auto whole = run_cutoff(atoms, request.grid, request.physics, request.cutoff,
                                Slab{0, request.grid.nz()});
  EXPECT_EQ(compute_grid(*backend, request), whole);
}

TEST(CpuCutoff, RejectsBadOptions) {
  const AtomSet atoms = test::random_atoms(10, Box{{0, 0, 0}, {1, 1, 1}}, 1);
  const GridSpec grid = grid_from_origin({0, 0, 0}, {4, 4, 4}, 1.0);
  std::vector<float> out(grid.point_count());
  const PairKernel kernel = make_pair_kernel(Physics{});
  EXPECT_THROW(cutoff_sum_cpu(atoms, grid, kernel, cutoff(0.0, CutoffForm::shifted), Slab{0, 4},
                              out.data()),
               Error);
  CutoffOptions bad = cutoff(5.0, CutoffForm::switched);
  bad.switch_start = 6.0;
  EXPECT_THROW(cutoff_sum_cpu(atoms, grid, kernel, bad, Slab{0, 4}, out.data()), Error);
  EXPECT_THROW(cutoff_sum_cpu(atoms, grid, kernel, cutoff(5.0, CutoffForm::shifted), Slab{0, 5},
                              out.data()),
               Error);
  // msm_short: softening orders 1..6 and 1/r only, refused by the engine and by validate.
  CutoffOptions msm = cutoff(5.0, CutoffForm::msm_short);
  msm.softening_order = 7;
  EXPECT_THROW(cutoff_sum_cpu(atoms, grid, kernel, msm, Slab{0, 4}, out.data()), Error);
  msm.softening_order = 6;
  Physics ddd;
  ddd.distance_dependent = true;
  EXPECT_THROW(cutoff_sum_cpu(atoms, grid, make_pair_kernel(ddd), msm, Slab{0, 4}, out.data()),
               Error);
  PotentialRequest request;
  request.atoms = &atoms;
  request.grid = grid;
  request.method = Method::cutoff;
  request.cutoff = msm;
  EXPECT_NO_THROW(validate(request));
  for (const bool screened : {false, true}) {
    request.physics = Physics{};
    (screened ? request.physics.ionic_strength : request.physics.dielectric) = screened ? 0.1 : 1.0;
    request.physics.distance_dependent = !screened;
    try {
      validate(request);
      ADD_FAILURE() << "msm-short accepted a distance-dependent or screened dielectric";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("constant dielectric"), std::string::npos) << e.what();
    }
  }
  request.physics = Physics{};
  request.cutoff.softening_order = 0;
  EXPECT_THROW(validate(request), Error);
}

// The 8-lane erfc of the ewald_real form against the C library's double erfc on a dense sweep
// of [0, 9] (erfc ≥ 4e-37, a normal float): relative error at most 4e-7 (a few float roundings),
// 1e-7 in the mean square; beyond, no more than float's smallest normal.
TEST(CpuCutoff, SimdErfcMatchesDoubleErfc) {
  double worst = 0, worst_x = 0, sum2 = 0;
  int count = 0;
  for (int i = 0; i <= 900000; i += simd::kLanes) {
    simd::v8f x;
    for (int l = 0; l < simd::kLanes; ++l) x[l] = float((i + l) * 1e-5);
    const simd::v8f got = simd::erfc_nonnegative(x);
    for (int l = 0; l < simd::kLanes; ++l) {
      const double exact = std::erfc(double(x[l]));
      const double rel = std::abs(got[l] - exact) / exact;
      sum2 += rel * rel;
      ++count;
      if (rel > worst) worst = rel, worst_x = x[l];
    }
  }
  EXPECT_LT(worst, 4e-7) << "at x = " << worst_x;
  EXPECT_LT(std::sqrt(sum2 / count), 1e-7);
  const simd::v8f far = simd::erfc_nonnegative(simd::v8f{9.5f, 10, 12, 20, 50, 1e3f, 1e10f, 3e38f});
  for (int l = 0; l < simd::kLanes; ++l) {
    EXPECT_GE(far[l], 0.0f);
    EXPECT_LE(far[l], 1.2e-38f) << l;
  }
  EXPECT_NEAR(simd::erfc_nonnegative(simd::splat(0.0f))[0], 1.0f, 2e-7);
}

// ewald_real: a positive, finite β and a constant dielectric, else an Error.
TEST(CpuCutoff, EwaldRealNeedsBetaAndConstantDielectric) {
  const AtomSet atoms = test::random_atoms(10, Box{{0, 0, 0}, {1, 1, 1}}, 1);
  const GridSpec grid = grid_from_origin({0, 0, 0}, {4, 4, 4}, 1.0);
  std::vector<float> out(grid.point_count());
  CutoffOptions o = cutoff(5.0, CutoffForm::ewald_real);
  for (const double beta : {0.0, -0.3, double(NAN), double(INFINITY)}) {
    o.ewald_beta = beta;
    EXPECT_THROW(cutoff_sum_cpu(atoms, grid, make_pair_kernel(Physics{}), o, Slab{0, 4}, out.data()),
                 Error)
        << beta;
  }
  o.ewald_beta = 0.3;
  Physics ddd;
  ddd.distance_dependent = true;
  EXPECT_THROW(cutoff_sum_cpu(atoms, grid, make_pair_kernel(ddd), o, Slab{0, 4}, out.data()), Error);
  EXPECT_EQ(parse_cutoff_form("ewald-real"), CutoffForm::ewald_real);
  EXPECT_EQ(cutoff_form_name(CutoffForm::ewald_real), "ewald-real");
}

TEST(CpuCutoff, PartsAddTheirAtomsOnTheirOwnGrids) {
  // Many parts (one thread each) and a single part (all threads): each part's sub-grid gets its
  // own atoms' float64 cutoff sum added to what it held.
  const PairKernel kernel = make_pair_kernel(Physics{});
  const CutoffOptions o = cutoff(6.0, CutoffForm::switched);
  for (const std::size_t count : {std::size_t(40), std::size_t(1)}) {
    std::vector<AtomSet> atoms;
    std::vector<GridSpec> grids;
    std::vector<std::vector<float>> outs;
    for (std::size_t i = 0; i < count; ++i) {
      const double x0 = 3.0 * double(i);
      atoms.push_back(test::random_atoms(1 + i % 3, Box{{x0, 0, 0}, {x0 + 2, 2, 2}}, 90 + i));
      grids.push_back(grid_from_origin({x0 - 4, -3.5, -4.25}, {17 + std::int64_t(i % 4), 15, 13}, 0.5));
      outs.emplace_back(grids.back().point_count(), 1.0f);
    }
    std::vector<CutoffPart> parts;
    for (std::size_t i = 0; i < count; ++i) parts.push_back({&atoms[i], grids[i], outs[i].data()});
    cutoff_accumulate_parts_cpu(parts, kernel, o);
    for (std::size_t i = 0; i < count; ++i) {
      std::vector<double> expect = test::reference_cutoff(atoms[i], grids[i], kernel, o);
      for (double& v : expect) v += 1.0;
      EXPECT_LT(test::relative_l2(outs[i], expect), 1e-6) << "part " << i << " of " << count;
    }
  }
}
