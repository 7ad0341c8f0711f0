// The cost model behind --method auto (method_choice.hpp). Rates from docs/performance.md and
// docs/msm.md: direct summation 4.6e12 pairs/s on an H100 and 6e9 pairs/s a CPU thread (AVX2);
// whole MSM runs (set-up + compute, defaults) on an H100 0.015 s + 2.4e-9 s a grid point (1HPV,
// 7.4e5 and 4e6-atom water boxes), on the CPU 8e-8 s a grid point for the set-up, which runs
// mostly on one thread, plus 2.5e-8 s a grid point a thread (1HPV and 1TII at 0.5 Å, one and two
// threads). MSM's cost follows the grid: the finest MSM level and the short-range sum cover it.
#include "dcsgrid/app/method_choice.hpp"

#include <cmath>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/engine/msm.hpp"

namespace dcsgrid::app {

namespace {

constexpr double kGpuDirectPairsPerSecond = 4.6e12;
constexpr double kCpuDirectPairsPerThreadSecond = 6e9;
constexpr double kGpuMsmFixedSeconds = 0.015;
constexpr double kGpuMsmSecondsPerPoint = 2.4e-9;
constexpr double kCpuMsmSerialSecondsPerPoint = 8e-8;
constexpr double kCpuMsmThreadSecondsPerPoint = 2.5e-8;

}  // namespace

double direct_seconds_estimate(const Hardware& hw, double atoms, double points) {
  const double rate = hw.gpu ? kGpuDirectPairsPerSecond : kCpuDirectPairsPerThreadSecond * hw.cpu_threads;
  return atoms * points / rate;
}

double msm_seconds_estimate(const Hardware& hw, double points) {
  return hw.gpu ? kGpuMsmFixedSeconds + kGpuMsmSecondsPerPoint * points
                : (kCpuMsmSerialSecondsPerPoint + kCpuMsmThreadSecondsPerPoint / hw.cpu_threads) * points;
}

std::string expected_msm_error(const engine::MsmOptions& msm) {
  // Defaults a = 10 Å, h = 1.5 Å: 1HPV, 1TII and a 10^5-atom water box (docs/msm.md).
  if (std::abs(msm.spacing - 1.5) > 1e-9 || std::abs(msm.cutoff - 10.0) > 1e-9 || msm.softening_order != 0)
    return "as measured for these settings in docs/msm.md";
  switch (msm.order) {
    case 4: return "about 8e-4 to 7e-3";
    case 6: return "about 1e-4 to 4e-4";
    case 8: return "about 5e-5 to 1.3e-4";
    case 10: return "about 3e-5 to 6e-5";
    default: return "as measured for these settings in docs/msm.md";
  }
}

MethodChoice choose_method(const Hardware& hw, std::size_t atoms, const GridSpec& grid,
                           const Physics& physics, const engine::MsmOptions& msm,
                           double slack_seconds) {
  MethodChoice c;
  const double points = double(grid.point_count());
  c.direct_seconds = direct_seconds_estimate(hw, double(atoms), points);
  if (!engine::has_multilevel_form(physics)) {
    c.reason = fmt::format("--method auto chose direct summation (exact, about {:.3g} s): this "
                           "physics has no multilevel form", c.direct_seconds);
    return c;
  }
  c.msm_seconds = msm_seconds_estimate(hw, points);
  if (c.direct_seconds <= c.msm_seconds + slack_seconds) {
    c.reason = fmt::format("--method auto chose direct summation: exact, and about {:.3g} s here "
                           "against about {:.3g} s for msm",
                           c.direct_seconds, c.msm_seconds);
    return c;
  }
  c.method = engine::Method::msm;
  c.reason = fmt::format("--method auto chose msm: about {:.3g} s here against about {:.3g} s for "
                         "direct summation; expect a relative L2 error {} (--method direct is exact)",
                         c.msm_seconds, c.direct_seconds, expected_msm_error(msm));
  return c;
}

ComputeSettings with_chosen_method(const ComputeSettings& settings, const Hardware& hw,
                                   std::size_t atoms, const GridSpec& grid, double slack_seconds,
                                   MethodChoice* choice) {
  if (!settings.auto_method) return settings;
  const MethodChoice c = choose_method(hw, atoms, grid, settings.physics, settings.msm, slack_seconds);
  ComputeSettings chosen = settings;
  chosen.auto_method = false;
  chosen.methods = {c.method};
  if (choice) *choice = c;
  return chosen;
}

nlohmann::json MethodChoice::to_json() const {
  return {{"method", engine::method_name(method)},
          {"direct_seconds_estimate", direct_seconds},
          {"msm_seconds_estimate", msm_seconds},
          {"reason", reason}};
}

}  // namespace dcsgrid::app
