// What is particular to the CPU direct-summation engine: a grid computed slab by slab gives the
// same floats as in one piece, the sum at a list of points is the grid's, and the engine's own
// argument checks. Accuracy against float64 and
// closed forms, for every backend and method, is in test_engine_conformance.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "helpers.hpp"

using namespace dcsgrid;
using namespace dcsgrid::engine;

namespace {

std::vector<float> run_direct(const AtomSet& atoms, const GridSpec& grid, const Physics& physics,
                              Slab slab) {
  std::vector<float> out(grid.plane_size() * slab.planes(), NAN);
  direct_sum_cpu(atoms, grid, make_pair_kernel(physics), slab, out.data());
  return out;
}

}  // namespace

TEST(CpuDirect, BackendRunInSlabsEqualsOneSlabExactly) {
  const AtomSet atoms = test::random_atoms(700, Box{{0, 0, 0}, {12, 9, 15}}, 5);
  PotentialRequest request;
  request.atoms = &atoms;
  request.grid = grid_from_origin({-2, -2, -2}, {21, 14, 11}, 0.9);
  request.physics.dielectric = 78.54;
  request.physics.ionic_strength = 0.15;
  auto backend = make_cpu_backend();
  EXPECT_EQ(backend->name(), "cpu");
  EXPECT_TRUE(backend->supports(Method::direct));
  EXPECT_TRUE(backend->supports(Method::cutoff));
  const auto whole = run_direct(atoms, request.grid, request.physics, Slab{0, request.grid.nz()});
  backend->slab_bytes = 2 * request.grid.plane_size() * sizeof(float);  // 2 planes: 6 slabs
  int slabs = 0;
  backend->run(request, [&](Slab, const float*) { ++slabs; });
  EXPECT_EQ(slabs, 6);
  EXPECT_EQ(compute_grid(*backend, request), whole);
  const auto part = run_direct(atoms, request.grid, request.physics, Slab{3, 6});
  const std::size_t plane = request.grid.plane_size();
  EXPECT_EQ(part, std::vector<float>(whole.begin() + 3 * plane, whole.begin() + 6 * plane));
}

TEST(CpuDirect, RejectsSlabsOutsideTheGrid) {
  const AtomSet atoms = test::random_atoms(10, Box{{0, 0, 0}, {1, 1, 1}}, 1);
  const GridSpec grid = grid_from_origin({0, 0, 0}, {4, 4, 4}, 1.0);
  std::vector<float> out(grid.point_count());
  const PairKernel kernel = make_pair_kernel(Physics{});
  EXPECT_THROW(direct_sum_cpu(atoms, grid, kernel, Slab{2, 5}, out.data()), Error);
  EXPECT_THROW(direct_sum_cpu(atoms, grid, kernel, Slab{3, 1}, out.data()), Error);
}

// The sum at arbitrary points: at a grid's points, in any order and scattered far apart, it equals
// the float64 sum as closely as the grid's rows do, for each pair form; and it is the rows' sum
// to float rounding. Points given near each other or far apart, with a count that is not a
// multiple of 8.
TEST(CpuDirect, PointsEqualTheGridsPointsForEveryForm) {
  const AtomSet atoms = test::random_atoms(900, Box{{10, -5, 3}, {34, 17, 25}}, 11);
  const GridSpec grid = grid_from_origin({8.3, -7.1, 1.2}, {29, 27, 25}, 0.9);
  for (const double ionic_strength : {0.0, 0.15}) {
    for (const bool ddd : {false, true}) {
      if (ddd && ionic_strength > 0) continue;
      Physics physics;
      physics.ionic_strength = ionic_strength;
      physics.distance_dependent = ddd;
      if (!ddd) physics.dielectric = 78.54;
      const PairKernel kernel = make_pair_kernel(physics);
      const std::vector<double> reference = test::reference_direct(atoms, grid, kernel);
      const auto rows = run_direct(atoms, grid, physics, Slab{0, grid.nz()});
      // Every 7th point of the grid, in grid order, then the same points in a scattered order.
      std::vector<std::size_t> picked;
      for (std::size_t n = 0; n < grid.point_count(); n += 7) picked.push_back(n);
      std::vector<std::size_t> scattered = picked;
      for (std::size_t i = 0; i < scattered.size(); ++i) std::swap(scattered[i], scattered[(i * 7919) % scattered.size()]);
      for (const std::vector<std::size_t>* list : {&picked, &scattered}) {
        const std::vector<std::size_t>& order = *list;
        std::vector<std::array<double, 3>> points;
        for (const std::size_t n : order) {
          const auto ijk = grid.ijk(n);
          points.push_back(grid.position(ijk[0], ijk[1], ijk[2]));
        }
        std::vector<float> out(points.size(), NAN);
        direct_sum_points_cpu(atoms, points, kernel, out.data());
        std::vector<float> from_rows;
        std::vector<double> from_reference;
        for (const std::size_t n : order) {
          from_rows.push_back(rows[n]);
          from_reference.push_back(reference[n]);
        }
        const double error = test::relative_l2(out, from_reference);
        EXPECT_LT(error, 1e-6) << "ionic strength " << ionic_strength << (ddd ? ", ddd" : "");
        // Near each other (grid order), about as close as the rows (1.1-1.5x their error here);
        // scattered, the lanes' offsets round too (up to 2.5x, ddd's 1/r² doubling it).
        if (list == &picked) EXPECT_LT(error, 2 * test::relative_l2(from_rows, from_reference) + 1e-7);
        EXPECT_LT(test::relative_l2(out, from_rows), 1e-6);
      }
    }
  }
  std::vector<float> none;
  direct_sum_points_cpu(atoms, {}, make_pair_kernel(Physics{}), none.data());  // nothing to do
}
