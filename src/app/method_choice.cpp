#include "dcsgrid/app/method_choice.hpp"

#include <algorithm>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::app {

namespace {

// Whether a method can compute under this physics (msm and the periodic methods split 1/r, which
// a distance-dependent dielectric or Debye–Hückel screening does not allow).
bool handles(const engine::MethodDescription& method, const Physics& physics) {
  return !method.constant_dielectric || (!physics.distance_dependent && !(physics.ionic_strength > 0));
}

// The names of the methods with a cost model that this physics rules out, for the reason.
std::string ruled_out(const Physics& physics) {
  std::string names;
  for (const engine::MethodDescription& m : engine::methods())
    if (m.seconds_estimate && !handles(m, physics)) names += (names.empty() ? "" : ", ") + std::string(m.name);
  return names;
}

}  // namespace

MethodEstimate exact_reference(const Hardware& hw, std::size_t atoms, const GridSpec& grid) {
  for (const engine::MethodDescription& m : engine::methods())
    if (m.exact && m.seconds_estimate) return {m.id, m.seconds_estimate({hw, double(atoms), grid, {}})};
  throw Error("internal: the method table has no exact method with a cost model");
}

double MethodChoice::seconds_of(engine::Method m) const {
  for (const MethodEstimate& e : estimates)
    if (e.method == m) return e.seconds;
  return 0;
}

MethodChoice choose_method(const Hardware& hw, std::size_t atoms, const GridSpec& grid,
                           const Physics& physics, const engine::MsmOptions& msm,
                           double slack_seconds) {
  const engine::RunSize run{hw, double(atoms), grid, msm};
  MethodChoice c;
  c.estimates = {exact_reference(hw, atoms, grid)};
  const engine::MethodDescription* reference = &engine::describe(c.estimates.front().method);
  const double exact_seconds = c.estimates.front().seconds;
  const engine::MethodDescription* fastest = nullptr;  // of the approximations
  for (const engine::MethodDescription& m : engine::methods()) {
    if (m.exact || !m.seconds_estimate || !handles(m, physics)) continue;
    c.estimates.push_back({m.id, m.seconds_estimate(run)});
    if (!fastest || c.estimates.back().seconds < c.seconds_of(fastest->id)) fastest = &m;
  }
  c.method = reference->id;
  if (!fastest) {
    c.reason = fmt::format("--method auto chose {} (exact, about {:.3g} s): this physics has no multilevel "
                           "form, which {} needs",
                           reference->name, exact_seconds, ruled_out(physics));
    return c;
  }
  const double fast_seconds = c.seconds_of(fastest->id);
  if (exact_seconds <= fast_seconds + slack_seconds) {
    c.reason = fmt::format("--method auto chose {}: exact, and about {:.3g} s here against about {:.3g} s "
                           "for {}",
                           reference->name, exact_seconds, fast_seconds, fastest->name);
    return c;
  }
  c.method = fastest->id;
  c.reason = fmt::format("--method auto chose {}: about {:.3g} s here against about {:.3g} s for {}; "
                         "expect a relative L2 error {} (--method {} is exact)",
                         fastest->name, fast_seconds, exact_seconds, reference->name,
                         fastest->expected_error(run), reference->name);
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
  nlohmann::json seconds = nlohmann::json::object();
  for (const MethodEstimate& e : estimates) seconds[engine::method_name(e.method)] = e.seconds;
  return {{"method", engine::method_name(method)}, {"seconds_estimates", seconds}, {"reason", reason}};
}

}  // namespace dcsgrid::app
