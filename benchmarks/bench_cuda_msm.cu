// Multilevel summation's long-range part on the GPU (engine/msm_cuda.hpp): time to build the
// hierarchy (anterpolation, levels, prolongation) and to interpolate it onto a whole 0.5 Å grid
// slab by slab, on TIP3P water boxes of the issue's sizes (7.4·10^5 and 4·10^6 atoms) and on the
// largest structure in data/, for orders 4, 6 and 10; with the CPU long-range part's time on the
// smaller inputs and the GPU–CPU difference (relative L2) where both ran.
//
//   bench_cuda_msm [--quick]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cpu_bench_inputs.hpp"
#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/engine/msm.hpp"
#include "dcsgrid/engine/msm_cuda.hpp"
#include "report.hpp"

using namespace dcsgrid;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Interpolates every plane in slabs of `planes` into one device buffer (not copied back);
// returns the device seconds (CUDA events) and, when keep is set, the whole grid on the host.
double interpolate_grid(const engine::MsmLongRangeCuda& msm, const GridSpec& grid, std::int64_t planes,
                        std::vector<float>* keep) {
  const engine::SlabLayout layout{grid.nx(), grid.ny()};
  cuda::DeviceBuffer<float> out(grid.plane_size() * planes);
  cudaEvent_t start, stop;
  DCSGRID_CUDA_CHECK(cudaEventCreate(&start));
  DCSGRID_CUDA_CHECK(cudaEventCreate(&stop));
  float total_ms = 0;
  for (std::int64_t z = 0; z < grid.nz(); z += planes) {
    const engine::Slab slab{z, std::min(grid.nz(), z + planes)};
    DCSGRID_CUDA_CHECK(cudaMemsetAsync(out.data(), 0, out.bytes(), nullptr));
    DCSGRID_CUDA_CHECK(cudaEventRecord(start, nullptr));
    msm.add_to(slab, out.data(), layout, nullptr);
    DCSGRID_CUDA_CHECK(cudaEventRecord(stop, nullptr));
    DCSGRID_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    DCSGRID_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    total_ms += ms;
    if (keep)
      DCSGRID_CUDA_CHECK(cudaMemcpy(keep->data() + grid.plane_size() * z, out.data(),
                                    grid.plane_size() * slab.planes() * sizeof(float), cudaMemcpyDeviceToHost));
  }
  DCSGRID_CUDA_CHECK(cudaEventDestroy(start));
  DCSGRID_CUDA_CHECK(cudaEventDestroy(stop));
  return total_ms * 1e-3;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::vector<bench::Input> inputs = bench::cpu_bench_inputs(quick ? 20000 : 100000);
  inputs.resize(1);  // the structure; water boxes of the issue's sizes follow
  for (std::size_t n : quick ? std::vector<std::size_t>{100000} : std::vector<std::size_t>{740000, 4000000})
    inputs.push_back({"water box " + std::to_string(n), water_box_atoms(n, 2026)});
  const float scale = make_pair_kernel(Physics{}).scale;

  bench::Report report("bench_cuda_msm", {"input", "atoms", "order", "points", "levels", "level0 points",
                                          "build s", "interpolate s", "long s", "cpu long s",
                                          "gpu vs cpu rel L2"});
  report.set_context("device", bench::cpu_description());
  report.set_context("grid", "0.5 Å, 5 Å padding; slabs of 32 planes");
  report.set_context("msm", "cutoff 10 Å, spacing 1.5 Å (MsmOptions defaults)");
  report.set_context("note", "build s: constructor wall time (uploads, binning on the host, kernels, "
                             "synchronised); interpolate s: add_to device time over all slabs; cpu "
                             "long s: MsmLongRange on this host, inputs under 10^6 atoms only");

  for (const bench::Input& in : inputs) {
    const GridSpec grid = grid_around(bounding_box(in.atoms), 0.5, 5.0);
    std::cout << in.name << ": " << in.atoms.size() << " atoms, grid " << grid.describe() << std::endl;
    for (int order : {4, 6, 10}) {
      engine::MsmOptions options;
      options.order = order;
      { engine::MsmLongRangeCuda warm(in.atoms, grid, scale, options, nullptr); }
      auto t0 = std::chrono::steady_clock::now();
      const engine::MsmLongRangeCuda gpu(in.atoms, grid, scale, options, nullptr);
      const double build_s = seconds_since(t0);
      const bool compare = in.atoms.size() < 1000000;
      std::vector<float> gpu_grid(compare ? grid.point_count() : 0);
      const double interp_s = interpolate_grid(gpu, grid, 32, compare ? &gpu_grid : nullptr);
      double cpu_s = 0, difference = 0;
      if (compare) {
        std::vector<float> cpu_grid(grid.point_count(), 0.0f);
        t0 = std::chrono::steady_clock::now();
        const engine::MsmLongRange cpu(in.atoms, grid, scale, options);
        cpu.add_to({0, grid.nz()}, cpu_grid.data());
        cpu_s = seconds_since(t0);
        difference = analysis::compare_maps(grid, cpu_grid, gpu_grid).overall.relative_l2;
      }
      report.add_row({in.name, in.atoms.size(), order, double(grid.point_count()), gpu.plan().levels.size(),
                      gpu.plan().levels[0].points(), build_s, interp_s, build_s + interp_s,
                      compare ? nlohmann::json(cpu_s) : nlohmann::json("-"),
                      compare ? nlohmann::json(difference) : nlohmann::json("-")});
    }
  }
  report.finish();
}
