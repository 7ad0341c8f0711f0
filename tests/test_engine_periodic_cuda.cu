// The periodic methods on the GPU (engine/pme_cuda.hpp, periodic_cuda.hpp) against float64
// references written here with plain loops and no engine code (the real-space sum over every
// image within 5.9/β_ref, erfc < 1e-16, and the reciprocal sum over every k with
// e^{−k²/4β_ref²} ≥ 1e-17, at β_ref = 0.3 Å⁻¹ of the reference's own: the full potential does not
// depend on β), and against the CPU engine (itself tested against float64 in
// test_engine_periodic.cpp): the GPU PME's mesh potential equals the CPU's to float64 rounding,
// and CPU and GPU maps agree within 1e-5. Orthorhombic and triclinic cells, charged and neutral
// systems, output grids reaching beyond the cell, several slabs. Physics with a 0.01 Å minimum
// distance, which no point here comes near.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/engine/ewald_cuda.hpp"
#include "dcsgrid/engine/periodic.hpp"
#include "dcsgrid/engine/pme_cuda.hpp"
#include "helpers.hpp"
#include "periodic_reference.hpp"

namespace dcsgrid::test {
namespace {

using engine::Method;
using engine::PeriodicOptions;
using engine::Slab;

// ---- the engine ----

engine::PotentialRequest periodic_request(const AtomSet& atoms, const UnitCell& cell, const GridSpec& grid,
                                          Method method, const PeriodicOptions& options = {}) {
  engine::PotentialRequest r;
  r.atoms = &atoms;
  r.grid = grid;
  r.physics = test_physics();
  r.method = method;
  r.cell = cell;
  r.periodic = options;
  return r;
}

// The map from a backend whose slabs hold at most `planes` planes (several slabs).
std::vector<float> backend_map(const std::string& device, const engine::PotentialRequest& r,
                               std::int64_t planes = 4) {
  const auto backend = engine::make_backend(device);
  backend->slab_bytes = std::size_t(planes) * r.grid.plane_size() * sizeof(float);
  return engine::compute_grid(*backend, r);
}

// The reciprocal part from PmeReciprocalCuda, added slab by slab (`planes` planes) onto ones in a
// layout padded in x and y, less the ones.
template <typename ReciprocalCuda>
std::vector<float> gpu_reciprocal(ReciprocalCuda& pme, const GridSpec& grid, std::int64_t planes) {
  const engine::SlabLayout layout{grid.nx() + 3, grid.ny() + 2};
  const std::vector<float> ones(std::size_t(layout.pitch_x) * layout.rows_per_plane * planes, 1.0f);
  std::vector<float> host(ones.size()), whole(grid.point_count());
  cuda::DeviceBuffer<float> out(ones.size());
  for (std::int64_t z = 0; z < grid.nz(); z += planes) {
    const Slab slab{z, std::min(grid.nz(), z + planes)};
    DCSGRID_CUDA_CHECK(cudaMemcpy(out.data(), ones.data(), out.bytes(), cudaMemcpyHostToDevice));
    pme.add_to(grid, slab, out.data(), layout, nullptr);
    DCSGRID_CUDA_CHECK(cudaMemcpy(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost));
    for (std::int64_t k = 0; k < slab.planes(); ++k)
      for (std::int64_t j = 0; j < grid.ny(); ++j)
        for (std::int64_t i = 0; i < grid.nx(); ++i)
          whole[grid.index(i, j, z + k)] = host[(k * layout.rows_per_plane + j) * layout.pitch_x + i] - 1.0f;
  }
  return whole;
}

template <typename Reciprocal>
std::vector<float> cpu_reciprocal(const Reciprocal& pme, const GridSpec& grid) {
  std::vector<float> out(grid.point_count(), 0.0f);
  pme.add_to(grid, {0, grid.nz()}, out.data());
  return out;
}

// Relative L2 of two float64 vectors.
double relative_l2_double(const std::vector<double>& a, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return a.size() == ref.size() ? std::sqrt(num / den) : INFINITY;
}

}  // namespace

// Spreading, FFTs and the influence function: the GPU's mesh potential is the CPU's to float64
// rounding, for every order (odd ones take the neighbours' mean at K/2), both cells, atoms
// inside and outside the cell.
TEST(PeriodicCuda, PmeMeshPotentialEqualsTheCpuOne) {
  DCSGRID_REQUIRE_GPU();
  for (const UnitCell* cell : {&orthorhombic(), &triclinic()}) {
    const AtomSet atoms = atoms_in_cell(*cell, 400, 3, 0.5, -0.7, 1.8);
    for (int order : {4, 5, 6, 8, 11, 12}) {
      PeriodicOptions o;
      o.pme_order = order;
      o.mesh_spacing = 0.9;
      const engine::PmeParameters p = engine::resolve_pme(*cell, o);
      engine::PmeReciprocal cpu(*cell, p, scale());
      cpu.set_atoms(atoms);
      engine::PmeReciprocalCuda gpu(*cell, p, scale(), true, nullptr);
      gpu.set_atoms(atoms, nullptr);
      EXPECT_LT(relative_l2_double(gpu.mesh_potential(nullptr), cpu.mesh_potential()), 1e-11)
          << "order " << order << ", " << cell->describe();
    }
  }
}

// The interpolation onto an output grid that is not the mesh (beyond the cell, slab by slab, a
// padded layout) against the float64 reciprocal sum, and against the CPU's.
TEST(PeriodicCuda, PmeReciprocalPartMatchesFloat64AndTheCpu) {
  DCSGRID_REQUIRE_GPU();
  for (const UnitCell* cell : {&orthorhombic(), &triclinic()}) {
    const AtomSet atoms = atoms_in_cell(*cell, 150, 4, -1.5);
    const GridSpec grid = grid_over_cell(*cell, 2.5, 15);
    PeriodicOptions o;
    o.smooth_beta = 0.3;
    engine::PmeParameters p = engine::resolve_pme(*cell, o);
    p.real_cutoff = 9;  // as the reciprocal part of a full PME: the CPU computes it in double
    engine::PmeReciprocalCuda gpu(*cell, p, scale(), false, nullptr);
    gpu.set_atoms(atoms, nullptr);
    const std::vector<float> got = gpu_reciprocal(gpu, grid, 4);
    EXPECT_LT(relative_l2(got, reference_reciprocal(atoms, *cell, grid, 0.3)), 1e-5) << cell->describe();
    engine::PmeReciprocal cpu(*cell, p, scale(), false);
    cpu.set_atoms(atoms);
    EXPECT_LT(relative_l2(got, cpu_reciprocal(cpu, grid)), 1e-6) << cell->describe();
  }
}

// The exact reciprocal sum on the device: S(k) and the sum over k vectors at each point, on an
// orthogonal grid and on a skewed one (a triclinic cell's lattice), slab by slab in a padded
// layout, against the CPU's EwaldReciprocal (the same k vectors and order: float rounding of the
// output apart) and against the float64 reciprocal sum (the k vectors the tolerance keeps).
TEST(PeriodicCuda, EwaldReciprocalPartEqualsTheCpuOne) {
  DCSGRID_REQUIRE_GPU();
  GridSpec lattice = grid_on_cell(triclinic(), 2.0);
  lattice.origin = {-1.3, 0.4, 2.2};
  const std::vector<std::pair<const UnitCell*, GridSpec>> cases = {
      {&orthorhombic(), grid_over_cell(orthorhombic(), 2.5, 15)},
      {&triclinic(), grid_over_cell(triclinic(), 2.5, 15)},
      {&triclinic(), lattice}};
  for (const auto& [cell, grid] : cases) {
    const AtomSet atoms = atoms_in_cell(*cell, 150, 9, 1.0, -0.4, 1.3);
    const engine::EwaldParameters p = engine::resolve_ewald(*cell, PeriodicOptions{});
    engine::EwaldReciprocal cpu(*cell, p, scale(), true);
    cpu.set_atoms(atoms);
    engine::EwaldReciprocalCuda gpu(*cell, p, scale(), true, nullptr);
    gpu.set_atoms(atoms, nullptr);
    const std::vector<float> got = gpu_reciprocal(gpu, grid, 3);
    EXPECT_LT(relative_l2(got, cpu_reciprocal(cpu, grid)), 1e-7) << cell->describe() << ", " << grid.describe();
    engine::EwaldReciprocalCuda no_background(*cell, p, scale(), false, nullptr);
    no_background.set_atoms(atoms, nullptr);
    EXPECT_LT(relative_l2(gpu_reciprocal(no_background, grid, 4), reference_reciprocal(atoms, *cell, grid, p.beta)),
              1e-5)
        << cell->describe() << ", " << grid.describe();
  }
}

// The cuda backend's ewald and pme (real part through the cutoff kernel over the images, with
// prefix-sum and with fixed bins, the reciprocal part, the background of a charged system) against
// float64 and against the cpu backend.
TEST(PeriodicCuda, BackendEwaldAndPmeMatchFloat64AndTheCpu) {
  DCSGRID_REQUIRE_GPU();
  for (const UnitCell* cell : {&orthorhombic(), &triclinic()}) {
    for (const double charge : {0.0, 1.0}) {
      const AtomSet atoms = atoms_in_cell(*cell, 120, 8, charge);
      const GridSpec grid = grid_over_cell(*cell, 2.0, 14);
      const std::vector<double> ref = reference_ewald(atoms, *cell, grid);
      const std::string what = cell->describe() + ", charge " + std::to_string(charge);
      PeriodicOptions fine;  // docs/periodic.md: order 8, 0.8 Å mesh
      fine.pme_order = 8;
      fine.mesh_spacing = 0.8;
      const auto ewald = periodic_request(atoms, *cell, grid, Method::ewald);
      const auto pme = periodic_request(atoms, *cell, grid, Method::pme);
      const auto pme_fine = periodic_request(atoms, *cell, grid, Method::pme, fine);
      const std::vector<float> gpu_ewald = backend_map("gpu", ewald);
      const std::vector<float> gpu_pme = backend_map("gpu", pme);
      EXPECT_LT(relative_l2(gpu_ewald, ref), 1e-5) << "ewald, " << what;
      EXPECT_LT(relative_l2(gpu_pme, ref), 1e-4) << "pme, " << what;
      EXPECT_LT(relative_l2(backend_map("gpu", pme_fine), ref), 1e-5) << "pme order 8, " << what;
      EXPECT_LT(relative_l2(gpu_ewald, backend_map("cpu", ewald)), 1e-5) << "ewald cpu/gpu, " << what;
      EXPECT_LT(relative_l2(gpu_pme, backend_map("cpu", pme)), 1e-5) << "pme cpu/gpu, " << what;
      // Fixed bins of 2 images: most of the real part on the CPU overflow path (finish_on_host),
      // before ewald's host reciprocal part.
      for (auto r : {ewald, pme}) {
        r.cutoff.bin_capacity = 2;
        EXPECT_LT(relative_l2(backend_map("gpu", r), ref), r.method == Method::ewald ? 1e-5 : 1e-4)
            << engine::method_name(r.method) << " with fixed bins, " << what;
      }
    }
  }
}

// --smooth: the reciprocal part of Gaussian charges alone, no background even for a charged
// system, through both methods of the cuda backend.
TEST(PeriodicCuda, BackendSmoothMapIsTheGaussianChargeReciprocalSum) {
  DCSGRID_REQUIRE_GPU();
  for (const UnitCell* cell : {&orthorhombic(), &triclinic()}) {
    const AtomSet atoms = atoms_in_cell(*cell, 150, 7, 2.0);
    const GridSpec grid = grid_over_cell(*cell, 3.0, 14);
    const std::vector<double> ref = reference_reciprocal(atoms, *cell, grid, 0.25);
    PeriodicOptions o;
    o.smooth_beta = 0.25;
    for (const Method m : {Method::ewald, Method::pme}) {
      const auto r = periodic_request(atoms, *cell, grid, m, o);
      const std::vector<float> gpu = backend_map("gpu", r, 3);
      EXPECT_LT(relative_l2(gpu, ref), 1e-5) << engine::method_name(m) << ", " << cell->describe();
      EXPECT_LT(relative_l2(gpu, backend_map("cpu", r)), 1e-5)
          << engine::method_name(m) << " cpu/gpu, " << cell->describe();
    }
  }
}

// --grid cell: a triclinic cell's own (skewed) lattice, its origin off the cell's, in several
// slabs: ewald, pme and the smooth map against float64 and the CPU (the real part of a skewed grid
// is summed on the host; the reciprocal parts on the device).
TEST(PeriodicCuda, BackendMapsOnTheCellsOwnLattice) {
  DCSGRID_REQUIRE_GPU();
  const UnitCell& cell = triclinic();
  const AtomSet atoms = atoms_in_cell(cell, 120, 13, 1.0);
  GridSpec grid = grid_on_cell(cell, 1.7);
  grid.origin = {0.37, -0.21, 0.13};
  ASSERT_FALSE(grid.orthogonal());
  const std::vector<double> ref = reference_ewald(atoms, cell, grid);
  for (const Method m : {Method::ewald, Method::pme}) {
    const auto r = periodic_request(atoms, cell, grid, m);
    const std::vector<float> gpu = backend_map("gpu", r, 3);
    EXPECT_LT(relative_l2(gpu, ref), m == Method::ewald ? 1e-5 : 1e-4) << engine::method_name(m);
    EXPECT_LT(relative_l2(gpu, backend_map("cpu", r)), 1e-5) << engine::method_name(m) << " cpu/gpu";
  }
  PeriodicOptions o;
  o.smooth_beta = 0.25;
  const std::vector<double> smooth_ref = reference_reciprocal(atoms, cell, grid, 0.25);
  const auto r = periodic_request(atoms, cell, grid, Method::pme, o);
  EXPECT_LT(relative_l2(backend_map("gpu", r, 3), smooth_ref), 1e-5) << "smooth";
}

// One object, frame after frame (more atoms, then fewer, then none): each frame as from a new
// object; and a grid tall enough that add_to folds it in several runs of planes.
TEST(PeriodicCuda, PmeServesFrameAfterFrameAndTallGrids) {
  DCSGRID_REQUIRE_GPU();
  const UnitCell cell = make_cell({150, 150, 8});
  const engine::PmeParameters p = engine::resolve_pme(cell, PeriodicOptions{});
  // K1·K2 = 150² mesh values a folded plane: 64 MiB of folds hold about 360 planes.
  const GridSpec tall = grid_from_origin({-3.0, 7.0, -5.0}, {3, 4, 800}, 0.5);
  engine::PmeReciprocalCuda gpu(cell, p, scale(), true, nullptr);
  for (const std::size_t n : {300, 900, 40, 0}) {
    const AtomSet atoms = atoms_in_cell(cell, n, unsigned(n) + 1, n ? 0.25 : 0.0);
    gpu.set_atoms(atoms, nullptr);
    engine::PmeReciprocal cpu(cell, p, scale());
    cpu.set_atoms(atoms);
    const std::vector<float> expected = cpu_reciprocal(cpu, tall);
    const std::vector<float> got = gpu_reciprocal(gpu, tall, tall.nz());
    if (n == 0) {
      EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](float v) { return v == 0.0f; }));
      continue;
    }
    EXPECT_LT(relative_l2(got, expected), 1e-6) << n << " atoms";
    EXPECT_LT(relative_l2_double(gpu.mesh_potential(nullptr), cpu.mesh_potential()), 1e-11) << n << " atoms";
  }
}

TEST(PeriodicCuda, RefusesWhatTheCpuPmeRefuses) {
  DCSGRID_REQUIRE_GPU();
  engine::PmeParameters p = engine::resolve_pme(orthorhombic(), PeriodicOptions{});
  p.order = 13;
  EXPECT_THROW(engine::PmeReciprocalCuda(orthorhombic(), p, scale(), true, nullptr), Error);
  p.order = 6;
  p.mesh = {4, 30, 30};
  try {
    engine::PmeReciprocalCuda(orthorhombic(), p, scale(), true, nullptr);
    ADD_FAILURE() << "a mesh thinner than the order was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fewer than the B-spline order"), std::string::npos) << e.what();
  }
}

}  // namespace dcsgrid::test
