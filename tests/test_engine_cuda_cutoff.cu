// What is particular to the GPU cutoff method, against the float64 cutoff sum: empty, full and
// overflowing bins (the CPU overflow path), atoms on bin faces, fixed against dynamic bins, slabs,
// the DeviceMethod pipeline. Every form and pair form on random and real inputs, and agreement
// with the CPU backend, are in test_engine_conformance.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_cutoff.hpp"
#include "dcsgrid/engine/cutoff_form.hpp"
#include "helpers.hpp"

namespace dcsgrid::engine {
namespace {

// The float64 brute-force cutoff sum of the request's planes [slab).
std::vector<double> reference_cutoff(const PotentialRequest& request, Slab slab) {
  return test::reference_cutoff(*request.atoms, request.grid, make_pair_kernel(request.physics),
                                request.cutoff, slab.z_begin, slab.z_end);
}

std::vector<float> gpu_cutoff(const PotentialRequest& request, Slab slab, CutoffSlabTimes* times = nullptr) {
  std::vector<float> out(request.grid.plane_size() * slab.planes(), -1.0f);
  cutoff_sum_cuda(request, slab, out.data(), times);
  return out;
}

Slab all_planes(const GridSpec& grid) { return {0, grid.nz()}; }

// Random atoms in the grid's box grown by `margin` on every side.
AtomSet atoms_around(const GridSpec& grid, double margin, std::size_t n, std::uint64_t seed) {
  const auto far = grid.far_corner();
  Box box;
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = grid.origin[a] - margin;
    box.hi[a] = far[a] + margin;
  }
  return test::random_atoms(n, box, seed);
}

// 22 × 18.5 × 17 Å at 0.5 Å.
GridSpec default_grid() { return grid_from_origin({-6.2, 3.1, -20.4}, {45, 38, 35}, 0.5); }

// A cutoff request that owns its atoms.
struct Problem {
  GridSpec grid = default_grid();
  AtomSet atoms;
  PotentialRequest request;
  explicit Problem(AtomSet a, CutoffOptions cutoff = {}, Physics physics = {}) : atoms(std::move(a)) {
    request.atoms = &atoms;
    request.grid = grid;
    request.physics = physics;
    request.method = Method::cutoff;
    request.cutoff = cutoff;
  }
  void set_grid(const GridSpec& g) { request.grid = grid = g; }
};

void expect_matches_reference(const PotentialRequest& request, double tolerance = 1e-5,
                              CutoffSlabTimes* times = nullptr) {
  const Slab slab = all_planes(request.grid);
  const auto gpu = gpu_cutoff(request, slab, times);
  const auto ref = reference_cutoff(request, slab);
  EXPECT_LT(test::relative_l2(gpu, ref), tolerance);
}

// A dense seam, as where tiled boxes meet: a 1 Å sheet holding 40 times the density around it.
// The default bins take every atom, so nothing is left for the CPU; a fixed capacity chosen
// from the histogram would overflow there.
TEST(CudaCutoff, DefaultBinsHoldADenseSeamWithoutOverflow) {
  DCSGRID_REQUIRE_GPU();
  const GridSpec grid = default_grid();
  AtomSet atoms = atoms_around(grid, 12.0, 6000, 2);
  Box seam{{-18.0, -9.0, -4.5}, {28.0, 34.0, -3.5}};
  const AtomSet dense = test::random_atoms(6000, seam, 8);
  for (std::size_t i = 0; i < dense.size(); ++i) atoms.push_back(dense.x[i], dense.y[i], dense.z[i], dense.q[i]);
  Problem s(atoms);
  CutoffSlabTimes times;
  expect_matches_reference(s.request, 1e-5, &times);
  EXPECT_EQ(times.run.bin_capacity, 0);
  EXPECT_EQ(times.run.atoms_overflow, 0u);
  EXPECT_EQ(times.run.overflow_seconds, 0.0);
  EXPECT_EQ(times.run.slabs, 1u);
  EXPECT_GT(times.run.kernel_seconds, 0.0);

  DeviceAtomArrays device_atoms;
  DeviceBins bins;
  cuda::Stream stream;
  upload_atom_arrays(atoms, device_atoms, stream.get());
  count_bins(device_atoms, make_bin_geometry(grid, all_planes(grid), s.request.cutoff.radius), bins, stream.get());
  const int capacity = choose_bin_capacity_cuda(bins, stream.get());
  s.request.cutoff.bin_capacity = capacity;
  CutoffSlabTimes fixed;
  expect_matches_reference(s.request, 1e-5, &fixed);
  EXPECT_GT(fixed.run.atoms_overflow, 0u) << "capacity " << capacity << " held the seam";
}

TEST(CudaCutoff, EmptyFullAndOverflowingBins) {
  DCSGRID_REQUIRE_GPU();
  // Capacity 8: bins holding exactly 8 and 13 atoms, a sparse region, and most bins empty.
  const GridSpec grid = grid_from_origin({0.0, 0.0, 0.0}, {40, 40, 40}, 0.5);
  const BinGeometry g = make_bin_geometry(grid, all_planes(grid), 12.0);
  const auto bin_box = [&](int ix, int iy, int iz) {
    Box b;
    const int idx[3] = {ix, iy, iz};
    for (int a = 0; a < 3; ++a) {
      b.lo[a] = g.frame_origin[a] + g.axis[a].lower() + (idx[a] + 0.05) * g.axis[a].edge;
      b.hi[a] = g.frame_origin[a] + g.axis[a].lower() + (idx[a] + 0.95) * g.axis[a].edge;
    }
    return b;
  };
  AtomSet atoms = test::random_atoms(8, bin_box(5, 5, 5), 3);
  const AtomSet crowded = test::random_atoms(13, bin_box(7, 4, 6), 4);
  const AtomSet sparse = test::random_atoms(30, Box{{2, 2, 2}, {18, 6, 10}}, 5);
  for (const AtomSet* more : {&crowded, &sparse})
    for (std::size_t i = 0; i < more->size(); ++i)
      atoms.push_back(more->x[i], more->y[i], more->z[i], more->q[i]);
  CutoffOptions cutoff;
  cutoff.bin_capacity = 8;
  Problem s(atoms, cutoff);
  s.set_grid(grid);
  CutoffSlabTimes times;
  expect_matches_reference(s.request, 1e-5, &times);
  EXPECT_GE(times.run.atoms_overflow, 5u);
}

TEST(CudaCutoff, AllAtomsInOneBinMostlyOverflow) {
  DCSGRID_REQUIRE_GPU();
  const GridSpec grid = grid_from_origin({0.0, 0.0, 0.0}, {36, 30, 33}, 0.5);
  // The overflow atoms go through the CPU engine: the same forms there (msm_short and
  // ewald_real included).
  for (const CutoffForm form : {CutoffForm::switched, CutoffForm::msm_short, CutoffForm::ewald_real}) {
    CutoffOptions cutoff;
    cutoff.bin_capacity = 8;
    cutoff.form = form;
    cutoff.ewald_beta = 0.35;
    Problem s(test::random_atoms(300, Box{{8.0, 8.0, 8.0}, {11.5, 11.5, 11.5}}, 6), cutoff);  // bin [7.75, 11.75)³
    s.set_grid(grid);
    CutoffSlabTimes times;
    expect_matches_reference(s.request, 1e-5, &times);
    EXPECT_GE(times.run.atoms_overflow, 300u - 8u);
  }
}

TEST(CudaCutoff, AtomsOnBinFacesAndGridPoints) {
  DCSGRID_REQUIRE_GPU();
  const GridSpec grid = grid_from_origin({1.0, -2.0, 3.0}, {33, 29, 27}, 0.5);
  const BinGeometry g = make_bin_geometry(grid, all_planes(grid), 9.0);
  AtomSet atoms;
  double q = 0.3;
  for (int i = 0; i < g.axis[0].bins; i += 2)
    for (int j = 1; j < g.axis[1].bins; j += 3)
      for (int k = 0; k < g.axis[2].bins; k += 2) {
        // A bin corner, and the middle of a face.
        const double x = g.frame_origin[0] + g.axis[0].lower() + i * g.axis[0].edge;
        const double y = g.frame_origin[1] + g.axis[1].lower() + j * g.axis[1].edge;
        const double z = g.frame_origin[2] + g.axis[2].lower() + k * g.axis[2].edge;
        atoms.push_back(x, y, z, q);
        atoms.push_back(x + 0.5 * g.axis[0].edge, y, z + 0.5 * g.axis[2].edge, -0.7 * q);
        q = -q * 1.01;
      }
  for (std::int64_t i = 0; i < grid.nx(); i += 7) {  // on grid points: the minimum distance
    const auto p = grid.position(i, i % grid.ny(), (2 * i) % grid.nz());
    atoms.push_back(p[0], p[1], p[2], 0.5);
  }
  CutoffOptions cutoff;
  cutoff.radius = 9.0;
  cutoff.form = CutoffForm::shifted;
  Problem s(atoms, cutoff);
  s.set_grid(grid);
  expect_matches_reference(s.request);
}

TEST(CudaCutoff, FixedAndDynamicBinsAgree) {
  DCSGRID_REQUIRE_GPU();
  CutoffOptions cutoff;
  cutoff.bin_capacity = 16;
  Problem fixed(atoms_around(default_grid(), 12.0, 8000, 7), cutoff);
  Problem dynamic(fixed.atoms);
  const auto a = gpu_cutoff(fixed.request, all_planes(fixed.grid));
  CutoffSlabTimes times;
  const auto b = gpu_cutoff(dynamic.request, all_planes(dynamic.grid), &times);
  EXPECT_LT(test::relative_l2(b, a), 1e-6);
  EXPECT_EQ(times.run.bin_capacity, 0);
  EXPECT_EQ(times.run.atoms_overflow, 0u);
  EXPECT_LT(test::relative_l2(b, reference_cutoff(dynamic.request, all_planes(dynamic.grid))), 1e-5);
}

TEST(CudaCutoff, SlabsMatchTheWholeGrid) {
  DCSGRID_REQUIRE_GPU();
  CutoffOptions cutoff;
  cutoff.bin_capacity = 8;  // overflow in every slab
  Problem s(atoms_around(default_grid(), 12.0, 6000, 8), cutoff);
  const auto ref = reference_cutoff(s.request, all_planes(s.grid));
  const std::size_t plane = s.grid.plane_size();
  for (const Slab slab : {Slab{0, 13}, Slab{13, 14}, Slab{14, 35}}) {
    const auto gpu = gpu_cutoff(s.request, slab);
    const std::vector<double> part(ref.begin() + plane * slab.z_begin, ref.begin() + plane * slab.z_end);
    EXPECT_LT(test::relative_l2(gpu, part), 1e-5) << "planes " << slab.z_begin << ".." << slab.z_end;
  }
}

// What MPI ranks rely on (binning.hpp): with the default (dynamic) bins, a slab's values equal the
// whole grid's bit for bit wherever the slab starts (on a brick boundary or not), for the shifted
// and MSM short-range forms and for a grid spacing whose bins hold two bricks along z, and
// whichever atoms beyond the slab's reach are left out.
TEST(CudaCutoff, SlabsAndAtomsBeyondReachLeaveTheValuesBitIdentical) {
  DCSGRID_REQUIRE_GPU();
  for (const double spacing : {0.5, 0.25}) {
    for (const CutoffForm form : {CutoffForm::shifted, CutoffForm::msm_short}) {
      CutoffOptions cutoff;
      cutoff.form = form;
      cutoff.radius = 8.0;
      const GridSpec grid = grid_from_origin({-6.2, 3.1, -20.4}, {45, 38, 70}, spacing);
      Problem s(atoms_around(grid, 8.0, 12000, 21), cutoff);
      s.set_grid(grid);
      const auto whole = gpu_cutoff(s.request, all_planes(grid));
      const std::size_t plane = grid.plane_size();
      for (const Slab slab : {Slab{0, 13}, Slab{13, 14}, Slab{14, 40}, Slab{40, 70}, Slab{16, 32}}) {
        SCOPED_TRACE("spacing " + std::to_string(spacing) + ", form " + std::to_string(int(form)) +
                     ", planes " + std::to_string(slab.z_begin) + ".." + std::to_string(slab.z_end));
        // The atoms within reach of the slab's planes in z, in their order (a rank receives
        // more: its bins' reach).
        const double lo = grid.position(0, 0, slab.z_begin)[2] - cutoff.radius - 0.5;
        const double hi = grid.position(0, 0, slab.z_end - 1)[2] + cutoff.radius + 0.5;
        AtomSet near;
        for (std::size_t a = 0; a < s.atoms.size(); ++a)
          if (s.atoms.z[a] >= lo && s.atoms.z[a] <= hi)
            near.push_back(s.atoms.x[a], s.atoms.y[a], s.atoms.z[a], s.atoms.q[a]);
        ASSERT_LT(near.size(), s.atoms.size());
        PotentialRequest subset = s.request;
        subset.atoms = &near;
        for (const PotentialRequest* r : {&s.request, &subset}) {
          const auto part = gpu_cutoff(*r, slab);
          ASSERT_EQ(part.size(), plane * slab.planes());
          EXPECT_EQ(0, std::memcmp(part.data(), whole.data() + plane * slab.z_begin,
                                   part.size() * sizeof(float)))
              << (r == &subset ? "atoms near the slab" : "all atoms");
        }
      }
    }
  }
}

// The way the CUDA backend drives a method: several slabs enqueued ahead, finished in order.
TEST(CudaCutoff, DeviceMethodPipelinesSlabs) {
  DCSGRID_REQUIRE_GPU();
  CutoffOptions cutoff;
  cutoff.bin_capacity = 8;
  Problem s(atoms_around(default_grid(), 12.0, 6000, 9), cutoff);
  cuda::Stream stream;
  CudaCutoffMethod method(s.request, stream.get());
  const SlabLayout layout = method.layout();
  ASSERT_GE(layout.pitch_x, s.grid.nx());
  ASSERT_GE(layout.rows_per_plane, s.grid.ny());
  const std::vector<Slab> slabs{{0, 12}, {12, 24}, {24, 35}};
  std::vector<cuda::DeviceBuffer<float>> device;
  for (const Slab& slab : slabs) {
    device.emplace_back(std::size_t(layout.pitch_x) * layout.rows_per_plane * slab.planes());
    method.enqueue(slab, device.back().data(), stream.get());
  }
  stream.synchronize();
  const std::size_t nx = s.grid.nx(), ny = s.grid.ny();
  std::vector<float> out(s.grid.point_count());
  for (std::size_t n = 0; n < slabs.size(); ++n) {
    float* host = out.data() + s.grid.plane_size() * slabs[n].z_begin;
    for (std::int64_t k = 0; k < slabs[n].planes(); ++k)
      DCSGRID_CUDA_CHECK(cudaMemcpy2D(host + k * nx * ny, nx * sizeof(float),
                                      device[n].data() + k * layout.pitch_x * layout.rows_per_plane,
                                      layout.pitch_x * sizeof(float), nx * sizeof(float), ny,
                                      cudaMemcpyDeviceToHost));
    method.finish_on_host(slabs[n], host);
  }
  EXPECT_LT(test::relative_l2(out, reference_cutoff(s.request, all_planes(s.grid))), 1e-5);
  const CutoffRunStats& stats = method.stats();
  EXPECT_EQ(stats.slabs, 3u);
  EXPECT_EQ(stats.bin_capacity, 8);
  EXPECT_GT(stats.atoms_overflow, 0u);
  EXPECT_GT(stats.binning_seconds, 0.0);
  EXPECT_GE(stats.overlap(), 0.0);
  EXPECT_LE(stats.overlap(), 1.0);
  EXPECT_THROW(method.finish_on_host(slabs[0], out.data()), Error);  // nothing pending
}

TEST(CudaCutoff, RejectsOtherMethods) {
  DCSGRID_REQUIRE_GPU();
  Problem s(test::random_atoms(10, Box{{0, 0, 0}, {5, 5, 5}}, 12));
  s.request.method = Method::direct;
  cuda::Stream stream;
  EXPECT_THROW(CudaCutoffMethod(s.request, stream.get()), Error);
}

}  // namespace
}  // namespace dcsgrid::engine
