#include <cmath>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/periodic.hpp"

namespace dcsgrid::engine {

void validate(const PeriodicOptions& o) {
  const auto positive = [](double v, const char* option, const char* unit) {
    if (!(std::isfinite(v) && v > 0))
      throw Error(fmt::format("{} must be a positive number{} (got {:g})", option, unit, v));
  };
  positive(o.real_cutoff, "--pme-cutoff", " of Å");
  if (!(o.tolerance > 0 && o.tolerance < 0.1))
    throw Error(fmt::format("--pme-tolerance must lie between 0 and 0.1 (got {:g}); 1e-5 is the default", o.tolerance));
  if (!(std::isfinite(o.beta) && o.beta >= 0))
    throw Error(fmt::format("the Ewald coefficient must be a positive number of 1/Å (got {:g})", o.beta));
  if (o.pme_order < kPmeMinOrder || o.pme_order > kPmeMaxOrder)
    throw Error(fmt::format("--pme-order must lie between {} and {} (got {})", kPmeMinOrder, kPmeMaxOrder, o.pme_order));
  positive(o.mesh_spacing, "--pme-spacing", " of Å");
  if (!(std::isfinite(o.smooth_beta) && o.smooth_beta >= 0))
    throw Error(fmt::format("--smooth must be a positive Ewald factor in 1/Å (got {:g})", o.smooth_beta));
}

}  // namespace dcsgrid::engine
