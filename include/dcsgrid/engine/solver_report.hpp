// What an iterative (whole-grid) method tells about its solve, beside the map: the grids it solved
// (several with focusing), each one's iterations and residual history, and its energies. Backends
// copy it into RunStats; the CLI prints it and writes it to --json.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "dcsgrid/core/grid.hpp"

namespace dcsgrid::engine {

// One grid's solve.
struct SolverLevel {
  GridSpec grid;
  std::string boundary;  // how its outer faces were set: "mdh", "sdh", "zero", or "focus"
  bool reference = false;  // a solve of the reference medium (solvation), not the map's
  int iterations = 0;
  std::vector<double> residual_history;  // ‖f − Aφ‖/‖f‖ before the first iteration and after each
};

struct SolverReport {
  std::string method;  // "pb"
  // The output grid's solve (the last of `levels` that is not a reference).
  int iterations = 0;
  std::vector<double> residual_history;
  // Every solve, coarsest grid first; with solvation the reference medium's follow the map's.
  std::vector<SolverLevel> levels;
  // Total electrostatic energy (APBS's), in kT and kJ/mol.
  double energy_kt = 0;
  double energy_kj_per_mol = 0;
  // Electrostatic solvation energy (the medium's run less the reference medium's), when asked.
  std::optional<double> solvation_kt;
  std::optional<double> solvation_kj_per_mol;
};

}  // namespace dcsgrid::engine
