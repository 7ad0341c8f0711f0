// --method auto: the exact reference where it is cheap, otherwise the fastest method that computes
// the same potential, from the cost models of the method table (engine/cost_model.hpp).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/engine/cost_model.hpp"
#include "dcsgrid/engine/engine.hpp"

#include <nlohmann/json.hpp>

namespace dcsgrid::app {

using engine::Hardware;

struct MethodEstimate {
  engine::Method method;
  double seconds;
};

struct MethodChoice {
  engine::Method method = engine::Method::direct;
  // Every method auto weighed for this physics, the exact reference first.
  std::vector<MethodEstimate> estimates;
  std::string reason;  // one sentence for the log: what was chosen, why, what to expect
  // The estimate for m, or 0 when it was not weighed.
  double seconds_of(engine::Method m) const;
  nlohmann::json to_json() const;
};

// The exact method with a cost model (direct summation: the reference auto prefers), and its
// estimated seconds for `atoms` atoms on `grid`.
MethodEstimate exact_reference(const Hardware& hw, std::size_t atoms, const GridSpec& grid);

// The exact method when the physics leaves no other with a cost model, or when its estimated time
// is at most the fastest other's plus slack_seconds (a short wait for the exact map is worth it in
// one run; batches pass 0, as they pay it every frame); that fastest method otherwise.
MethodChoice choose_method(const Hardware& hw, std::size_t atoms, const GridSpec& grid,
                           const Physics& physics, const engine::MsmOptions& msm,
                           double slack_seconds);

// The settings for a run of `atoms` atoms on `grid`: without auto_method the same; with it,
// methods = {the choice} (the choice made into *choice when given).
ComputeSettings with_chosen_method(const ComputeSettings& settings, const Hardware& hw,
                                   std::size_t atoms, const GridSpec& grid, double slack_seconds,
                                   MethodChoice* choice = nullptr);

}  // namespace dcsgrid::app
