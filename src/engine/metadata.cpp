#include "dcsgrid/engine/metadata.hpp"

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/engine/periodic.hpp"

namespace dcsgrid::engine {

namespace {

// The cell and the periodic split as run: β, the real-space cutoff, the mesh and order (pme).
void add_periodic_parameters(const PotentialRequest& r, io::MapMetadata& meta) {
  auto& p = meta.parameters;
  if (r.periodic.smooth_beta > 0) p["smooth_beta"] = fmt::format("{:g}", r.periodic.smooth_beta);
  if (!r.cell) return;
  const UnitCell& c = *r.cell;
  p["cell"] = fmt::format("{:g} {:g} {:g} {:g} {:g} {:g}", c.lengths[0], c.lengths[1], c.lengths[2], c.angles[0],
                          c.angles[1], c.angles[2]);
  const auto split = [&](const auto& s) {
    p["ewald_beta"] = fmt::format("{:.9g}", s.beta);
    p["real_cutoff"] = fmt::format("{:g}", s.real_cutoff);
    p["neutralising_background"] = s.background ? "yes" : "no";
  };
  if (r.method == Method::ewald) {
    const auto s = periodic_split<EwaldReciprocal>(c, r.periodic);
    split(s);
    p["ewald_kmax"] = fmt::format("{} {} {}", s.parameters.kmax[0], s.parameters.kmax[1], s.parameters.kmax[2]);
    p["ewald_tolerance"] = fmt::format("{:g}", r.periodic.tolerance);
  } else {
    const auto s = periodic_split<PmeReciprocal>(c, r.periodic);
    split(s);
    p["pme_order"] = fmt::format("{}", s.parameters.order);
    p["pme_mesh"] = fmt::format("{} {} {}", s.parameters.mesh[0], s.parameters.mesh[1], s.parameters.mesh[2]);
    p["pme_tolerance"] = fmt::format("{:g}", r.periodic.tolerance);
  }
}

}  // namespace

io::MapMetadata method_metadata(const PotentialRequest& request) {
  const Physics& p = request.physics;
  const Method method = request.method;
  const CutoffOptions& cutoff = request.cutoff;
  const MsmOptions& msm = request.msm;
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
  if (describe(method).periodic) add_periodic_parameters(request, meta);
  if (method == Method::pb) {
    const PbOptions pb = pb_options(request);
    meta.parameters["pb"] = describe(pb);
    if (request.atoms && !request.atoms->empty())
      meta.parameters["pb_grids"] = describe_focus(pb_focus_grids(*request.atoms, request.grid, pb), pb);
  }
  meta.dielectric = p.dielectric;
  meta.dielectric_model = p.distance_dependent ? "distance-dependent 4r" : "constant";
  meta.ionic_strength = p.ionic_strength;
  meta.min_distance = p.min_distance;
  meta.program_version = DCSGRID_VERSION;
  return meta;
}

}  // namespace dcsgrid::engine
