// Physical constants and output units.
#pragma once
#include <string>

namespace dcsgrid {

// Coulomb constant, kcal·Å/(mol·e²).
inline constexpr double kCoulomb = 332.0637;
// Gas constant, kcal/(mol·K).
inline constexpr double kGasConstant = 1.987204259e-3;
// Avogadro's number, 1/mol.
inline constexpr double kAvogadro = 6.02214076e23;
// Faraday constant, C/mol.
inline constexpr double kFaraday = 96485.33212;
inline constexpr double kDefaultTemperature = 298.15;  // K

enum class Unit { kT_per_e, kcal_per_mol_e, kJ_per_mol_e, volt };

// Factor that converts a potential in kcal/(mol·e) to the unit, at temperature T (K).
double unit_factor(Unit unit, double temperature);
std::string unit_name(Unit unit);        // "kT/e", "kcal/mol/e", "kJ/mol/e", "V"
Unit parse_unit(const std::string& name);  // throws Error listing the accepted names

// Inverse Debye length κ (1/Å) of a 1:1 electrolyte of ionic strength I (mol/L) in a medium of
// relative permittivity eps at temperature T: κ² = 8π·k_C·N_A·I·1e-27 / (eps·R·T).
double debye_kappa(double ionic_strength, double dielectric, double temperature);

}  // namespace dcsgrid
