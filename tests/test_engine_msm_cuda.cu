// The GPU long-range MSM part (engine/msm_cuda.hpp) against the CPU one (engine/msm.hpp, itself
// tested against float64 sums in test_engine_msm.cpp): level-0 potentials and output grids agree
// within 1e-5 (relative L2) for every order, on random atoms, 1HPV and a grid smaller than one
// MSM cell, slab by slab into a padded device layout; and the set-up's report, stage by stage.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/engine/cuda_backend.hpp"
#include "dcsgrid/engine/msm.hpp"
#include "dcsgrid/engine/msm_cuda.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"

using namespace dcsgrid;
using namespace dcsgrid::engine;

namespace {

// The whole grid from the GPU, added slab by slab (`planes` planes) onto ones in a layout padded in
// x and y, less the ones.
std::vector<float> gpu_long_range(const MsmLongRangeCuda& msm, const GridSpec& grid, std::int64_t planes) {
  const SlabLayout layout{grid.nx() + 5, grid.ny() + 3};
  const std::vector<float> ones(std::size_t(layout.pitch_x) * layout.rows_per_plane * planes, 1.0f);
  std::vector<float> host(ones.size()), whole(grid.point_count());
  cuda::DeviceBuffer<float> out(ones.size());
  for (std::int64_t z = 0; z < grid.nz(); z += planes) {
    const Slab slab{z, std::min(grid.nz(), z + planes)};
    DCSGRID_CUDA_CHECK(cudaMemcpy(out.data(), ones.data(), out.bytes(), cudaMemcpyHostToDevice));
    msm.add_to(slab, out.data(), layout, nullptr);
    DCSGRID_CUDA_CHECK(cudaMemcpy(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost));
    for (std::int64_t k = 0; k < slab.planes(); ++k)
      for (std::int64_t j = 0; j < grid.ny(); ++j)
        for (std::int64_t i = 0; i < grid.nx(); ++i)
          whole[grid.index(i, j, z + k)] = host[(k * layout.rows_per_plane + j) * layout.pitch_x + i] - 1.0f;
  }
  return whole;
}

void expect_gpu_matches_cpu(const AtomSet& atoms, const GridSpec& grid, const MsmOptions& options) {
  const float scale = make_pair_kernel(Physics{}).scale;
  const MsmLongRange cpu(atoms, grid, scale, options);
  const MsmLongRangeCuda gpu(atoms, grid, scale, options, nullptr);
  ASSERT_EQ(gpu.plan().levels.size(), cpu.plan().levels.size());
  // Both sum the levels in double (the GPU's stencils by FFT); the device bins the atoms' spline
  // fractions in float32, which moves the finest level by up to about 1e-8.
  const std::vector<double> finest = gpu.finest_potential();
  ASSERT_EQ(finest.size(), cpu.finest_potential().size());
  EXPECT_LT(test::relative_l2(finest, cpu.finest_potential()), 1e-7) << "order " << options.order;
  std::vector<float> expected(grid.point_count(), 0.0f);
  cpu.add_to({0, grid.nz()}, expected.data());
  EXPECT_LT(test::relative_l2(gpu_long_range(gpu, grid, 3), expected), 1e-5) << "order " << options.order;
}

}  // namespace

TEST(EngineMsmCuda, MatchesCpuOnRandomAtomsForEveryOrder) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet atoms = test::random_atoms(3000, Box{{0, 0, 0}, {40, 40, 40}}, 21);
  const GridSpec grid = grid_from_origin({-4.3, -2.1, -5.7}, {57, 51, 49}, 0.9);
  for (int order : {4, 6, 8, 10}) {
    MsmOptions options;
    options.order = order;
    expect_gpu_matches_cpu(atoms, grid, options);
  }
}

// Hundreds of atoms in one level-0 cell, beside atoms spread over the box: the device's sort by
// cell must keep every atom and give each its cell.
TEST(EngineMsmCuda, MatchesCpuWithAtomsCrowdedIntoOneCell) {
  DCSGRID_REQUIRE_GPU();
  AtomSet atoms = test::random_atoms(400, Box{{0, 0, 0}, {30, 30, 30}}, 5);
  const AtomSet crowd = test::random_atoms(600, Box{{12.1, 12.1, 12.1}, {12.4, 12.4, 12.4}}, 6);
  for (std::size_t i = 0; i < crowd.size(); ++i) atoms.push_back(crowd.x[i], crowd.y[i], crowd.z[i], crowd.q[i]);
  expect_gpu_matches_cpu(atoms, grid_from_origin({-2.0, -1.0, -3.0}, {41, 37, 39}, 0.9), MsmOptions{});
}

TEST(EngineMsmCuda, MatchesCpuOnProteinAndTinyGrid) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet protein = io::read_structure(test::data_file("1hpv_pdb2pqr_amber.pqr.gz")).atoms;
  expect_gpu_matches_cpu(protein, grid_around(bounding_box(protein), 0.7, 5.0), MsmOptions{});
  expect_gpu_matches_cpu(protein, grid_from_origin({10.1, 20.2, 5.3}, {2, 3, 2}, 0.3), MsmOptions{});
}

TEST(EngineMsmCuda, MatchesCpuOnWaterBoxWithManyLevels) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet water = water_box_atoms(100000, 4);
  MsmOptions options;
  options.spacing = 2.0;
  expect_gpu_matches_cpu(water, grid_around(bounding_box(water), 1.0, 3.0), options);
}

// The backend's report of a device's set-up: its context, the method and the slab buffers, with
// msm's own stages (issue 32 asks where its set-up goes); the stages fit within the set-up's time.
TEST(EngineMsmCuda, BackendReportsTheSetUpStageByStage) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet atoms = test::random_atoms(3000, Box{{0, 0, 0}, {40, 40, 40}}, 22);
  PotentialRequest request;
  request.atoms = &atoms;
  request.grid = grid_from_origin({-2, -2, -2}, {48, 48, 48}, 1.0);
  request.method = Method::msm;
  auto backend = make_cuda_backend({0});
  const RunStats stats = backend->run(request, [](Slab, const float*) {});
  ASSERT_EQ(stats.devices.size(), 1u);
  const DeviceRunStats& device = stats.devices.front();
  double sum = 0;
  std::vector<std::string> names;
  for (const StageTime& s : device.setup_stages) {
    EXPECT_GE(s.seconds, 0) << s.stage;
    // "method: ..." stages are parts of "method".
    if (s.stage.rfind("method: ", 0) != 0) sum += s.seconds;
    names.push_back(s.stage);
  }
  EXPECT_LE(sum, device.setup_seconds + 1e-6);
  EXPECT_GT(sum, 0.5 * device.setup_seconds);
  for (const char* expected : {"context and streams", "method", "slab buffers", "method: short-range atoms upload",
                               "method: long range: plan", "method: long range: binning",
                               "method: long range: anterpolation", "method: long range: level stencils",
                               "method: long range: output weights"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
}
