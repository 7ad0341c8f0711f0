// CPU direct summation: atom–point pair evaluations per second per core, our engine against the
// obvious scalar triple loop (float and double, compiled here with the same flags), on the
// largest real structure in data/ and on a synthetic TIP3P water box.
//
//   bench_cpu_direct [--quick]
//
// Each engine runs a z-slab in the middle of a 0.5 Å grid around the structure, sized so that it
// takes about a second (the naive loops get fewer planes). The double loop's result is the
// float64 reference for the accuracy column.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cpu_bench_inputs.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "report.hpp"

using namespace dcsgrid;

namespace {

// The obvious loop: every point, every atom, one running sum; the pair term as written in
// physics.hpp (1/r, 1/r², exp(−κr)/r).
template <typename Real, PairForm F>
void naive_sum(const AtomSet& atoms, const GridSpec& grid, const PairKernel& k, engine::Slab slab,
               Real* out) {
  const Real min_r2 = Real(k.min_r2_d), kappa = Real(k.kappa_d);
  for (std::int64_t z = slab.z_begin; z < slab.z_end; ++z)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i) {
        const auto p = grid.position(i, j, z);
        const Real px = Real(p[0]), py = Real(p[1]), pz = Real(p[2]);
        Real sum = 0;
        for (std::size_t a = 0; a < atoms.size(); ++a) {
          const Real dx = px - atoms.x[a], dy = py - atoms.y[a], dz = pz - atoms.z[a];
          const Real r2 = std::max(dx * dx + dy * dy + dz * dz, min_r2);
          if constexpr (F == PairForm::coulomb) sum += atoms.q[a] / std::sqrt(r2);
          if constexpr (F == PairForm::distance_dependent) sum += atoms.q[a] / r2;
          if constexpr (F == PairForm::debye_huckel) {
            const Real r = std::sqrt(r2);
            sum += atoms.q[a] * std::exp(-kappa * r) / r;
          }
        }
        *out++ = Real(k.scale_d) * sum;
      }
}

template <typename Real>
void naive_sum(const AtomSet& atoms, const GridSpec& grid, const PairKernel& k, engine::Slab slab,
               Real* out) {
  switch (k.form) {
    case PairForm::coulomb: return naive_sum<Real, PairForm::coulomb>(atoms, grid, k, slab, out);
    case PairForm::distance_dependent:
      return naive_sum<Real, PairForm::distance_dependent>(atoms, grid, k, slab, out);
    case PairForm::debye_huckel:
      return naive_sum<Real, PairForm::debye_huckel>(atoms, grid, k, slab, out);
  }
}

// A slab of `planes` planes centred in the grid.
engine::Slab middle_slab(const GridSpec& grid, std::int64_t planes) {
  planes = std::clamp<std::int64_t>(planes, 1, grid.nz());
  const std::int64_t begin = (grid.nz() - planes) / 2;
  return {begin, begin + planes};
}
// Planes whose pair count is about `pairs`.
std::int64_t planes_for(const GridSpec& grid, std::size_t atoms, double pairs) {
  return std::int64_t(pairs / (double(atoms) * double(grid.plane_size()))) + 1;
}

double relative_l2(const std::vector<float>& a, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const double naive_pairs = quick ? 3e7 : 3e8, engine_pairs = quick ? 3e8 : 3e9;
  const int repeats = quick ? 1 : 3;
  const int all_threads = omp_get_max_threads();

  const std::vector<bench::Input> inputs = bench::cpu_bench_inputs(quick ? 6000 : 30000);

  bench::Report report("bench_cpu_direct",
                       {"input", "atoms", "engine", "form", "threads", "pairs", "seconds",
                        "pairs/s", "pairs/s/core", "x naive float/core", "rel L2 vs float64"});
  // "x naive float/core": pairs/s/core over the naive float loop's, same input and form.
  report.set_context("cpu", bench::cpu_description());
  report.set_context("threads_all", all_threads);
  report.set_context("grid_spacing", 0.5);
  report.set_context("padding", 5.0);
  report.set_context("note", "naive = scalar triple loop with 1/sqrt, same compiler flags "
                             "(-O3 -march=x86-64-v3); pairs/s/core = pairs/s / threads");

  for (const bench::Input& in : inputs) {
    const GridSpec grid = grid_around(bounding_box(in.atoms), 0.5, 5.0);
    const std::size_t n = in.atoms.size();
    std::cout << in.name << ": " << n << " atoms, grid " << grid.describe() << "\n";
    Physics ddd, dh;
    ddd.distance_dependent = true;
    dh.dielectric = 78.54;
    dh.ionic_strength = 0.15;
    const std::pair<const char*, Physics> forms[] = {
        {"coulomb", Physics{}}, {"ddd", ddd}, {"debye-huckel", dh}};
    std::vector<int> thread_counts{1};
    if (all_threads > 1) thread_counts.push_back(all_threads);

    for (const auto& [form, physics] : forms) {
      const PairKernel kernel = make_pair_kernel(physics);
      // The naive loops and the float64 reference, on a thin slab, one thread.
      const engine::Slab thin = middle_slab(grid, planes_for(grid, n, naive_pairs));
      const double thin_pairs = double(n) * double(grid.plane_size() * thin.planes());
      std::vector<double> reference(grid.plane_size() * thin.planes());
      std::vector<float> naive_f(reference.size()), ours_thin(reference.size());
      const double t_double = bench::best_seconds(
          1, [&] { naive_sum<double>(in.atoms, grid, kernel, thin, reference.data()); });
      const double t_float = bench::best_seconds(
          1, [&] { naive_sum<float>(in.atoms, grid, kernel, thin, naive_f.data()); });
      const double naive_rate = thin_pairs / t_float;
      engine::direct_sum_cpu(in.atoms, grid, kernel, thin, ours_thin.data());
      const auto row = [&](const std::string& engine, int threads, double pairs, double seconds,
                           double error) {
        const double rate = pairs / seconds;
        report.add_row({in.name, n, engine, form, threads, pairs, seconds, rate, rate / threads,
                        rate / threads / naive_rate, error});
      };
      row("naive double", 1, thin_pairs, t_double, 0.0);
      row("naive float", 1, thin_pairs, t_float, relative_l2(naive_f, reference));

      // Our engine on a thicker slab, one thread and all.
      const double ours_error = relative_l2(ours_thin, reference);
      const engine::Slab thick = middle_slab(grid, planes_for(grid, n, engine_pairs));
      const double thick_pairs = double(n) * double(grid.plane_size() * thick.planes());
      std::vector<float> out(grid.plane_size() * thick.planes());
      for (int threads : thread_counts) {
        omp_set_num_threads(threads);
        const double t = bench::best_seconds(
            repeats, [&] { engine::direct_sum_cpu(in.atoms, grid, kernel, thick, out.data()); });
        row("dcsgrid cpu", threads, thick_pairs, t, ours_error);
      }
      omp_set_num_threads(all_threads);
    }
  }
  report.finish();
}
