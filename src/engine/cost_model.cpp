// The rates, from whole runs measured on an H100 and on the 2-core development machine (docs/msm.md,
// "Choosing a method"):
// - direct: atoms × points pairs at 4.6e12 pairs/s on the GPU, 6e9 pairs/s a CPU thread;
// - msm: the level grids' stencils, whose work grows as the box's volume / h³ times (a / h)³
//   (counted here relative to the defaults a = 10 Å, h = 1.5 Å), plus the short-range pairs,
//   atoms × the output points within a of each. H100: 0.02 s + 6e-8 s a level-0 node + 1e-12 s a
//   pair (1HPV, 1TII, water boxes of 10^5, 7.4e5 and 4e6 atoms: within 1.6× of every one); CPU:
//   2e-7 s a node (the set-up, its level convolutions by FFT) + 1.3e-9 s a pair a thread (achbp and
//   1TII at 0.5 Å on 2 cores: 0.40 and 0.29 s estimated against 0.42 and 0.33 s measured).
#include "dcsgrid/engine/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace dcsgrid::engine {

namespace {

constexpr double kGpuDirectPairsPerSecond = 4.6e12;
constexpr double kCpuDirectPairsPerThreadSecond = 6e9;
constexpr double kGpuMsmFixedSeconds = 0.02;
constexpr double kGpuMsmSecondsPerNode = 6e-8;
constexpr double kGpuMsmSecondsPerPair = 1e-12;
constexpr double kCpuMsmSecondsPerNode = 2e-7;
constexpr double kCpuMsmThreadSecondsPerPair = 1.3e-9;
const MsmOptions kMeasured;  // the settings the rates were fitted with: the defaults

// Level-0 nodes of the box, weighted by the stencil's size relative to the defaults'.
double weighted_msm_nodes(const GridSpec& grid, const MsmOptions& msm) {
  double volume = 1;
  for (int a = 0; a < 3; ++a) volume *= double(grid.dims[a]) * grid.spacing[a];
  const double reach = (msm.cutoff / msm.spacing) / (kMeasured.cutoff / kMeasured.spacing);
  return volume / (msm.spacing * msm.spacing * msm.spacing) * reach * reach * reach;
}

// Atom–point pairs within the short-range cutoff a.
double msm_short_range_pairs(double atoms, const GridSpec& grid, const MsmOptions& msm) {
  const double points_in_reach = 4.0 / 3.0 * std::numbers::pi * msm.cutoff * msm.cutoff * msm.cutoff /
                                 (grid.spacing[0] * grid.spacing[1] * grid.spacing[2]);
  return atoms * std::min(points_in_reach, double(grid.point_count()));
}

}  // namespace

double direct_seconds_estimate(const RunSize& run) {
  const Hardware& hw = run.hardware;
  const double rate = hw.gpu ? kGpuDirectPairsPerSecond : kCpuDirectPairsPerThreadSecond * hw.cpu_threads;
  return run.atoms * double(run.grid.point_count()) / rate;
}

double msm_seconds_estimate(const RunSize& run) {
  const double nodes = weighted_msm_nodes(run.grid, run.msm);
  const double pairs = msm_short_range_pairs(run.atoms, run.grid, run.msm);
  return run.hardware.gpu
             ? kGpuMsmFixedSeconds + kGpuMsmSecondsPerNode * nodes + kGpuMsmSecondsPerPair * pairs
             : kCpuMsmSecondsPerNode * nodes + kCpuMsmThreadSecondsPerPair * pairs / run.hardware.cpu_threads;
}

std::string expected_msm_error(const RunSize& run) {
  const MsmOptions& msm = run.msm;
  // Measured at the default a and h on 1HPV, 1TII and a 10^5-atom water box (docs/accuracy.md).
  if (std::abs(msm.spacing - kMeasured.spacing) > 1e-9 || std::abs(msm.cutoff - kMeasured.cutoff) > 1e-9 ||
      msm.softening_order != kMeasured.softening_order)
    return "as measured for these settings in docs/msm.md";
  switch (msm.order) {
    case 4: return "about 8e-4 to 7e-3";
    case 6: return "about 1e-4 to 4e-4";
    case 8: return "about 5e-5 to 1.3e-4";
    case 10: return "about 3e-5 to 6e-5";
    default: return "as measured for these settings in docs/msm.md";
  }
}

}  // namespace dcsgrid::engine
