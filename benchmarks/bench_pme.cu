// The periodic methods on the GPU (engine/pme_cuda.hpp, periodic_cuda.hpp), per frame, against the
// CPU's PmeReciprocal measured in the same run: the issue's 100,200-atom TIP3P water box on a 1 Å
// grid (100³ points) and 4·10^6 atoms on a 0.5 Å grid (3.2·10^8 points); and the 100,200 atoms in
// a rhombic dodecahedron (a triclinic cell of angles 60°, 60°, 90°, the cube's edge), on the cell's
// own skewed lattice (--grid cell: the real part by the cell-list kernel) and, the baseline of the
// same run, on the cell's bounding box at the same spacing (the brick kernel).
//
// Rows: the smooth map (β 0.25, the reciprocal part alone: PMEpot's map) at orders 4 and 6, and
// the full PME potential at the defaults (order 6, 1 Å mesh, 10 Å real cutoff, tolerance 1e-5).
// GPU times are device times (CUDA events) after two warm-up frames, the median of the frames:
//   reciprocal ms: set_atoms (upload, keys, sort, spreading, FFTs, influence function);
//   grid ms: the whole output grid in slabs: the real part (the cutoff method: binning and kernel)
//            and the interpolation of the mesh potential (smooth map: interpolation only);
//   compute ms: the two; frame wall ms: a whole frame as the cuda backend makes it (the method
//            built: images on the host, uploads, set_atoms; the grid enqueued; synchronised),
//            without the copy back and the sink.
// cpu ms: PmeReciprocal (set_atoms and add_to over the grid, every core), the smooth map only; the
// full potential on the CPU is timed once (cpu backend, images and real part included) on the
// smaller box. rel L2: GPU map against the CPU's.
// The exact sum (ewald row, smaller boxes): the device's S(k) and sum over k vectors
// (EwaldReciprocalCuda) with the real part; its frame wall holds S(k) (in the method's set-up), its
// grid ms the real part and the sum at the points; cpu ms is the cpu backend's ewald on the first
// 4 planes alone (the whole grid would take minutes), compared with the GPU's same planes. The
// ewald row's "pme vs ewald" column is the full pme map's error against the GPU's exact map.
//
//   bench_pme [--quick]   (--quick: the 100,200-atom box only)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/periodic.hpp"
#include "dcsgrid/engine/pme_cuda.hpp"
#include "report.hpp"

using namespace dcsgrid;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Milliseconds of device time that enqueue(stream) takes, by CUDA events.
template <typename F>
double device_ms(cudaStream_t stream, F&& enqueue) {
  cuda::Event start, stop;
  start.record(stream);
  enqueue();
  stop.record(stream);
  stop.synchronize();
  return stop.seconds_since(start) * 1e3;
}

// A water box at the liquid density and its cubic cell: water_box_atoms fills the smallest cube
// of lattice sites (spacing (1/ρ)^(1/3)) that holds the molecules.
struct Case {
  std::string name;
  AtomSet atoms;
  UnitCell cell;
  GridSpec grid;
};
Case water_case(std::size_t atoms, double spacing) {
  Case c;
  c.atoms = water_box_atoms(atoms, 2026);
  const double molecules = double(c.atoms.size() / 3);
  const double edge = std::ceil(std::cbrt(molecules) - 1e-9) * std::cbrt(1.0 / kWaterDensity);
  c.cell = make_cell({edge, edge, edge});
  const std::int64_t n = std::int64_t(std::floor(edge / spacing));
  c.grid = grid_from_origin({0, 0, 0}, {n, n, n}, spacing);
  c.name = "water " + std::to_string(c.atoms.size());
  return c;
}
// The same atoms in a rhombic dodecahedron of the cube's edge, on its lattice or its bounding box.
Case dodecahedron_case(std::size_t atoms, double spacing, bool on_cell) {
  Case c = water_case(atoms, spacing);
  c.cell = make_cell(c.cell.lengths, {60, 60, 90});
  c.grid = on_cell ? grid_on_cell(c.cell, spacing) : grid_over_cell(c.cell, spacing);
  c.name += on_cell ? " dodecahedron, cell lattice" : " dodecahedron, bounding box";
  return c;
}

// The whole grid through one device method in slabs of `planes` (a multiple of 8) into one device
// buffer; the host map (x fastest) when keep is set.
double enqueue_grid(engine::DeviceMethod& method, const GridSpec& grid, std::int64_t planes,
                    cudaStream_t stream, std::vector<float>* keep) {
  const engine::SlabLayout layout = method.layout();
  cuda::DeviceBuffer<float> out(layout.plane_bytes() / sizeof(float) * std::size_t(planes));
  double ms = 0;
  for (std::int64_t z = 0; z < grid.nz(); z += planes) {
    const engine::Slab slab{z, std::min(grid.nz(), z + planes)};
    ms += device_ms(stream, [&] { method.enqueue(slab, out.data(), stream); });
    if (!keep) continue;
    cudaMemcpy3DParms copy{};
    copy.srcPtr = make_cudaPitchedPtr(out.data(), std::size_t(layout.pitch_x) * sizeof(float),
                                      std::size_t(grid.nx()), std::size_t(layout.rows_per_plane));
    copy.dstPtr = make_cudaPitchedPtr(keep->data() + grid.plane_size() * z, grid.nx() * sizeof(float),
                                      std::size_t(grid.nx()), std::size_t(grid.ny()));
    copy.extent = make_cudaExtent(grid.nx() * sizeof(float), std::size_t(grid.ny()), std::size_t(slab.planes()));
    copy.kind = cudaMemcpyDeviceToHost;
    DCSGRID_CUDA_CHECK(cudaMemcpy3DAsync(&copy, stream));
    DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return ms;
}

// The exact sum on the GPU (see the header): frames, then the first 4 planes against the CPU.
std::vector<nlohmann::json> ewald_row(const Case& c, const std::vector<float>& pme_map, cudaStream_t stream) {
  engine::PotentialRequest request;
  request.atoms = &c.atoms;
  request.grid = c.grid;
  request.method = engine::Method::ewald;
  request.cell = c.cell;
  std::vector<double> grid_ms, wall_ms;
  std::vector<float> gpu_map(c.grid.point_count());
  for (int f = 0; f < 4; ++f) {
    const auto t0 = Clock::now();
    auto method = engine::make_device_method(request, stream);
    const double g = enqueue_grid(*method, c.grid, c.grid.nz(), stream, f == 0 ? &gpu_map : nullptr);
    const double wall = ms_since(t0);
    if (f == 0) continue;  // warm-up (and the map kept)
    grid_ms.push_back(g);
    wall_ms.push_back(wall);
  }
  engine::PotentialRequest slab = request;
  slab.grid.dims[2] = 4;
  const auto cpu = engine::make_backend("cpu");
  const auto t0 = Clock::now();
  const std::vector<float> cpu_map = engine::compute_grid(*cpu, slab);
  const double cpu_ms = ms_since(t0);
  const std::vector<float> gpu_planes(gpu_map.begin(), gpu_map.begin() + std::ptrdiff_t(cpu_map.size()));
  const double difference = analysis::compare_maps(slab.grid, cpu_map, gpu_planes).overall.relative_l2;
  const double pme_error =
      pme_map.empty() ? NAN : analysis::compare_maps(c.grid, gpu_map, pme_map).overall.relative_l2;
  const auto p = engine::resolve_ewald(c.cell, request.periodic);
  return {c.name, double(c.grid.point_count()),
          "k ≤ " + std::to_string(p.kmax[0]) + "," + std::to_string(p.kmax[1]) + "," + std::to_string(p.kmax[2]),
          "ewald", "-", "-", median(grid_ms), "-", median(wall_ms), cpu_ms, "4 planes", difference, pme_error};
}

int run(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::vector<Case> cases{water_case(100200, 1.0), dodecahedron_case(100200, 1.0, true),
                          dodecahedron_case(100200, 1.0, false)};
  if (!quick) cases.push_back(water_case(4000000, 0.5));
  const Physics physics;
  const double scale = make_pair_kernel(physics).scale_d;
  cuda::Stream stream;

  bench::Report report("bench_pme", {"input", "grid points", "mesh", "map", "order", "reciprocal ms",
                                     "grid ms", "compute ms", "frame wall ms", "cpu ms", "cpu/gpu",
                                     "rel L2 vs cpu", "pme vs ewald"});
  report.set_context("device", cuda::device_label(0));
  report.set_context("host", bench::cpu_description());
  report.set_context("targets", "issue 30, one H100: full PME ≤ 5 ms a frame and the smooth map ≤ 1 ms "
                                "(100,200 atoms, 100³); full PME of 4·10^6 atoms at 0.5 Å < 1 s");
  report.set_context("note", "GPU: device time (CUDA events), median of the frames after 2 warm-up "
                             "frames; frame wall: method built (host images, uploads, set_atoms) and "
                             "the grid enqueued, no copy back; cpu: PmeReciprocal on every core of "
                             "this host (smooth rows), the cpu backend once (full row, smaller box)");
  for (const Case& c : cases) {
    const bool big = c.atoms.size() > 1000000;
    const int frames = big ? 3 : 10;
    std::cout << c.name << ": cell " << c.cell.describe() << ", grid " << c.grid.describe() << std::endl;
    struct RowSpec {
      std::string map;
      int order;
    };
    std::vector<float> pme_map;  // the full pme row's, for the ewald row
    std::vector<RowSpec> rows{{"smooth 0.25", 4}, {"smooth 0.25", 6}, {"full pme", 6}};
    if (!big) rows.push_back({"ewald", 0});
    for (const RowSpec& spec : rows) {
      if (spec.map == "ewald") {
        report.add_row(ewald_row(c, pme_map, stream.get()));
        continue;
      }
      const bool smooth = spec.map != "full pme";
      engine::PeriodicOptions options;
      options.pme_order = spec.order;
      if (smooth) options.smooth_beta = 0.25;
      engine::PotentialRequest request;
      request.atoms = &c.atoms;
      request.grid = c.grid;
      request.physics = physics;
      request.method = engine::Method::pme;
      request.cell = c.cell;
      request.periodic = options;
      const auto split = engine::periodic_split<engine::PmeReciprocal>(c.cell, options);
      const std::int64_t planes = big ? 64 : c.grid.nz();

      // Reciprocal part alone: one object, frame after frame.
      engine::PmeReciprocalCuda pme(c.cell, split.parameters, scale, split.background, stream.get());
      std::vector<double> reciprocal_ms, grid_ms, wall_ms;
      for (int f = 0; f < frames + 2; ++f) {
        const double r = device_ms(stream.get(), [&] { pme.set_atoms(c.atoms, stream.get()); });
        const auto t0 = Clock::now();
        auto method = engine::make_device_method(request, stream.get());
        const double g = enqueue_grid(*method, c.grid, planes, stream.get(), nullptr);
        const double wall = ms_since(t0);
        if (f < 2) continue;
        reciprocal_ms.push_back(r);
        grid_ms.push_back(g);
        wall_ms.push_back(wall);
      }
      // The map, once more, against the CPU.
      std::vector<float> gpu_map(big ? 0 : c.grid.point_count());
      double cpu_ms = 0, difference = 0;
      if (!big) {
        auto method = engine::make_device_method(request, stream.get());
        enqueue_grid(*method, c.grid, planes, stream.get(), &gpu_map);
        std::vector<float> cpu_map(c.grid.point_count(), 0.0f);
        if (smooth) {
          engine::PmeReciprocal cpu(c.cell, split.parameters, scale, false);
          cpu_ms = bench::best_seconds(3, [&] {
                     std::fill(cpu_map.begin(), cpu_map.end(), 0.0f);
                     cpu.set_atoms(c.atoms);
                     cpu.add_to(c.grid, {0, c.grid.nz()}, cpu_map.data());
                   }) * 1e3;
        } else {
          const auto cpu = engine::make_backend("cpu");
          const auto t0 = Clock::now();
          cpu_map = engine::compute_grid(*cpu, request);
          cpu_ms = ms_since(t0);
        }
        difference = analysis::compare_maps(c.grid, cpu_map, gpu_map).overall.relative_l2;
        if (!smooth) pme_map = gpu_map;
      }
      const auto& k = split.parameters.mesh;
      const double compute = median(reciprocal_ms) + median(grid_ms);
      report.add_row({c.name, double(c.grid.point_count()),
                      std::to_string(k[0]) + "x" + std::to_string(k[1]) + "x" + std::to_string(k[2]),
                      spec.map, spec.order, median(reciprocal_ms), median(grid_ms), compute,
                      median(wall_ms), big ? nlohmann::json("-") : nlohmann::json(cpu_ms),
                      big ? nlohmann::json("-") : nlohmann::json(cpu_ms / compute),
                      big ? nlohmann::json("-") : nlohmann::json(difference), "-"});
    }
  }
  report.finish();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_pme: %s\n", e.what());
    return 1;
  }
}
