// What is particular to the CPU direct-summation engine: a grid computed slab by slab gives the
// same floats as in one piece, and the engine's own argument checks. Accuracy against float64 and
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
