// The CPU cutoff engine against a brute-force float64 cutoff sum over every atom.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/cutoff_form.hpp"
#include "helpers.hpp"

using namespace dcsgrid;
using namespace dcsgrid::engine;

namespace {

Physics physics_for(PairForm form) {
  Physics p;
  if (form == PairForm::distance_dependent) p.distance_dependent = true;
  if (form == PairForm::debye_huckel) {
    p.dielectric = 78.54;
    p.ionic_strength = 0.1;
  }
  return p;
}

CutoffOptions cutoff(double radius, CutoffForm form) {
  CutoffOptions o;
  o.radius = radius;
  o.form = form;
  o.switch_start = 0.7 * radius;
  return o;
}

// Float64 cutoff sum of planes [z_begin, z_end) over all atoms, and for each point whether a
// pair lies within 1e-5 Å of rc: there the truncated form jumps by q·g(rc), and float and double
// distances may fall on either side, so such points are left out of a truncated comparison.
struct Reference {
  std::vector<double> value;
  std::vector<char> on_edge;
};
Reference reference_cutoff(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel,
                           const CutoffOptions& o, std::int64_t z_begin, std::int64_t z_end) {
  Reference ref;
  ref.value.assign(grid.plane_size() * (z_end - z_begin), 0.0);
  ref.on_edge.assign(ref.value.size(), 0);
#pragma omp parallel for collapse(2)
  for (std::int64_t k = z_begin; k < z_end; ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i) {
        const std::size_t n = ((k - z_begin) * grid.ny() + j) * grid.nx() + i;
        const auto p = grid.position(i, j, k);
        double sum = 0;
        for (std::size_t a = 0; a < atoms.size(); ++a) {
          const double dx = p[0] - atoms.x[a], dy = p[1] - atoms.y[a], dz = p[2] - atoms.z[a];
          const double r2 = dx * dx + dy * dy + dz * dz;
          if (std::abs(std::sqrt(r2) - o.radius) < 1e-5) ref.on_edge[n] = 1;
          const double r2c = std::max(r2, kernel.min_r2_d);
          sum += atoms.q[a] * pair_term_double(kernel, r2c) * cutoff_factor_double(o.form, r2c, o);
        }
        ref.value[n] = kernel.scale_d * sum;
      }
  return ref;
}

std::vector<float> run_cutoff(const AtomSet& atoms, const GridSpec& grid, const Physics& physics,
                              const CutoffOptions& o, Slab slab) {
  std::vector<float> out(grid.plane_size() * slab.planes(), NAN);
  cutoff_sum_cpu(atoms, grid, make_pair_kernel(physics), o, slab, out.data());
  return out;
}

// Relative L2 over the points a truncated cutoff leaves well defined (all points for the smooth
// forms); fails the test when more than 1% of the points had to be left out.
double compare(const std::vector<float>& got, const Reference& ref, CutoffForm form) {
  std::vector<float> a;
  std::vector<double> b;
  for (std::size_t n = 0; n < got.size(); ++n)
    if (form != CutoffForm::truncated || !ref.on_edge[n]) {
      a.push_back(got[n]);
      b.push_back(ref.value[n]);
    }
  EXPECT_GT(a.size(), got.size() * 99 / 100) << "too many points with a pair at rc";
  return test::relative_l2(a, b);
}

double check(const AtomSet& atoms, const GridSpec& grid, const Physics& physics,
             const CutoffOptions& o, Slab slab) {
  const Reference ref =
      reference_cutoff(atoms, grid, make_pair_kernel(physics), o, slab.z_begin, slab.z_end);
  return compare(run_cutoff(atoms, grid, physics, o, slab), ref, o.form);
}

const CutoffForm kForms[] = {CutoffForm::truncated, CutoffForm::shifted, CutoffForm::switched};
const PairForm kPairs[] = {PairForm::coulomb, PairForm::distance_dependent, PairForm::debye_huckel};

}  // namespace

TEST(CpuCutoff, EveryFormAndPairFormMatchesFloat64) {
  // Atoms overhang the grid on every side, some farther than rc from it.
  const AtomSet atoms = test::random_atoms(1500, Box{{-12, -9, -10}, {26, 22, 21}}, 21);
  const GridSpec grid = grid_from_origin({0.3, -0.2, 0.1}, {23, 17, 13}, 0.8);
  for (PairForm pair : kPairs)
    for (CutoffForm form : kForms) {
      const CutoffOptions o = cutoff(6.0, form);
      EXPECT_LT(check(atoms, grid, physics_for(pair), o, Slab{0, grid.nz()}), 1e-6)
          << describe(physics_for(pair)) << ", " << cutoff_form_name(form);
    }
}

TEST(CpuCutoff, WaterBoxWithin1e6) {
  const AtomSet atoms = water_box_atoms(12000, 4);
  const Box box = bounding_box(atoms);
  const GridSpec grid = grid_centered(box.center(), {20, 10, 5}, 0.5);
  for (CutoffForm form : kForms) {
    const double err = check(atoms, grid, physics_for(PairForm::coulomb), cutoff(10.0, form),
                             Slab{0, grid.nz()});
    EXPECT_LT(err, 1e-6) << cutoff_form_name(form);
    std::printf("water box, %s cutoff 10 Å: relative L2 %.3g\n", cutoff_form_name(form).c_str(), err);
  }
}

TEST(CpuCutoff, OnlyAtomsOutsideTheGrid) {
  // A shell of atoms around a small grid, none inside it; those beyond rc must not count.
  AtomSet atoms = test::random_atoms(400, Box{{-10, -10, -10}, {-3, 20, 20}}, 3);
  const AtomSet far = test::random_atoms(200, Box{{30, 30, 30}, {40, 40, 40}}, 4);
  for (std::size_t a = 0; a < far.size(); ++a)
    atoms.push_back(far.x[a], far.y[a], far.z[a], far.q[a]);
  const GridSpec grid = grid_from_origin({0, 0, 0}, {11, 9, 10}, 1.0);
  for (CutoffForm form : kForms)
    EXPECT_LT(check(atoms, grid, Physics{}, cutoff(7.5, form), Slab{0, grid.nz()}), 1e-6)
        << cutoff_form_name(form);
  // Only the far atoms: every point is exactly zero.
  const auto zero = run_cutoff(far, grid, Physics{}, cutoff(7.5, CutoffForm::truncated),
                               Slab{0, grid.nz()});
  for (float v : zero) ASSERT_EQ(v, 0.0f);
}

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
    const Reference ref =
        reference_cutoff(atoms, grid, make_pair_kernel(Physics{}), o, 0, grid.nz());
    const auto got = run_cutoff(atoms, grid, Physics{}, o, Slab{0, grid.nz()});
    EXPECT_LT(test::relative_l2(got, ref.value), 1e-6) << cutoff_form_name(form);
  }
}

TEST(CpuCutoff, CutoffLargerThanTheBox) {
  const AtomSet atoms = test::random_atoms(300, Box{{0, 0, 0}, {8, 8, 8}}, 8);
  const GridSpec grid = grid_from_origin({-1, -1, -1}, {11, 10, 9}, 1.0);
  for (CutoffForm form : kForms)
    EXPECT_LT(check(atoms, grid, physics_for(PairForm::debye_huckel), cutoff(40.0, form),
                    Slab{0, grid.nz()}),
              1e-6)
        << cutoff_form_name(form);
}

TEST(CpuCutoff, LargeTruncatedCutoffEqualsDirect) {
  const AtomSet atoms = test::random_atoms(800, Box{{0, 0, 0}, {15, 12, 10}}, 9);
  const GridSpec grid = grid_from_origin({-3, -3, -3}, {21, 18, 16}, 1.0);
  for (PairForm pair : kPairs) {
    const Physics physics = physics_for(pair);
    const auto got =
        run_cutoff(atoms, grid, physics, cutoff(1e4, CutoffForm::truncated), Slab{0, grid.nz()});
    std::vector<float> direct(grid.point_count());
    direct_sum_cpu(atoms, grid, make_pair_kernel(physics), Slab{0, grid.nz()}, direct.data());
    EXPECT_LT(test::relative_l2(got, direct), 1e-6) << describe(physics);
    EXPECT_LT(test::relative_l2(got, test::reference_direct(atoms, grid, make_pair_kernel(physics))),
              1e-6);
  }
}

TEST(CpuCutoff, SlabAndAccumulateIntoExistingValues) {
  const AtomSet atoms = test::random_atoms(600, Box{{0, 0, 0}, {12, 12, 12}}, 10);
  const GridSpec grid = grid_from_origin({-2, -2, -2}, {17, 16, 15}, 1.0);
  const CutoffOptions o = cutoff(5.0, CutoffForm::shifted);
  const PairKernel kernel = make_pair_kernel(Physics{});
  EXPECT_LT(check(atoms, grid, Physics{}, o, Slab{4, 9}), 1e-6);

  const Reference ref = reference_cutoff(atoms, grid, kernel, o, 4, 9);
  std::vector<float> out(ref.value.size());
  for (std::size_t n = 0; n < out.size(); ++n) out[n] = float(n % 13) - 6.0f;
  cutoff_accumulate_cpu(atoms, grid, kernel, o, Slab{4, 9}, out.data());
  std::vector<double> expected(out.size());
  for (std::size_t n = 0; n < out.size(); ++n) expected[n] = ref.value[n] + double(n % 13) - 6.0;
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
  const Reference ref = reference_cutoff(atoms, grid, make_pair_kernel(Physics{}), o, 0, grid.nz());
  for (std::size_t n = 0; n < out.size(); ++n)
    if (ref.value[n] == 0) ASSERT_EQ(out[n], 1.5f) << "point " << n << " beyond every atom's reach";
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
