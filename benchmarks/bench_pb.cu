// Poisson–Boltzmann (issue 31): solve_pb on the GPU against the same solve on every CPU thread and
// against APBS (when `apbs` is on PATH) on the same PQR, grid and settings, APBS's usual run
// (smol, spl2, mdh, pdie 2, 0.15 M), on one grid (mg-manual) and focused (mg-auto). Each row: the
// three wall times (ours: discretisation, solve and energy, no map written; APBS: its whole run
// without writing a map), the GPU's map against the CPU's, and both energies against APBS's. The
// host discretisation's share of the GPU time is timed alone.
//   bench_pb [--apbs-1tii] [--verbose]   (1TII's APBS runs take 10-60 s; off unless asked;
//   --verbose logs each grid's stages)
#include <chrono>
#include <cmath>
#include <functional>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/engine/pb.hpp"
#include "dcsgrid/engine/pb_cuda.hpp"
#include "dcsgrid/engine/pb_discretize.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "report.hpp"
#include "../tests/test_pb_apbs.hpp"
#include "../tests/test_pb_problems.hpp"

namespace {

using namespace dcsgrid;
using namespace dcsgrid::engine;

struct Case {
  std::string name;
  std::filesystem::path pqr;
  std::array<std::int64_t, 3> dims;
  double spacing;
  bool run_apbs;
};

// A PQR APBS reads whole: one whitespace-separated ATOM record per atom (APBS splits on white
// space and drops a record whose serial touches its keyword, as pdb2pqr writes HETATM past 9,999).
std::filesystem::path apbs_readable_pqr(const AtomSet& atoms, const std::filesystem::path& dir) {
  const auto path = dir / "input.pqr";
  std::ofstream out(path);
  for (std::size_t n = 0; n < atoms.size(); ++n)
    out << "ATOM " << n + 1 << " X RES " << n + 1 << ' ' << atoms.x[n] << ' ' << atoms.y[n] << ' ' << atoms.z[n]
        << ' ' << atoms.q[n] << ' ' << atoms.r[n] << '\n';
  return path;
}

GridSpec centred_grid(const AtomSet& atoms, const std::array<std::int64_t, 3>& dims, double h) {
  const auto centre = bounding_box(atoms).center();
  std::array<double, 3> origin;
  for (int d = 0; d < 3; ++d) origin[d] = centre[d] - 0.5 * h * double(dims[d] - 1);
  return grid_from_origin(origin, dims, h);
}

using test::relative_l2;

double seconds_of(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  bool apbs_1tii = false;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--apbs-1tii") apbs_1tii = true;
    else if (std::string(argv[i]) == "--verbose") bench::log_debug();
  const std::string data = DCSGRID_SOURCE_DIR "/data/";
  const auto dir = std::filesystem::temp_directory_path() / "dcsgrid-bench-pb";
  std::filesystem::create_directories(dir);
  const AtomSet fkbp = io::read_structure(data + "1d7h-min.pqr").atoms;
  const AtomSet tii = io::read_structure(data + "1tii_pdb2pqr_amber.pqr.gz").atoms;
  const std::vector<std::pair<const AtomSet*, Case>> cases = {
      {&fkbp, {"FKBP (1D7H)", data + "1d7h-min.pqr", {97, 97, 97}, 0.75, true}},
      {&fkbp, {"FKBP (1D7H)", data + "1d7h-min.pqr", {97, 65, 65}, 0.75, true}},
      {&tii, {"1TII", {}, {129, 129, 129}, 0.75, apbs_1tii}},
      {&tii, {"1TII", {}, {161, 161, 161}, 0.6, apbs_1tii}},
  };
  const bool have_apbs = test::have_apbs();
  bench::Report report("pb", {"input", "atoms", "grid", "apbs_mode", "grids", "cpu_s", "gpu_s", "host_discretise_s",
                              "apbs_s", "apbs_over_gpu", "cpu_over_gpu", "gpu_vs_cpu_l2", "energy_gpu_kJ",
                              "energy_apbs_kJ", "iterations"});
  report.set_context("machine", bench::cpu_description());
  report.set_context("cpu_threads", team_size());
  report.set_context("apbs", have_apbs ? "on PATH" : "absent: not timed");
  report.set_context("settings", "smol, spl2, mdh, pdie 2, sdie 78.54, 0.15 M 1:1 (ion radius 2), srad 1.4, 298.15 K");
  report.set_context("modes", "mg-manual: one grid (focus never); mg-auto: focusing as APBS (focus auto; APBS given "
                              "our coarse grid's lengths as cglen)");
  const double scale = kCoulomb * unit_factor(Unit::kT_per_e, kDefaultTemperature);
  for (const auto& [atoms, c] : cases)
    for (const PbFocus focus : {PbFocus::never, PbFocus::automatic}) {
      PbOptions options;
      options.ions = {{1, 0.15, 2.0}, {-1, 0.15, 2.0}};
      options.focus = focus;
      const GridSpec grid = centred_grid(*atoms, c.dims, c.spacing);
      PbResult gpu, cpu;
      solve_pb(*atoms, grid, options, scale, pb_solve_grid_cuda);  // warm-up: context and first allocations
      const double gpu_s =
          bench::best_seconds(3, [&] { gpu = solve_pb(*atoms, grid, options, scale, pb_solve_grid_cuda); });
      const double cpu_s = seconds_of([&] { cpu = solve_pb(*atoms, grid, options, scale); });
      double discretise_s = 0;
      for (const SolverLevel& level : gpu.levels)
        discretise_s += seconds_of([&] {
          pb_dielectric(*atoms, level.grid, options);
          pb_ion_accessibility(*atoms, level.grid, options);
          pb_source(*atoms, level.grid, options, scale);
          std::vector<double> faces(level.grid.point_count(), 0.0);
          pb_boundary(*atoms, level.grid, options, scale, faces);
        });
      const bool focused = gpu.levels.size() > 1;
      double apbs_s = 0, apbs_energy = 0;
      if (have_apbs && c.run_apbs) {
        const auto pqr = apbs_readable_pqr(*atoms, dir);
        std::array<double, 3> coarse;
        for (int d = 0; d < 3; ++d)
          coarse[d] = gpu.levels.front().grid.spacing[d] * double(gpu.levels.front().grid.dims[d] - 1);
        try {
          apbs_energy = test::run_apbs(pqr, grid, options, dir, &apbs_s, focused ? &coarse : nullptr, false).second;
        } catch (const Error& e) {  // a row without APBS rather than no table
          std::fprintf(stderr, "%s: %s\n", e.what(), test::read_apbs_text(dir / "apbs.out").substr(0, 1500).c_str());
          apbs_s = 0;
        }
      }
      report.add_row({c.name, atoms->size(), grid.describe(), focused ? "mg-auto" : "mg-manual", gpu.levels.size(),
                      cpu_s, gpu_s, discretise_s, apbs_s, apbs_s > 0 ? apbs_s / gpu_s : 0.0, cpu_s / gpu_s,
                      relative_l2(gpu.potential, cpu.potential), gpu.energy_kj_per_mol, apbs_energy, gpu.iterations});
    }
  report.finish();
  std::filesystem::remove_all(dir);
  return 0;
}
