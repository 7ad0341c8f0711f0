// Poisson–Boltzmann electrostatics on a grid, as APBS's mg-manual computes it (docs/pb.md):
//   −∇·ε(x)∇φ(x) + κ̄²(x)·φ(x) = 4π·scale·ρ(x)
// with ε the solute (pdie) or solvent (sdie) dielectric by the molecular surface, κ̄² = sdie·κ²
// where ions reach, ρ the atoms' charges (e/Å³) spread on the grid, and φ fixed on the grid's
// outer faces (the boundary condition). The options are named after APBS's keywords.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/engine/solver_report.hpp"

namespace dcsgrid::engine {

// srfm: mol (probe-carved molecular surface), smol (mol with APBS's 9-point harmonic smoothing),
// spl2 (each atom's sphere softened by a cubic switch of half-width swin; no probe), spl4 (the
// same with APBS's degree-7 switch).
enum class PbSurface { mol, smol, spl2, spl4 };
// chgm: spl0 (trilinear, 8 points), spl2 (APBS's cubic B-spline, 27-64 points), spl4 (its
// quintic B-spline, 125-216 points).
enum class PbChargeMap { spl0, spl2, spl4 };
// bcfl: zero (φ = 0 on the faces), sdh (one Debye–Hückel sphere holding the molecule's charge,
// dipole and quadrupole), mdh (a Debye–Hückel sphere per atom, summed).
// With focusing, bcfl sets the coarsest grid's faces (as APBS's bcfl in mg-auto).
enum class PbBoundary { zero, sdh, mdh };
// Focusing (APBS mg-auto, docs/pb.md): a coarse grid around the molecule solved with bcfl, whose
// solution, interpolated trilinearly, sets the faces of the next finer grid, down to the requested
// one. automatic: when the requested grid is shorter than kPbCoarseFactor × the molecule's extent
// along an axis, or a coarse size is given; always: focus (the coarse size chosen unless given);
// never: one grid with bcfl (APBS mg-manual).
enum class PbFocus { automatic, always, never };
// APBS's psize: the coarse grid spans cfac = 1.7 times the molecule's extent (its atoms' spheres).
inline constexpr double kPbCoarseFactor = 1.7;

// APBS's keyword for each choice ("smol", "spl2", "mdh"), for logs, metadata and input files.
const char* keyword(PbSurface srfm);
const char* keyword(PbChargeMap chgm);
const char* keyword(PbBoundary bcfl);
const char* keyword(PbFocus focus);  // "auto", "always", "never"

// One mobile ion species (APBS "ion charge C conc M radius R").
struct PbIon {
  double charge = 1.0;         // e
  double concentration = 0.0;  // mol/L
  double radius = 2.0;         // Å, widens the ion-exclusion layer around the atoms
};

struct PbOptions {
  double pdie = 2.0;    // solute dielectric
  double sdie = 78.54;  // solvent dielectric
  std::vector<PbIon> ions;  // none: no salt (κ = 0)
  double srad = 1.4;    // solvent probe radius, Å
  PbSurface srfm = PbSurface::smol;
  PbChargeMap chgm = PbChargeMap::spl2;
  PbBoundary bcfl = PbBoundary::mdh;
  double temp = kDefaultTemperature;  // K
  double sdens = 10.0;  // surface points per Å² on each atom's probe sphere (APBS sdens)
  double swin = 0.3;    // spl2/spl4 surfaces: the switch's half-width, Å
  // Stop when ‖f − A φ‖₂ / ‖f‖₂ falls below this (f: the right-hand side with the boundary's
  // terms). APBS stops at an estimate near 1e-6; 1e-9 makes our map independent of the solver.
  double tolerance = 1e-9;
  int max_iterations = 100;  // CG iterations (one V-cycle each); with nonlinear, Newton steps
  // Full PB (APBS npbe): the ion term κ̄²·Σ c_i z_i e^(−z_i u)/Σ c z² (sinh for 1:1 salt) solved by
  // Newton's method; max_iterations then counts Newton steps. Without ions it is the linear case.
  bool nonlinear = false;
  // The radius of the 1:1 salt that a request's ionic strength stands for when `ions` is empty
  // (--ion-radius; APBS's usual 2.0 Å).
  double ion_radius = 2.0;
  PbFocus focus = PbFocus::automatic;
  // The coarsest grid's lengths along x, y, z (Å, APBS cglen), centred on the atoms' box (cgcent
  // mol); all zero: kPbCoarseFactor × the molecule's extent, or the grid's length where longer.
  std::array<double, 3> coarse_size{};
  // Also solve the reference medium (sdie = pdie, no ions) on the same grids and report the
  // electrostatic solvation energy, the difference of the two total energies.
  bool solvation = false;
};

// Throws Error naming the option for values out of range and an ion set that is not neutral
// (Σ c·z ≠ 0, as APBS refuses).
void validate(const PbOptions& options);
// "pdie 2, sdie 78.54, ions +1e 0.15 M r 2 Å; -1e 0.15 M r 2 Å, srad 1.4 Å, sdens 10, smol, spl2,
// mdh, 298.15 K, linear", for logs and metadata.
std::string describe(const PbOptions& options);

// Ionic strength ½Σ c·z² (mol/L), the largest ion radius (Å) and κ̄² = sdie·κ² (1/Å²).
double ionic_strength(const PbOptions& options);
double max_ion_radius(const PbOptions& options);
double kappa_bar_squared(const PbOptions& options);

struct PbResult {
  std::vector<double> potential;  // every grid point, x fastest, in the unit `scale` gives
  // ‖f − A φ‖/‖f‖ before the first iteration and after each one.
  std::vector<double> residual_history;
  int iterations = 0;
  // APBS's "Total electrostatic energy": ½ Σ q·φ over the spread charges (linear), or Σ q·φ less
  // the field and mobile-ion energies (nonlinear, APBS's Vpmg_energy), in the potential's unit
  // times e (kT for kT/e), and the same in kJ/mol (APBS prints kJ/mol).
  double energy = 0.0;
  double energy_kj_per_mol = 0.0;
  // Every grid solved, coarsest first (one without focusing), then the reference medium's.
  std::vector<SolverLevel> levels;
  // With options.solvation: the total energy less the reference medium's, as `energy`.
  std::optional<double> solvation_energy;
  std::optional<double> solvation_kj_per_mol;
};

// The report of a solve (iterations, residuals, energies in kT and kJ/mol) at temperature temp.
SolverReport solver_report(const PbResult& result, double temp);

// The grids a solve runs on, coarsest first, the requested grid last (APBS's mg-auto set-up: every
// level has grid's point counts; the spacing falls by at most 4 a level, by the same ratio each;
// each intermediate grid is centred on the requested one and moved back inside its parent where
// it sticks out). One grid when the solve does not focus. Throws Error for a coarse size shorter
// than the grid, or a grid that does not fit inside the coarse one.
std::vector<GridSpec> pb_focus_grids(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options);
// "2 grids: 97x65x65 points, 1.02 Å, origin (…) (mdh), then the requested one (focus)", for logs
// and metadata.
std::string describe_focus(const std::vector<GridSpec>& grids, const PbOptions& options);

// Point counts the multigrid coarsens well (n = c·16 + 1: at least 4 levels, as APBS's dime
// c·2^(nlev+1) + 1): each count rounded up to the next such, at least 17. Other counts solve too,
// with fewer levels and many more iterations; a caller laying a grid for pb grows it to these.
std::array<std::int64_t, 3> pb_dims(const std::array<std::int64_t, 3>& dims);

// The host memory solve_pb needs at its peak (float64 coefficients, right-hand side, potential,
// the solver's vectors and coarse levels): 17 float64 arrays of the grid (20 for Newton's
// method), one more unless focusing is off (the focused boundary) and one more with solvation,
// bytes. solve_pb checks it against the memory available before it allocates anything.
std::size_t pb_host_bytes(const GridSpec& grid, const PbOptions& options);

// One grid's solve: the potential on every point and the solver's report.
struct PbGridSolution {
  std::vector<double> potential;
  std::vector<double> residual_history;
  int iterations = 0;
  bool converged = false;
  double setup_seconds = 0;  // coefficients, source and boundary (wall)
  double solve_seconds = 0;  // the solver, with any copy back (wall)
  std::string stages;         // a backend's finer timings, for the debug log (may be empty)
};

// Discretises and solves the PB equation on one grid (atoms and options already checked):
// boundary, when given, holds the values of the grid's outer faces (pb_face_points' order, as
// pb_focus_boundary makes them); otherwise options.bcfl sets them. The CPU's is pb_solve_grid_cpu; a device
// backend passes its own (engine/pb_cuda.hpp), and solve_pb does the rest (checks, energy).
using PbGridSolver = PbGridSolution (*)(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options,
                                       double scale, const std::vector<double>* boundary);
PbGridSolution pb_solve_grid_cpu(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options,
                                 double scale, const std::vector<double>* boundary);

// Solves the PB equation on every point of grid, on the focusing grids of pb_focus_grids (each
// with `solver`; the energy as APBS's mg-auto: the requested grid's, plus the coarser grids'
// field and ion terms outside their finer grid), and with options.solvation the reference medium
// on the same grids. atoms must carry radii (has_radii) and lie strictly inside the grid; scale
// converts e/Å to the output unit (k_C·unit factor, as make_pair_kernel(physics).scale with
// dielectric 1: 560.4 for kT/e at 298.15 K). Logs the focusing grids it chose. Throws Error
// for bad options or atoms, and when the solver stops above the tolerance (the residual history
// in the message).
PbResult solve_pb(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options,
                  double scale, PbGridSolver solver = pb_solve_grid_cpu);

}  // namespace dcsgrid::engine
