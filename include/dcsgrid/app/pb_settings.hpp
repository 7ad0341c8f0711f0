// The front ends' text forms of the Poisson–Boltzmann options and of the other programs' presets,
// turned into settings here once: the command line (--ion, --surface, --boundary, --preset, ...)
// and the Python module (potential(method="pb", ...)) parse through these, so both say the same.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/pb.hpp"

namespace dcsgrid::app {

// "CHARGE,CONC,RADIUS" (--ion: e, mol/L, Å). Throws Error naming the text.
engine::PbIon parse_ion(const std::string& text);
// APBS's keywords: --surface (mol, smol, spl2, spl4), --charge-map (spl0, spl2, spl4),
// --coarse-boundary (zero, sdh, mdh). Throw Error naming the option, the value and the choices.
engine::PbSurface parse_surface(const std::string& text);
engine::PbChargeMap parse_charge_map(const std::string& text);
engine::PbBoundary parse_coarse_boundary(const std::string& text);
// --boundary: zero, sdh, mdh or focus. Throws Error naming the value and the choices.
void check_boundary(const std::string& text);

// --boundary, --coarse-boundary and --coarse-size as pb's focus, bcfl and coarse size: zero, sdh or
// mdh is that condition on the grid itself (no focusing); focus, or a coarse size, focuses; neither
// (both texts empty, no size) focuses when the grid is tight. bcfl is then the coarsest grid's
// (coarse_boundary, default mdh). Throws Error for a bad value or a coarse option with one grid.
void set_focusing(engine::PbOptions& pb, const std::string& boundary, const std::string& coarse_boundary,
                  const std::vector<double>& coarse_size);

// What another program computes, so a user can reproduce a map they know (--preset).
struct Preset {
  const char* name;
  double dielectric;
  bool distance_dependent;
  double temperature;
  const char* units;
  const char* source;
  double ionic_strength = 0;  // mol/L of 1:1 salt
};
std::span<const Preset> presets();
// The preset of that name. Throws Error naming the value and the presets.
const Preset& find_preset(const std::string& name);

// Which of the options a preset sets the user gave (those keep the user's value).
struct PresetGiven {
  bool dielectric = false;  // --dielectric or --ddd
  bool temperature = false;
  bool ionic_strength = false;
  bool units = false;
};
// The preset's dielectric, temperature, salt and units where not given.
void apply_preset(const Preset& preset, const PresetGiven& given, Physics& physics, std::string& units);

}  // namespace dcsgrid::app
