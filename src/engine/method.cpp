#include "dcsgrid/engine/method.hpp"

#include <array>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cost_model.hpp"

namespace dcsgrid::engine {
namespace {

using enum MethodShape;
// clang-format off
constexpr std::array kMethods{
  //                id              name      summary                                                                  shape  exact  periodic radii  const-ε all-pairs local  run_setup multigrid options               cost model              expected error
  MethodDescription{Method::direct, "direct", "exact sum over every atom (the reference)",                            slab,  true,  false,  false, false,  true,     false, false, false, MethodOptions::none,     direct_seconds_estimate, nullptr},
  MethodDescription{Method::cutoff, "cutoff", "atoms within --cutoff of each point, with a smoothing form",           slab,  false, false,  false, false,  false,    true,  false, false, MethodOptions::cutoff,   nullptr,                 nullptr},
  MethodDescription{Method::msm,    "msm",    "multilevel summation: direct's accuracy to ~1e-4 at a cutoff's cost",  slab,  false, false,  false, true,   false,    false, true, false, MethodOptions::msm,      msm_seconds_estimate,    expected_msm_error},
  MethodDescription{Method::ewald,  "ewald",  "exact periodic potential of the unit cell's lattice (Ewald sum)",      slab,  true,  true,   false, true,   false,    false, true, false, MethodOptions::periodic, nullptr,                 nullptr},
  MethodDescription{Method::pme,    "pme",    "smooth particle-mesh Ewald: the periodic potential on an FFT mesh",    slab,  false, true,   false, true,   false,    false, true, false, MethodOptions::periodic, nullptr,                 nullptr},
  MethodDescription{Method::pb,     "pb",     "Poisson–Boltzmann: the molecule (radii, --dielectric) in solvent with ions, as APBS", whole_grid, false, false, true, false, false, false, true, true, MethodOptions::pb, nullptr, nullptr},
};
// clang-format on
static_assert([] {
  for (std::size_t i = 0; i < kMethods.size(); ++i)
    if (std::size_t(kMethods[i].id) != i) return false;
  return true;
}(), "kMethods is indexed by Method");

}  // namespace

std::span<const MethodDescription> methods() { return kMethods; }

const MethodDescription& describe(Method m) {
  const auto i = std::size_t(m);
  if (i >= kMethods.size()) throw Error("internal: method " + std::to_string(i) + " has no description");
  return kMethods[i];
}

std::string method_name(Method m) { return std::string(describe(m).name); }

std::string method_names_for_help() {
  std::string out;
  for (std::size_t i = 0; i < kMethods.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == kMethods.size() ? " or " : ", ") + std::string(kMethods[i].name);
  return out;
}

Method parse_method(const std::string& name) {
  for (const MethodDescription& d : kMethods)
    if (name == d.name) return d.id;
  throw Error("unknown method '" + name + "': use " + method_names_for_help());
}

}  // namespace dcsgrid::engine
