// The smooth map (--smooth 0.25, PMEpot's map: the reciprocal part of Gaussian charges) on the CPU,
// a frame at a time as batch makes it, stage by stage: the 100,200-atom TIP3P water box in
// its cubic cell and its 1 Å grid: PMEpot's setting (a 1 Å mesh, B-spline order 4), our default
// order 6 on that mesh, and coarser meshes of higher order, each row with its error.
// Issue 30's target: at least 2× the frames/s per core of VMD's PMEpot (23.4 ms a frame on one
// core of the 2-core CI machine for this box and grid, its own C code), i.e. ≤ 11.7 ms a frame on
// one thread. With --pmepot DRIVER (a build of PMEpot's C code that prints "ms_per_frame X" for
// a PQR, a cubic edge and a mesh size, 0 for PMEpot's own default grid; not part of the project),
// PMEpot is measured in the same run on the same atoms, on the grid it chooses by default (its
// resolution 1 Å: 108³ for this box; its FFT takes no odd sizes), once, shown beside every
// one-thread row.
//
// Stages (best of the frames after a warm-up): plan (the FFT plan and influence function, made
// once a cell: the backend keeps it for the next frame of the same cell), spread, forward FFT,
// solve, inverse FFT, grid (interpolation onto the output grid); frame ms: a frame as the CPU
// backend makes it in a batch of one box (set_atoms and the grid; the plan kept), best of the
// frames. Threads: 1 and all of the machine's.
//
//   bench_cpu_pme [--quick] [--frames N] [--case ORDER,SPACING] [--pmepot DRIVER]
// (--case: that one order and mesh spacing instead of the table's six; --frames: frames timed a row)
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/engine/periodic.hpp"
#include "report.hpp"

using namespace dcsgrid;

namespace {

// The water box of bench_pme.cu: the smallest cube of water lattice sites holding the molecules.
struct Case {
  AtomSet atoms;
  UnitCell cell;
  GridSpec grid;
  double edge = 0;
};
Case water_case(std::size_t atoms) {
  Case c;
  c.atoms = water_box_atoms(atoms, 2026);
  const double molecules = double(c.atoms.size() / 3);
  c.edge = std::ceil(std::cbrt(molecules) - 1e-9) * std::cbrt(1.0 / kWaterDensity);
  c.cell = make_cell({c.edge, c.edge, c.edge});
  const std::int64_t n = std::int64_t(std::floor(c.edge));
  c.grid = grid_from_origin({0, 0, 0}, {n, n, n}, 1.0);
  return c;
}

struct Timing {
  engine::PmeStageTimes stages;
  double grid = 0, frame = 0;
  std::vector<float> map;  // the last frame's
};

// A batch's frames: the plan made once (the backend keeps it between frames of one cell), then
// each frame spreads, solves and interpolates onto the grid.
Timing time_frames(const Case& c, const engine::PmeParameters& parameters, double scale, int frames) {
  Timing best;
  best.stages = {1e300, 1e300, 1e300, 1e300, 1e300};
  best.grid = best.frame = 1e300;
  engine::PmeReciprocal pme(c.cell, parameters, scale, false);
  best.stages.plan = pme.stage_times().plan;
  std::vector<float> out(c.grid.point_count());
  for (int f = 0; f <= frames; ++f) {  // frame 0 warms up
    const auto start = clock_type::now();
    pme.set_atoms(c.atoms);
    const auto grid_start = clock_type::now();
    std::fill(out.begin(), out.end(), 0.0f);
    pme.add_to(c.grid, {0, c.grid.nz()}, out.data());
    const double grid = seconds_since(grid_start), frame = seconds_since(start);
    if (f == 0) continue;
    best.map = out;
    const engine::PmeStageTimes& t = pme.stage_times();
    best.stages.spread = std::min(best.stages.spread, t.spread);
    best.stages.forward = std::min(best.stages.forward, t.forward);
    best.stages.solve = std::min(best.stages.solve, t.solve);
    best.stages.inverse = std::min(best.stages.inverse, t.inverse);
    best.grid = std::min(best.grid, grid);
    best.frame = std::min(best.frame, frame);
  }
  return best;
}

// PMEpot's milliseconds a frame from its driver, on the box written as PQR; 0 when it fails.
double pmepot_ms(const std::string& driver, const Case& c) {
  const std::filesystem::path pqr = std::filesystem::temp_directory_path() / "bench_cpu_pme_box.pqr";
  {
    std::ofstream f(pqr);
    for (std::size_t i = 0; i < c.atoms.size(); ++i) {
      char line[96];
      std::snprintf(line, sizeof line, "ATOM  %5zu  X   WAT  %4zu    %8.3f%8.3f%8.3f %7.4f %6.4f\n",
                    i % 100000, i / 3 % 10000, c.atoms.x[i], c.atoms.y[i], c.atoms.z[i], c.atoms.q[i], 1.0);
      f << line;
    }
  }
  const std::string command = "OMP_NUM_THREADS=1 '" + driver + "' " + pqr.string() + " " + std::to_string(c.edge) + " 0";
  double ms = 0;
  if (FILE* p = popen(command.c_str(), "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, p))
      if (std::sscanf(line, "ms_per_frame %lf", &ms) == 1) break;
    pclose(p);
  }
  std::filesystem::remove(pqr);
  return ms;
}

// ‖map − reference‖ / ‖reference‖.
double relative_error(const std::vector<float>& map, const std::vector<float>& reference) {
  analysis::ErrorSums sums;
  for (std::size_t i = 0; i < map.size(); ++i) sums.add(reference[i], double(map[i]) - reference[i]);
  return sums.summary().relative_l2;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int frames = 0;
  std::string pmepot;
  // PMEpot's order and mesh, our default order on that mesh, and coarser meshes of higher order.
  std::vector<std::pair<int, double>> cases{{4, 1.0}, {6, 1.0}, {5, 1.5}, {6, 1.75}, {6, 1.5}, {7, 1.75}};
  for (int i = 1; i < argc; ++i) {
    int order = 0;
    double spacing = 0;
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--pmepot") == 0 && i + 1 < argc) pmepot = argv[++i];
    else if (std::strcmp(argv[i], "--frames") == 0 && i + 1 < argc && (frames = std::atoi(argv[++i])) > 0) continue;
    else if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc &&
             std::sscanf(argv[++i], "%d,%lf", &order, &spacing) == 2 && spacing > 0)
      cases = {{order, spacing}};
    else {
      std::cerr << "usage: bench_cpu_pme [--quick] [--frames N] [--case ORDER,SPACING] [--pmepot DRIVER]\n";
      return 2;
    }
  }
  if (frames == 0) frames = quick ? 2 : 5;
  const Case c = water_case(100200);
  const double scale = make_pair_kernel(Physics{}).scale_d;
  const int all_threads = omp_get_max_threads();
  // The accuracy reference: order 10 on a 0.75 Å mesh, in double (in the tests' cells order 10 on a
  // coarser 1 Å mesh is within 3e-8 of the float64 sum, below every row's error here by two orders).
  engine::PeriodicOptions fine;
  fine.smooth_beta = 0.25;
  fine.pme_order = 10;
  fine.mesh_spacing = 0.75;
  engine::PmeParameters reference_parameters = engine::periodic_split<engine::PmeReciprocal>(c.cell, fine).parameters;
  reference_parameters.real_cutoff = 1;  // PmeReciprocal's double path (the smooth map's own is float)
  const std::vector<float> reference = time_frames(c, reference_parameters, scale, 1).map;
  bench::Report report("bench_cpu_pme", {"map", "order", "mesh", "threads", "plan ms", "spread ms", "forward ms",
                                         "solve ms", "inverse ms", "grid ms", "frame ms", "target ms",
                                         "PMEpot ms", "error"});
  report.set_context("cpu", bench::cpu_description());
  report.set_context("atoms", c.atoms.size());
  report.set_context("cell", c.edge);
  report.set_context("grid", c.grid.describe());
  report.set_context("target", "issue 30: one thread at least 2x PMEpot's frames/s per core; PMEpot 23.4 ms a "
                               "frame on one core of the CI machine (issue's figure), so <= 11.7 ms");
  report.set_context("error", "relative L2 against order 10 on a 0.75 A mesh; PMEpot's setting is order 4 on "
                              "a 1 A mesh (the first row), coarser meshes of higher order reach its error "
                              "with fewer mesh points");
  std::vector<int> thread_counts{1};
  if (all_threads > 1) thread_counts.push_back(all_threads);
  // PMEpot's frame, once, beside every one-thread row.
  const double pmepot_frame_ms = pmepot.empty() ? 0 : pmepot_ms(pmepot, c);
  for (const auto [order, spacing] : cases) {
    engine::PeriodicOptions options;
    options.smooth_beta = 0.25;
    options.pme_order = order;
    options.mesh_spacing = spacing;
    const auto split = engine::periodic_split<engine::PmeReciprocal>(c.cell, options);
    const auto& mesh = split.parameters.mesh;
    const std::string mesh_name =
        std::to_string(mesh[0]) + "x" + std::to_string(mesh[1]) + "x" + std::to_string(mesh[2]);
    for (const int threads : thread_counts) {
      omp_set_num_threads(threads);
      const Timing t = time_frames(c, split.parameters, scale, frames);
      const double peer = threads == 1 ? pmepot_frame_ms : 0;
      report.add_row({"smooth, beta 0.25", order, mesh_name, threads, 1e3 * t.stages.plan, 1e3 * t.stages.spread,
                      1e3 * t.stages.forward, 1e3 * t.stages.solve, 1e3 * t.stages.inverse, 1e3 * t.grid,
                      1e3 * t.frame, threads == 1 ? nlohmann::json(11.7) : nlohmann::json(),
                      peer > 0 ? nlohmann::json(peer) : nlohmann::json(), relative_error(t.map, reference)});
    }
  }
  report.finish();
}
