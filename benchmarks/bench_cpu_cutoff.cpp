// CPU cutoff summation (cell columns): time for a whole 0.5 Å grid, pairs within rc per second,
// speed-up over the CPU direct engine and the cutoff's deviation from the direct potential; and
// the GPU engine's overflow case, a few scattered atoms added into a whole grid.
//
//   bench_cpu_cutoff [--quick]
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "cpu_bench_inputs.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "report.hpp"

using namespace dcsgrid;

namespace {

// Mean number of atoms within rc of a grid point, from a sample of points.
double mean_neighbours(const AtomSet& atoms, const GridSpec& grid, double rc, int samples) {
  std::mt19937_64 rng(1);
  std::size_t count = 0;
  for (int s = 0; s < samples; ++s) {
    const std::size_t n = rng() % grid.point_count();
    const auto ijk = grid.ijk(n);
    const auto p = grid.position(ijk[0], ijk[1], ijk[2]);
    for (std::size_t a = 0; a < atoms.size(); ++a) {
      const double dx = p[0] - atoms.x[a], dy = p[1] - atoms.y[a], dz = p[2] - atoms.z[a];
      count += dx * dx + dy * dy + dz * dz < rc * rc;
    }
  }
  return double(count) / samples;
}

double relative_l2(const std::vector<float>& a, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - ref[i]) * (double(a[i]) - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  return std::sqrt(num / den);
}

// Every stride-th atom: a sparse, scattered set like the GPU engine's overflow atoms.
AtomSet every_nth(const AtomSet& atoms, std::size_t stride) {
  AtomSet out;
  for (std::size_t a = 0; a < atoms.size(); a += stride)
    out.push_back(atoms.x[a], atoms.y[a], atoms.z[a], atoms.q[a]);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int repeats = quick ? 1 : 3;
  const int all_threads = omp_get_max_threads();
  const double rc = 12.0;
  const std::vector<bench::Input> inputs = bench::cpu_bench_inputs(quick ? 20000 : 100000);

  bench::Report report("bench_cpu_cutoff",
                       {"input", "atoms", "case", "form", "threads", "points", "seconds",
                        "pairs<rc/s/core", "x direct", "rel L2 vs direct"});
  report.set_context("cpu", bench::cpu_description());
  report.set_context("threads_all", all_threads);
  report.set_context("cutoff_radius", rc);
  report.set_context("grid", "0.5 Å, 5 Å padding");
  report.set_context("note", "pairs<rc: atom-point pairs closer than rc (sampled); x direct: "
                             "estimated time of the CPU direct engine on the same grid and "
                             "threads over this time; overflow: every 100th atom added into the "
                             "whole grid with cutoff_accumulate_cpu");

  std::vector<int> thread_counts{1};
  if (all_threads > 1) thread_counts.push_back(all_threads);
  const PairKernel kernel = make_pair_kernel(Physics{});

  for (const bench::Input& in : inputs) {
    const GridSpec grid = grid_around(bounding_box(in.atoms), 0.5, 5.0);
    const std::size_t n = in.atoms.size();
    const double points = double(grid.point_count());
    const double neighbours = mean_neighbours(in.atoms, grid, rc, 256);
    std::cout << in.name << ": " << n << " atoms, grid " << grid.describe() << ", "
              << neighbours << " atoms within " << rc << " Å of a point on average\n";

    // The direct engine's rate (all threads) on a few planes, and its potential there.
    const std::int64_t planes = std::max<std::int64_t>(1, std::int64_t(2e9 / (n * grid.plane_size())));
    const engine::Slab slab{grid.nz() / 2, std::min(grid.nz(), grid.nz() / 2 + planes)};
    std::vector<float> direct(grid.plane_size() * slab.planes()), cut(direct.size());
    const double direct_seconds = bench::best_seconds(
        1, [&] { engine::direct_sum_cpu(in.atoms, grid, kernel, slab, direct.data()); });
    const double direct_rate = double(n) * double(direct.size()) / direct_seconds / all_threads;

    std::vector<float> out(grid.point_count());
    const engine::Slab whole{0, grid.nz()};
    // msm-short is MSM's short-range part (default softening order 2): its cost is the point; its
    // values alone are not a potential to compare with direct.
    for (engine::CutoffForm form : {engine::CutoffForm::shifted, engine::CutoffForm::truncated,
                                    engine::CutoffForm::switched, engine::CutoffForm::msm_short}) {
      engine::CutoffOptions options;
      options.radius = rc;
      options.form = form;
      engine::cutoff_sum_cpu(in.atoms, grid, kernel, options, slab, cut.data());
      const double error = relative_l2(cut, direct);
      for (int threads : thread_counts) {
        if (form != engine::CutoffForm::shifted && threads != all_threads) continue;
        omp_set_num_threads(threads);
        const double t = bench::best_seconds(
            repeats, [&] { engine::cutoff_sum_cpu(in.atoms, grid, kernel, options, whole, out.data()); });
        const double direct_estimate = double(n) * points / (direct_rate * threads);
        const bool msm = form == engine::CutoffForm::msm_short;
        report.add_row({in.name, n, "whole grid", engine::cutoff_form_name(form), threads, points,
                        t, neighbours * points / t / threads, direct_estimate / t,
                        msm ? nlohmann::json("-") : nlohmann::json(error)});
      }
      omp_set_num_threads(all_threads);
    }

    // The overflow case: 1% of the atoms, scattered, added into the whole grid.
    const AtomSet sparse = every_nth(in.atoms, 100);
    engine::CutoffOptions options;
    options.radius = rc;
    const double t = bench::best_seconds(repeats, [&] {
      engine::cutoff_accumulate_cpu(sparse, grid, kernel, options, whole, out.data());
    });
    const double sparse_neighbours = mean_neighbours(sparse, grid, rc, 256);
    report.add_row({in.name, sparse.size(), "overflow (1%)", "shifted", all_threads, points, t,
                    sparse_neighbours * points / t / all_threads,
                    double(sparse.size()) * points / (direct_rate * all_threads) / t, "-"});
  }
  report.finish();
}
