#include "dcsgrid/core/units.hpp"

#include <cmath>
#include <numbers>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid {

double unit_factor(Unit unit, double temperature) {
  switch (unit) {
    case Unit::kT_per_e: return 1.0 / (kGasConstant * temperature);
    case Unit::kcal_per_mol_e: return 1.0;
    case Unit::kJ_per_mol_e: return 4.184;
    case Unit::volt: return 4184.0 / kFaraday;  // J/mol per (C/mol) = V
  }
  return 1.0;
}

std::string unit_name(Unit unit) {
  switch (unit) {
    case Unit::kT_per_e: return "kT/e";
    case Unit::kcal_per_mol_e: return "kcal/mol/e";
    case Unit::kJ_per_mol_e: return "kJ/mol/e";
    case Unit::volt: return "V";
  }
  return "?";
}

Unit parse_unit(const std::string& name) {
  for (Unit u : {Unit::kT_per_e, Unit::kcal_per_mol_e, Unit::kJ_per_mol_e, Unit::volt})
    if (name == unit_name(u)) return u;
  throw Error("unknown unit '" + name + "': use kT/e, kcal/mol/e, kJ/mol/e or V");
}

double debye_kappa(double ionic_strength, double dielectric, double temperature) {
  if (ionic_strength <= 0) return 0.0;
  const double per_cubic_angstrom = ionic_strength * kAvogadro * 1e-27;
  return std::sqrt(8 * std::numbers::pi * kCoulomb * per_cubic_angstrom /
                   (dielectric * kGasConstant * temperature));
}

}  // namespace dcsgrid
