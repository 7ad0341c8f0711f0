#include "dcsgrid/app/pb_settings.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::app {

namespace {

// The value among `values` whose APBS keyword is text.
template <typename E>
E parse_keyword(const std::string& option, const std::string& text, std::initializer_list<E> values) {
  std::string names;
  for (const E v : values) {
    if (text == engine::keyword(v)) return v;
    names += (names.empty() ? "" : ", ") + std::string(engine::keyword(v));
  }
  throw Error(option + ": unknown value '" + text + "' (" + names + ")");
}

// APBS's usual PB run: its other settings (sdie 78.54, ion radius 2 Å, srad 1.4 Å, smol, spl2, mdh)
// are the PB options' defaults.
constexpr Preset kPresets[] = {
    {"pymol", 2.0, false, 300.0, "kT/e", "PyMOL map_new coulomb (coulomb_dielectric 2)"},
    {"apbs", 1.0, false, 298.15, "kT/e", "APBS' coulomb tool (vacuum Coulomb)"},
    {"chimerax", 4.0, true, 298.15, "kcal/mol/e", "ChimeraX coulombic (distDep true, dielectric 4)"},
    {"vmd", 1.0, false, 300.0, "kT/e", "VMD volmap coulomb"},
    {"apbs-pb", 2.0, false, 298.15, "kT/e",
     "APBS's usual PB run with --method pb: pdie 2, sdie 78.54, 0.15 M 1:1 salt of radius 2 Å, srad 1.4 Å, "
     "smol, spl2, mdh",
     0.15},
};

}  // namespace

engine::PbIon parse_ion(const std::string& text) {
  double v[3];
  std::size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t comma = i < 2 ? text.find(',', start) : text.size();
    std::size_t used = 0;
    const std::string field = comma == std::string::npos ? "" : text.substr(start, comma - start);
    try {
      v[i] = std::stod(field, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (field.empty() || used != field.size() || (i == 2 && comma != text.size()) || !std::isfinite(v[i]))
      throw Error("--ion '" + text + "': expected CHARGE,CONC,RADIUS (e, mol/L, Å), such as 1,0.15,2");
    start = comma + 1;
  }
  return {v[0], v[1], v[2]};
}

engine::PbSurface parse_surface(const std::string& text) {
  using engine::PbSurface;
  return parse_keyword("--surface", text, {PbSurface::mol, PbSurface::smol, PbSurface::spl2, PbSurface::spl4});
}

engine::PbChargeMap parse_charge_map(const std::string& text) {
  using engine::PbChargeMap;
  return parse_keyword("--charge-map", text, {PbChargeMap::spl0, PbChargeMap::spl2, PbChargeMap::spl4});
}

engine::PbBoundary parse_coarse_boundary(const std::string& text) {
  using engine::PbBoundary;
  return parse_keyword("--coarse-boundary", text, {PbBoundary::zero, PbBoundary::sdh, PbBoundary::mdh});
}

void check_boundary(const std::string& text) {
  using engine::PbBoundary;
  for (const PbBoundary b : {PbBoundary::zero, PbBoundary::sdh, PbBoundary::mdh})
    if (text == engine::keyword(b)) return;
  if (text != "focus") throw Error("--boundary: unknown value '" + text + "' (zero, sdh, mdh, focus)");
}

void set_focusing(engine::PbOptions& pb, const std::string& boundary, const std::string& coarse_boundary,
                  const std::vector<double>& coarse_size) {
  if (!boundary.empty()) check_boundary(boundary);
  const bool one_grid = !boundary.empty() && boundary != "focus";
  if (one_grid && !coarse_size.empty())
    throw Error("--coarse-size focuses from a coarse grid: it cannot go with --boundary " + boundary +
                " (one grid); use --boundary focus or leave --boundary out");
  if (one_grid && !coarse_boundary.empty())
    throw Error("--coarse-boundary sets the coarse grid of focusing: it cannot go with --boundary " + boundary +
                " (one grid); use --boundary focus or leave --boundary out");
  if (!coarse_size.empty() && coarse_size.size() != 3)
    throw Error("--coarse-size takes 3 lengths X,Y,Z (Å), not " + std::to_string(coarse_size.size()));
  pb.focus = one_grid ? engine::PbFocus::never
             : boundary == "focus" || !coarse_size.empty() ? engine::PbFocus::always
                                                            : engine::PbFocus::automatic;
  pb.bcfl = parse_coarse_boundary(one_grid ? boundary : coarse_boundary.empty() ? "mdh" : coarse_boundary);
  if (!coarse_size.empty()) std::copy(coarse_size.begin(), coarse_size.end(), pb.coarse_size.begin());
}

std::span<const Preset> presets() { return kPresets; }

const Preset& find_preset(const std::string& name) {
  std::string names;
  for (const Preset& p : kPresets) {
    if (name == p.name) return p;
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  throw Error("--preset: unknown value '" + name + "' (" + names + ")");
}

void apply_preset(const Preset& p, const PresetGiven& given, Physics& physics, std::string& units) {
  if (!given.dielectric) {
    physics.dielectric = p.distance_dependent ? 1.0 : p.dielectric;
    physics.distance_dependent = p.distance_dependent;
  }
  if (!given.temperature) physics.temperature = p.temperature;
  if (!given.ionic_strength) physics.ionic_strength = p.ionic_strength;
  if (!given.units) units = p.units;
}

}  // namespace dcsgrid::app
