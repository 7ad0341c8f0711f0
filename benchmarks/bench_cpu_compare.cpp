// Map comparison on the CPU (analysis/compare.hpp): `dcsgrid compare` with and without --atoms,
// and the distance shells alone (atom_shells), on achbp (APBS's example, 16,090 atoms, when
// installed) or the largest structure in data/, and a water box, at 0.5 Å with the CLI's 10 Å
// padding. The maps are the cutoff engine's at two radii (the comparison's cost does not depend
// on the values). Baseline in the same run: a float64 brute-force nearest-atom search at sampled
// points, every sample's shell checked against atom_shells', its time scaled to the whole grid.
// Target (issue 32): compare with --atoms at most 2x compare without.
//
//   bench_cpu_compare [--quick]
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "cpu_bench_inputs.hpp"
#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "report.hpp"

using namespace dcsgrid;

namespace {


// atom_shells' rule by brute force at sampled points: the points that disagree, and the seconds.
struct BruteForce {
  std::size_t samples = 0, mismatches = 0;
  double seconds = 0;
};

BruteForce brute_force_check(const AtomSet& atoms, const analysis::AtomShells& shells, std::size_t samples) {
  const GridSpec& grid = shells.grid;
  const auto& edges = shells.edges;
  std::mt19937_64 rng(7);
  std::vector<std::size_t> points(samples);
  for (auto& n : points) n = rng() % grid.point_count();
  BruteForce out;
  out.samples = samples;
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t mismatches = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : mismatches)
  for (std::size_t s = 0; s < samples; ++s) {
    const auto ijk = grid.ijk(points[s]);
    const auto p = grid.position(ijk[0], ijk[1], ijk[2]);
    double best = INFINITY;
    for (std::size_t a = 0; a < atoms.size(); ++a) {
      const double dx = p[0] - atoms.x[a], dy = p[1] - atoms.y[a], dz = p[2] - atoms.z[a];
      best = std::min(best, std::fma(dz, dz, std::fma(dy, dy, dx * dx)));
    }
    const double d = best < edges.back() * edges.back() ? double(float(std::sqrt(best))) : INFINITY;
    const auto shell = std::upper_bound(edges.begin(), edges.end(), d) - edges.begin() - 1;
    mismatches += shell != shells.shell[points[s]];
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.mismatches = mismatches;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int repeats = quick ? 1 : 3;
  const std::vector<bench::Input> inputs = bench::achbp_and_water_inputs(quick ? 20000 : 100000);
  const PairKernel kernel = make_pair_kernel(Physics{});
  bench::Report report("bench_cpu_compare",
                       {"input", "atoms", "points", "compare s", "shells s", "compare --atoms s",
                        "ratio", "brute force s (est.)", "samples", "mismatches"});
  report.set_context("cpu", bench::cpu_description());
  report.set_context("threads", omp_get_max_threads());
  report.set_context("grid", "0.5 Å, 10 Å padding");
  report.set_context("note", "compare s: compare_maps without atoms; compare --atoms s: with them "
                             "(shells computed inside); ratio: the two (target <= 2); brute force: "
                             "float64 nearest-atom search at the sampled points, scaled to every "
                             "point; mismatches: sampled points whose shell differs from atom_shells'");
  for (const bench::Input& in : inputs) {
    const GridSpec grid = grid_around(bounding_box(in.atoms), 0.5, 10.0);
    std::cout << in.name << ": " << in.atoms.size() << " atoms, grid " << grid.describe() << "\n";
    std::vector<float> reference(grid.point_count()), test(grid.point_count());
    engine::CutoffOptions cutoff;
    cutoff.radius = 12;
    engine::cutoff_sum_cpu(in.atoms, grid, kernel, cutoff, {0, grid.nz()}, reference.data());
    cutoff.radius = 8;
    engine::cutoff_sum_cpu(in.atoms, grid, kernel, cutoff, {0, grid.nz()}, test.data());
    const double plain_s = bench::best_seconds(repeats, [&] { analysis::compare_maps(grid, reference, test); });
    const double atoms_s =
        bench::best_seconds(repeats, [&] { analysis::compare_maps(grid, reference, test, &in.atoms); });
    analysis::AtomShells shells;
    const double edges_s = bench::best_seconds(repeats, [&] {
      shells = analysis::atom_shells(in.atoms, grid, analysis::CompareOptions{}.shell_edges);
    });
    const BruteForce brute = brute_force_check(in.atoms, shells, quick ? 2000 : 20000);
    report.add_row({in.name, in.atoms.size(), grid.point_count(), plain_s, edges_s, atoms_s, atoms_s / plain_s,
                    brute.seconds * double(grid.point_count()) / double(brute.samples), brute.samples,
                    brute.mismatches});
  }
  report.finish();
}
