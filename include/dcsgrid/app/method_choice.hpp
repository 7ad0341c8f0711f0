// --method auto: direct summation where it is cheap, multilevel summation otherwise, from a cost
// model of each backend fitted to measured whole runs (docs/msm.md, "Choosing a method").
#pragma once
#include <cstddef>
#include <string>

#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/engine/engine.hpp"

#include <nlohmann/json.hpp>

namespace dcsgrid::app {

// Where a run computes, for the cost model: a GPU (the CUDA backend) or this many CPU threads.
struct Hardware {
  bool gpu = false;
  int cpu_threads = 1;
};

// Estimated seconds (set-up and compute) of each method for `atoms` atoms on the grid.
double direct_seconds_estimate(const Hardware& hw, double atoms, double points);
double msm_seconds_estimate(const Hardware& hw, double atoms, const GridSpec& grid,
                            const engine::MsmOptions& msm);

struct MethodChoice {
  engine::Method method = engine::Method::direct;
  double direct_seconds = 0;  // estimated
  double msm_seconds = 0;     // estimated; 0 when the physics has no multilevel form
  std::string reason;         // one sentence for the log: what was chosen, why, what to expect
  nlohmann::json to_json() const;
};

// Direct when the physics has no multilevel form, or when its estimated time is at most msm's
// plus slack_seconds (a short wait for the exact map is worth it in one run; batches pass 0, as
// they pay it every frame); msm otherwise.
MethodChoice choose_method(const Hardware& hw, std::size_t atoms, const GridSpec& grid,
                           const Physics& physics, const engine::MsmOptions& msm,
                           double slack_seconds);

// The settings for a run of `atoms` atoms on `grid`: without auto_method the same; with it,
// methods = {the choice} (the choice made into *choice when given).
ComputeSettings with_chosen_method(const ComputeSettings& settings, const Hardware& hw,
                                   std::size_t atoms, const GridSpec& grid, double slack_seconds,
                                   MethodChoice* choice = nullptr);

// The relative L2 error (against direct summation) measured for these MSM settings on proteins
// and water boxes, as a phrase ("about 1e-4 to 4e-4"), or a pointer to docs/msm.md for settings
// not measured.
std::string expected_msm_error(const engine::MsmOptions& msm);

}  // namespace dcsgrid::app
