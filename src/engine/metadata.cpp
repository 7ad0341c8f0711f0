#include "dcsgrid/engine/metadata.hpp"

#include <spdlog/fmt/fmt.h>

namespace dcsgrid::engine {

io::MapMetadata method_metadata(const Physics& p, Method method, const CutoffOptions& cutoff,
                                const MsmOptions& msm) {
  io::MapMetadata meta;
  meta.units = unit_name(p.unit);
  meta.temperature = p.temperature;
  meta.method = method_name(method);
  if (method == Method::cutoff) {
    meta.parameters["cutoff"] = fmt::format("{:g}", cutoff.radius);
    meta.parameters["cutoff_form"] = cutoff_form_name(cutoff.form);
    if (cutoff.form == CutoffForm::switched)
      meta.parameters["switch_start"] = fmt::format("{:g}", cutoff.switch_start);
    if (cutoff.form == CutoffForm::msm_short)
      meta.parameters["softening_order"] = fmt::format("{}", cutoff.softening_order);
    if (cutoff.form == CutoffForm::ewald_real)
      meta.parameters["ewald_beta"] = fmt::format("{:g}", cutoff.ewald_beta);
  }
  if (method == Method::msm) {
    meta.parameters["msm_cutoff"] = fmt::format("{:g}", msm.cutoff);
    meta.parameters["msm_spacing"] = fmt::format("{:g}", msm.spacing);
    meta.parameters["msm_order"] = fmt::format("{}", msm.order);
    meta.parameters["softening_order"] = fmt::format("{}", softening_order_used(msm));
  }
  meta.dielectric = p.dielectric;
  meta.dielectric_model = p.distance_dependent ? "distance-dependent 4r" : "constant";
  meta.ionic_strength = p.ionic_strength;
  meta.min_distance = p.min_distance;
  meta.program_version = DCSGRID_VERSION;
  return meta;
}

}  // namespace dcsgrid::engine
