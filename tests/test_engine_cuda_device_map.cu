// Maps left on the GPU (Backend::run_on_device, engine/cuda_device.hpp's NonFiniteSearch): the
// map equals the one run() hands to a sink bit for bit, for a method of each kind (direct, the
// cutoff kernel's 8-plane bricks, PME's mesh added to its real part), in several slabs; a caller's
// maps are reused and remade when too small; the first non-finite value is found by index.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "helpers.hpp"
#include "periodic_reference.hpp"

namespace dcsgrid::test {
namespace {

std::vector<float> download(const engine::DeviceMap& map, std::size_t points) {
  std::vector<float> host(points);
  DCSGRID_CUDA_CHECK(cudaMemcpy(host.data(), map.data(), points * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

TEST(CudaDeviceMap, RunOnDeviceGivesRunsMapBitForBit) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet atoms = random_atoms(300, Box{{0, 0, 0}, {18, 16, 20}}, 5);
  const UnitCell cell = make_cell({18, 16, 20});
  GridSpec grid;
  grid.origin = {-1.5, -1, -2};
  grid.spacing = {0.7, 0.7, 0.7};
  grid.dims = {29, 27, 33};
  for (const engine::Method method : {engine::Method::direct, engine::Method::cutoff, engine::Method::pme}) {
    SCOPED_TRACE(engine::method_name(method));
    engine::PotentialRequest r;
    r.atoms = &atoms;
    r.grid = grid;
    r.physics = test_physics();
    r.method = method;
    r.cutoff.radius = 8;
    r.cell = cell;
    const auto backend = engine::make_backend("gpu", {0});
    backend->slab_bytes = 10 * grid.plane_size() * sizeof(float);  // several slabs
    const std::vector<float> expected = engine::compute_grid(*backend, r);
    ASSERT_TRUE(backend->computes_on_device(r, 1 << 20));
    engine::DeviceMaps maps;
    const engine::OnDeviceRun run = backend->run_on_device(r, maps);
    ASSERT_NE(run.map, nullptr);
    EXPECT_EQ(run.map->device(), 0);
    EXPECT_FALSE(run.first_non_finite);
    EXPECT_GT(run.stats.devices.at(0).slabs, 1);
    EXPECT_TRUE(download(*run.map, grid.point_count()) == expected);
    // Run again into the same maps: the map is reused; a larger grid makes a new one.
    const engine::DeviceMap* first = run.map;
    EXPECT_EQ(backend->run_on_device(r, maps).map, first);
    engine::PotentialRequest larger = r;
    larger.grid.dims[2] += 8;
    const engine::OnDeviceRun again = backend->run_on_device(larger, maps);
    EXPECT_EQ(maps.size(), 1u);
    EXPECT_GE(again.map->points(), larger.grid.point_count());
    EXPECT_TRUE(download(*again.map, larger.grid.point_count()) == engine::compute_grid(*backend, larger));
  }
}

// A backend that keeps set-up between runs (batch's frame workers) reuses the direct method's atom
// buffers: frames of more atoms grow them, frames of fewer must still read only their own atoms
// (tiles of the padded count, not of the kept capacity). Each frame's map equals a fresh backend's
// bit for bit, through run_on_device and run() alike.
TEST(CudaDeviceMap, KeptAtomBuffersGiveEachFrameItsOwnMap) {
  DCSGRID_REQUIRE_GPU();
  GridSpec grid;
  grid.origin = {-1, -1, -1};
  grid.spacing = {0.8, 0.8, 0.8};
  grid.dims = {23, 21, 19};
  const auto kept = engine::make_backend("gpu", {0});
  kept->keep_setup = true;
  engine::DeviceMaps maps;
  std::uint64_t seed = 40;
  for (const std::size_t n : {300u, 1000u, 37u, 1000u, 299u}) {
    SCOPED_TRACE(n);
    const AtomSet atoms = random_atoms(n, Box{{0, 0, 0}, {16, 15, 14}}, ++seed);
    engine::PotentialRequest r;
    r.atoms = &atoms;
    r.grid = grid;
    r.physics = test_physics();
    r.method = engine::Method::direct;
    const std::vector<float> fresh = engine::compute_grid(*engine::make_backend("gpu", {0}), r);
    const engine::OnDeviceRun run = kept->run_on_device(r, maps);
    EXPECT_TRUE(download(*run.map, grid.point_count()) == fresh);
    EXPECT_TRUE(engine::compute_grid(*kept, r) == fresh);
  }
}

// Bins of fixed capacity sum their overflow atoms on the host: such a map cannot stay on the GPU,
// nor can one whose maps would not fit the device.
TEST(CudaDeviceMap, RunsThatNeedTheHostAreNotKeptOnTheDevice) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet atoms = random_atoms(50, Box{{0, 0, 0}, {10, 10, 10}}, 6);
  engine::PotentialRequest r;
  r.atoms = &atoms;
  r.grid.spacing = {1, 1, 1};
  r.grid.dims = {12, 12, 12};
  r.physics = test_physics();
  r.method = engine::Method::cutoff;
  const auto backend = engine::make_backend("gpu", {0});
  EXPECT_TRUE(backend->computes_on_device(r, 0));
  EXPECT_FALSE(backend->computes_on_device(r, std::numeric_limits<std::size_t>::max() / 4));
  r.cutoff.bin_capacity = 4;
  EXPECT_FALSE(backend->computes_on_device(r, 0));
  engine::DeviceMaps maps;
  EXPECT_THROW(backend->run_on_device(r, maps), Error);
  EXPECT_FALSE(engine::make_backend("cpu")->computes_on_device(r, 0));
}

TEST(CudaDeviceMap, FirstNonFiniteIsTheLowestIndex) {
  DCSGRID_REQUIRE_GPU();
  DCSGRID_CUDA_CHECK(cudaSetDevice(0));
  const std::size_t n = 3'000'001;
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = float(std::sin(double(i)));
  engine::CudaDeviceMap map(n);
  cuda::Stream stream;
  engine::NonFiniteSearch search;
  const auto check = [&] {
    // From pageable memory cudaMemcpy may return before the data lands: wait for the device.
    DCSGRID_CUDA_CHECK(cudaMemcpy(map.data(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    DCSGRID_CUDA_CHECK(cudaDeviceSynchronize());
    search.enqueue(map.data(), n, stream.get());
    stream.synchronize();
    return search.result(map.data(), stream.get());
  };
  EXPECT_FALSE(check());
  host[2'500'017] = std::numeric_limits<float>::infinity();
  host[1'234'567] = std::numeric_limits<float>::quiet_NaN();
  host[n - 1] = -std::numeric_limits<float>::infinity();
  auto bad = check();
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->index, 1'234'567u);
  EXPECT_TRUE(std::isnan(bad->value));
  host[3] = -std::numeric_limits<float>::infinity();
  bad = check();
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->index, 3u);
  EXPECT_EQ(bad->value, -std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace dcsgrid::test
