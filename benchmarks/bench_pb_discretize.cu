// The PB coefficient maps (issue 31): pb_dielectric, pb_ion_accessibility and pb_boundary on every CPU
// thread against pb_*_cuda on the GPU (engine/pb_discretize_cuda.hpp), APBS's usual settings (smol,
// mdh, 0.15 M 1:1), for 1D7H at 97×65×65 and 1TII at 129³ and 161³ (target: the three together in
// ≤ 10 ms on an H100 at 161³). Each row: the best of 5 wall times of each side (the GPU's include its
// host work, uploads and allocations, as a caller sees them; the CPU's of "all three" is the sum of
// the rows above) and the GPU's arrays against the CPU's: values not bit-identical, and the largest
// difference relative to the largest |value|, and the relative L2 difference.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/pb.hpp"
#include "dcsgrid/engine/pb_discretize.hpp"
#include "dcsgrid/engine/pb_discretize_cuda.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "report.hpp"

namespace {

using namespace dcsgrid;
using namespace dcsgrid::engine;

constexpr int kRepeats = 5;

GridSpec centred_grid(const AtomSet& atoms, std::int64_t n, double h) {
  const auto centre = bounding_box(atoms).center();
  std::array<double, 3> origin;
  for (int d = 0; d < 3; ++d) origin[d] = centre[d] - 0.5 * h * double(n - 1);
  return grid_from_origin(origin, {n, n, n}, h);
}

std::vector<double> download(const cuda::DeviceBuffer<double>& d) {
  std::vector<double> host(d.size());
  DCSGRID_CUDA_CHECK(cudaMemcpy(host.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost));
  return host;
}

// How the GPU's values compare with the CPU's.
struct Check {
  std::size_t differing = 0;  // not bit-identical
  double max_relative = 0;    // max |gpu − cpu| / max |cpu|
  double error2 = 0, norm2 = 0;
  void add(const std::vector<double>& gpu, const std::vector<double>& cpu) {
    double largest = 0, worst = 0;
    for (std::size_t n = 0; n < cpu.size(); ++n) {
      differing += std::memcmp(&gpu[n], &cpu[n], sizeof(double)) != 0;
      largest = std::max(largest, std::abs(cpu[n]));
      worst = std::max(worst, std::abs(gpu[n] - cpu[n]));
      error2 += (gpu[n] - cpu[n]) * (gpu[n] - cpu[n]);
      norm2 += cpu[n] * cpu[n];
    }
    max_relative = std::max(max_relative, largest > 0 ? worst / largest : worst);
  }
  double relative_l2() const { return norm2 > 0 ? std::sqrt(error2 / norm2) : std::sqrt(error2); }
};

struct Case {
  std::string name;
  const AtomSet* atoms;
  GridSpec grid;
};

void bench_case(const Case& c, const PbOptions& options, double scale, bench::Report& report) {
  const AtomSet& atoms = *c.atoms;
  const GridSpec& grid = c.grid;
  const std::size_t n = grid.point_count();
  cuda::Stream stream;
  cuda::DeviceBuffer<double> ex(n), ey(n), ez(n), access(n), phi(n);
  DCSGRID_CUDA_CHECK(cudaMemset(phi.data(), 0, phi.bytes()));
  const auto gpu_dielectric = [&] {
    pb_dielectric_cuda(atoms, grid, options, ex.data(), ey.data(), ez.data(), stream.get());
  };
  const auto gpu_access = [&] { pb_ion_accessibility_cuda(atoms, grid, options, access.data(), stream.get()); };
  const auto gpu_boundary = [&] { pb_boundary_cuda(atoms, grid, options, scale, phi.data(), stream.get()); };
  PbDielectric cpu_eps;
  std::vector<double> cpu_access, cpu_phi(n, 0.0);
  struct Row {
    const char* function;
    std::function<void()> cpu, gpu;
  };
  const std::vector<Row> rows = {
      {"dielectric", [&] { cpu_eps = pb_dielectric(atoms, grid, options); }, gpu_dielectric},
      {"accessibility", [&] { cpu_access = pb_ion_accessibility(atoms, grid, options); }, gpu_access},
      {"boundary (mdh)", [&] { pb_boundary(atoms, grid, options, scale, cpu_phi); }, gpu_boundary},
      {"all three", [] {}, [&] {
         gpu_dielectric();
         gpu_access();
         gpu_boundary();
       }},
  };
  double cpu_total = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const bool all = r + 1 == rows.size();  // its CPU time: the sum of the three above
    const double cpu_s = all ? cpu_total : bench::best_seconds(kRepeats, rows[r].cpu);
    cpu_total += cpu_s;
    const double gpu_s = bench::best_seconds(kRepeats, rows[r].gpu);
    Check check;
    if (r == 0) {
      check.add(download(ex), cpu_eps.eps_x);
      check.add(download(ey), cpu_eps.eps_y);
      check.add(download(ez), cpu_eps.eps_z);
    } else if (r == 1) {
      check.add(download(access), cpu_access);
    } else if (r == 2) {
      check.add(download(phi), cpu_phi);
    }
    report.add_row({c.name, atoms.size(), grid.describe(), rows[r].function, cpu_s, gpu_s, cpu_s / gpu_s,
                    gpu_s * 1e3, all ? nlohmann::json("-") : nlohmann::json(check.differing),
                    all ? nlohmann::json("-") : nlohmann::json(check.max_relative),
                    all ? nlohmann::json("-") : nlohmann::json(check.relative_l2())});
  }
}

}  // namespace

int main() {
  const std::string data = DCSGRID_SOURCE_DIR "/data/";
  const AtomSet fkbp = io::read_structure(data + "1d7h-min.pqr").atoms;
  const AtomSet tii = io::read_structure(data + "1tii_pdb2pqr_amber.pqr.gz").atoms;
  const auto fkbp_centre = bounding_box(fkbp).center();
  GridSpec fkbp_grid;
  fkbp_grid.dims = {97, 65, 65};
  fkbp_grid.spacing = {0.75, 0.75, 0.75};
  for (int d = 0; d < 3; ++d) fkbp_grid.origin[d] = fkbp_centre[d] - 0.5 * 0.75 * double(fkbp_grid.dims[d] - 1);
  const std::vector<Case> cases = {
      {"FKBP (1D7H)", &fkbp, fkbp_grid},
      {"1TII", &tii, centred_grid(tii, 129, 0.75)},
      {"1TII", &tii, centred_grid(tii, 161, 0.6)},
  };
  PbOptions options;  // smol, mdh
  options.ions = {{1, 0.15, 2.0}, {-1, 0.15, 2.0}};
  const double scale = kCoulomb * unit_factor(Unit::kT_per_e, kDefaultTemperature);
  bench::Report report("pb_discretize", {"input", "atoms", "grid", "function", "cpu_s", "gpu_s", "cpu_over_gpu",
                                         "gpu_ms", "gpu_values_differing", "gpu_max_rel_diff",
                                         "gpu_rel_l2"});
  report.set_context("machine", bench::cpu_description());
  report.set_context("cpu_threads", team_size());
  report.set_context("settings", describe(options));
  report.set_context("target", "all three <= 10 ms on an H100 for 1TII at 161^3 (0.6 A)");
  report.set_context("expected",
                     "dielectric and accessibility: 0 values differing; mdh boundary (float64 on the GPU): the "
                     "CPU's float32 rounding, relative L2 ~6e-7 on 1D7H");
  for (const Case& c : cases) bench_case(c, options, scale, report);
  report.finish();
  return 0;
}
