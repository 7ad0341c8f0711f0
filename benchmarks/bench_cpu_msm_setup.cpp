// MSM's set-up on the CPU, stage by stage (MsmLongRange: plan, anterpolation, restriction, the
// levels' convolutions, the top level, prolongation, output weights), against the method's compute
// (the short-range cutoff sum plus the interpolation onto the grid), as `dcsgrid --method msm
// --device cpu` runs them (the CPU backend's set-up and compute). On achbp (APBS's example, 16,090
// atoms, when installed) or the largest structure in data/, and a water box; 0.5 Å grid, the CLI's
// 10 Å padding, default MSM options. Baseline in the same run: each level convolved by the dense
// stencil (the code path before the FFT convolution), and the difference of the two maps.
// Target (issue 32): set-up ≤ compute.
//
//   bench_cpu_msm_setup [--quick]
#include <omp.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cpu_bench_inputs.hpp"
#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/msm.hpp"
#include "report.hpp"

using namespace dcsgrid;

namespace {


// The CPU backend's msm run: its set-up and compute seconds.
engine::RunStats backend_run(const AtomSet& atoms, const GridSpec& grid) {
  engine::PotentialRequest request;
  request.atoms = &atoms;
  request.grid = grid;
  request.method = engine::Method::msm;
  const auto backend = engine::make_cpu_backend();
  return backend->run(request, [](engine::Slab, const float*) {}, [](double) {});
}

// MsmLongRange's set-up with the given convolutions: the best stage times of the repeats, and the
// long-range part on the whole grid (float, as the method writes it).
struct Setup {
  engine::MsmSetupTimes times;
  std::string level0;
  std::size_t levels = 0;
  std::vector<float> map;
};

Setup time_setup(const AtomSet& atoms, const GridSpec& grid, float scale, engine::MsmConvolution how, int repeats) {
  Setup out;
  auto& b = out.times;
  b.plan = b.anterpolation = b.restriction = b.stencils = b.top = b.prolongation = b.weights = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const engine::MsmLongRange msm(atoms, grid, scale, engine::MsmOptions{}, how);
    const engine::MsmSetupTimes& t = msm.setup_times();
    for (auto field : {&engine::MsmSetupTimes::plan, &engine::MsmSetupTimes::anterpolation,
                       &engine::MsmSetupTimes::restriction, &engine::MsmSetupTimes::stencils,
                       &engine::MsmSetupTimes::top, &engine::MsmSetupTimes::prolongation,
                       &engine::MsmSetupTimes::weights})
      b.*field = std::min(b.*field, t.*field);
    const auto& n = msm.plan().levels[0].n;
    out.level0 = std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]);
    out.levels = msm.plan().levels.size();
    if (r + 1 == repeats) {
      out.map.assign(grid.point_count(), 0.0f);
      msm.add_to({0, grid.nz()}, out.map.data());
    }
  }
  return out;
}

// How far the map b is from a: points whose floats differ, the largest difference relative to
// a's largest |value|, and the relative L2 difference.
struct MapDifference {
  std::size_t differ = 0;
  double max_relative = 0, relative_l2 = 0;
};

MapDifference difference(const std::vector<float>& a, const std::vector<float>& b) {
  MapDifference d;
  double most = 0, diff2 = 0, norm2 = 0, max_diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double e = double(b[i]) - double(a[i]);
    d.differ += a[i] != b[i];
    max_diff = std::max(max_diff, std::abs(e));
    most = std::max(most, std::abs(double(a[i])));
    diff2 += e * e;
    norm2 += double(a[i]) * a[i];
  }
  d.max_relative = most > 0 ? max_diff / most : 0;
  d.relative_l2 = norm2 > 0 ? std::sqrt(diff2 / norm2) : 0;
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int repeats = quick ? 1 : 3;
  const std::vector<bench::Input> inputs = bench::achbp_and_water_inputs(quick ? 20000 : 100000);
  const PairKernel kernel = make_pair_kernel(Physics{});
  bench::Report report("bench_cpu_msm_setup",
                       {"input", "atoms", "level 0", "levels", "convolution", "plan s", "anterp. s", "restrict s",
                        "stencils s", "top s", "prolong s", "weights s", "set-up s", "run set-up s",
                        "run compute s", "floats differing", "max rel. diff", "rel. L2 diff"});
  report.set_context("cpu", bench::cpu_description());
  report.set_context("threads", omp_get_max_threads());
  report.set_context("grid", "0.5 Å, 10 Å padding; MSM defaults (a 10 Å, h 1.5 Å, order 6)");
  report.set_context("note", "stage seconds: MsmLongRange's set-up, best of the repeats, with the levels "
                             "convolved by dense sums (the code before the FFTs, the baseline) or as "
                             "chosen (automatic: FFTs where they are less work); run set-up / compute: "
                             "the CPU backend's msm run (set-up = the long-range grids; compute = short-"
                             "range cutoff sum + interpolation); target: set-up <= compute; the last "
                             "columns compare the long-range map with the dense one's");
  for (const bench::Input& in : inputs) {
    const GridSpec grid = grid_around(bounding_box(in.atoms), 0.5, 10.0);
    std::cout << in.name << ": " << in.atoms.size() << " atoms, grid " << grid.describe() << "\n";
    engine::RunStats run;
    run.setup_seconds = run.compute_seconds = 1e300;
    for (int r = 0; r < repeats; ++r) {
      const engine::RunStats s = backend_run(in.atoms, grid);
      run.setup_seconds = std::min(run.setup_seconds, s.setup_seconds);
      run.compute_seconds = std::min(run.compute_seconds, s.compute_seconds);
    }
    const Setup dense = time_setup(in.atoms, grid, kernel.scale, engine::MsmConvolution::dense, repeats);
    const Setup chosen = time_setup(in.atoms, grid, kernel.scale, engine::MsmConvolution::automatic, repeats);
    for (const Setup* s : {&dense, &chosen}) {
      const auto& t = s->times;
      const MapDifference d = difference(dense.map, s->map);
      report.add_row({in.name, in.atoms.size(), s->level0, s->levels, s == &dense ? "dense" : "automatic",
                      t.plan, t.anterpolation, t.restriction, t.stencils, t.top, t.prolongation, t.weights,
                      t.total(), s == &dense ? nlohmann::json() : nlohmann::json(run.setup_seconds),
                      run.compute_seconds, d.differ, d.max_relative, d.relative_l2});
    }
  }
  report.finish();
}
