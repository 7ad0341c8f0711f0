#include "dcsgrid/engine/pb.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/pb_discretize.hpp"
#include "dcsgrid/engine/pb_multigrid.hpp"

namespace dcsgrid::engine {
namespace {

void require_positive(double value, const char* name) {
  if (!(value > 0) || !std::isfinite(value))
    throw Error(fmt::format("pb: {} must be positive, got {}", name, value));
}

// Atoms need radii and must lie strictly inside the grid's box: the surface and charge maps ignore
// none of them, and no boundary point coincides with an atom.
void check_atoms(const AtomSet& atoms, const GridSpec& grid) {
  if (atoms.empty()) throw Error("pb: no atoms");
  if (!atoms.has_radii())
    throw Error("pb needs a radius for every atom (a PQR input, or force-field radii)");
  const auto far = grid.far_corner();
  for (std::size_t n = 0; n < atoms.size(); ++n) {
    if (!(atoms.r[n] >= 0) || !std::isfinite(atoms.r[n]))
      throw Error(fmt::format("pb: atom {} has radius {}; radii must be zero or positive", n + 1, atoms.r[n]));
    const double p[3] = {atoms.x[n], atoms.y[n], atoms.z[n]};
    for (int d = 0; d < 3; ++d)
      if (!(p[d] > grid.origin[d] && p[d] < far[d]))
        throw Error(fmt::format("pb: atom {} at ({}, {}, {}) Å is not inside the grid ({}); the grid "
                                "must contain the molecule",
                                n + 1, p[0], p[1], p[2], grid.describe()));
  }
}

// The factor that turns the output unit (scale: k_C in it) into kT/e.
double to_kt_factor(const PbOptions& o, double scale) {
  return kCoulomb * unit_factor(Unit::kT_per_e, o.temp) / scale;
}

}  // namespace

void pb_keep_faces(const GridSpec& grid, std::vector<double>& phi) {
  for (std::int64_t k = 1; k + 1 < grid.nz(); ++k)
    for (std::int64_t j = 1; j + 1 < grid.ny(); ++j)
      std::fill_n(phi.begin() + grid.index(1, j, k), grid.nx() - 2, 0.0);
}

IonTerm pb_ion_term(const PbOptions& o, double scale) {
  IonTerm term;
  term.to_kt = to_kt_factor(o, scale);
  const double sum = 2 * ionic_strength(o);  // Σ c·z²
  for (const PbIon& ion : o.ions) {
    term.valence.push_back(ion.charge);
    term.weight.push_back(sum > 0 ? ion.concentration * ion.charge / sum : 0.0);
  }
  return term;
}

bool solves_nonlinear(const PbOptions& options) {
  return options.nonlinear && kappa_bar_squared(options) > 0;
}

std::vector<double> pb_source(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale) {
  std::vector<double> f = pb_charge(atoms, grid, options.chgm);
  const double volume = grid.spacing[0] * grid.spacing[1] * grid.spacing[2];
  for (double& v : f) v *= 4 * std::numbers::pi * scale / volume;
  return f;
}

namespace {

// APBS's nonlinear "Total electrostatic energy" (Vpmg_energy), kT: Σ q·u − ½Σ_faces ε·(Δu/h)²·V/(4π·l)
// − Σ κ̄²·a/(Σc z²)·Σ_i c_i (e^(−z_i u) − 1)·V/(4π·l), u = φ·t in kT/e, V the cell volume, l the
// vacuum Bjerrum length (scale_kt, Å), a the ion accessibility. The dielectric's face sums
// run, as APBS's, over the points with every index below its last.
double nonlinear_energy_kt(const GridSpec& grid, const PbDielectric& eps, const std::vector<double>& access,
                           const std::vector<double>& charge, const std::vector<double>& phi,
                           const PbOptions& o, double to_kt, double scale_kt) {
  const auto h = grid.spacing;
  const double volume = h[0] * h[1] * h[2];
  double qf = 0, diel = 0, qm = 0;
  const std::size_t sy = grid.dims[0], sz = grid.plane_size();
  for (std::size_t n = 0; n < phi.size(); ++n) qf += charge[n] * phi[n] * to_kt;
  for (std::int64_t k = 0; k + 1 < grid.nz(); ++k)
    for (std::int64_t j = 0; j + 1 < grid.ny(); ++j)
      for (std::int64_t i = 0; i + 1 < grid.nx(); ++i) {
        const std::size_t p = grid.index(i, j, k);
        const double dx = (phi[p] - phi[p + 1]) * to_kt / h[0], dy = (phi[p] - phi[p + sy]) * to_kt / h[1],
                     dz = (phi[p] - phi[p + sz]) * to_kt / h[2];
        diel += eps.eps_x[p] * dx * dx + eps.eps_y[p] * dy * dy + eps.eps_z[p] * dz * dz;
      }
  const double zks2 = kappa_bar_squared(o) / (2 * ionic_strength(o));
  for (std::size_t n = 0; n < phi.size(); ++n) {
    if (access[n] <= 0) continue;
    for (const PbIon& ion : o.ions)
      qm += access[n] * zks2 * ion.concentration *
            (std::exp(std::clamp(-ion.charge * phi[n] * to_kt, -85.0, 85.0)) - 1);
  }
  const double per_kt = volume / (4 * std::numbers::pi * scale_kt);
  return qf - 0.5 * diel * per_kt - qm * per_kt;
}

// APBS's "Total electrostatic energy" of a solved grid in the potential's unit × e: ½Σqφ over the
// charges as spread for spl2, else at the atoms with trilinear interpolation of φ (the spl0
// spread); nonlinear, the field and mobile-ion terms as well (nonlinear_energy_kt).
double pb_energy(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                 const std::vector<double>& phi) {
  const std::vector<double> q =
      pb_charge(atoms, grid, options.chgm == PbChargeMap::spl4 ? PbChargeMap::spl0 : options.chgm);
  if (solves_nonlinear(options)) {
    // The face dielectric and accessibility went into the solver; rebuilt rather than kept.
    const PbDielectric eps = pb_dielectric(atoms, grid, options);
    const std::vector<double> access = pb_ion_accessibility(atoms, grid, options);
    const double to_kt = to_kt_factor(options, scale);
    return nonlinear_energy_kt(grid, eps, access, q, phi, options, to_kt, scale * to_kt) / to_kt;
  }
  double sum = 0;
  for (std::size_t n = 0; n < q.size(); ++n) sum += q[n] * phi[n];
  return 0.5 * sum;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string residual_text(const std::vector<double>& history) {
  std::string text;
  for (std::size_t n = 0; n < history.size(); ++n) text += fmt::format("{}{:.3g}", n ? ", " : "", history[n]);
  return text;
}

}  // namespace

const char* keyword(PbSurface srfm) {
  switch (srfm) {
    case PbSurface::mol: return "mol";
    case PbSurface::smol: return "smol";
    case PbSurface::spl2: return "spl2";
    case PbSurface::spl4: break;
  }
  return "spl4";
}
const char* keyword(PbChargeMap chgm) {
  switch (chgm) {
    case PbChargeMap::spl0: return "spl0";
    case PbChargeMap::spl2: return "spl2";
    case PbChargeMap::spl4: break;
  }
  return "spl4";
}
const char* keyword(PbBoundary bcfl) {
  switch (bcfl) {
    case PbBoundary::zero: return "zero";
    case PbBoundary::sdh: return "sdh";
    case PbBoundary::mdh: break;
  }
  return "mdh";
}

double ionic_strength(const PbOptions& options) {
  double sum = 0;
  for (const PbIon& ion : options.ions) sum += 0.5 * ion.concentration * ion.charge * ion.charge;
  return sum;
}

double max_ion_radius(const PbOptions& options) {
  double r = 0;
  for (const PbIon& ion : options.ions) r = std::max(r, ion.radius);
  return r;
}

double kappa_bar_squared(const PbOptions& options) {
  const double kappa = debye_kappa(ionic_strength(options), options.sdie, options.temp);
  return options.sdie * kappa * kappa;
}

void validate(const PbOptions& o) {
  require_positive(o.pdie, "the solute dielectric (pdie)");
  require_positive(o.sdie, "the solvent dielectric (sdie)");
  require_positive(o.temp, "the temperature (K)");
  require_positive(o.sdens, "the surface density (sdens, points/Å²)");
  require_positive(o.swin, "the spline window (swin, Å)");
  require_positive(o.tolerance, "the solver tolerance");
  if (!(o.srad >= 0) || !std::isfinite(o.srad))
    throw Error(fmt::format("pb: the probe radius (srad) must be zero or positive, got {}", o.srad));
  if (o.max_iterations < 1)
    throw Error(fmt::format("pb: the iteration limit must be at least 1, got {}", o.max_iterations));
  double net = 0;
  for (std::size_t n = 0; n < o.ions.size(); ++n) {
    const PbIon& ion = o.ions[n];
    if (!std::isfinite(ion.charge) || ion.charge == 0 || !(ion.concentration >= 0) ||
        !std::isfinite(ion.concentration) || !(ion.radius >= 0) || !std::isfinite(ion.radius))
      throw Error(fmt::format("pb: ion {} (charge {}, {} mol/L, radius {} Å) needs a non-zero charge, "
                              "a concentration ≥ 0 and a radius ≥ 0",
                              n + 1, ion.charge, ion.concentration, ion.radius));
    net += ion.charge * ion.concentration;
  }
  if (std::abs(net) > 1e-9)
    throw Error(fmt::format("pb: the ions are not neutral (Σ charge·concentration = {} mol/L)", net));
}

std::string describe(const PbOptions& o) {
  std::string ions = o.ions.empty() ? "no ions" : "ions";
  for (const PbIon& ion : o.ions)
    ions += fmt::format(" {:+g}e {:g} M r {:g} Å;", ion.charge, ion.concentration, ion.radius);
  if (!o.ions.empty()) ions.pop_back();
  const bool spline = o.srfm == PbSurface::spl2 || o.srfm == PbSurface::spl4;
  const std::string surface = spline ? fmt::format("{} (swin {:g} Å)", keyword(o.srfm), o.swin)
                                     : fmt::format("srad {:g} Å, sdens {:g}, {}", o.srad, o.sdens, keyword(o.srfm));
  return fmt::format("pdie {:g}, sdie {:g}, {}, {}, {}, {}, {:g} K, {}", o.pdie, o.sdie, ions, surface,
                     keyword(o.chgm), keyword(o.bcfl), o.temp, o.nonlinear ? "nonlinear" : "linear");
}

std::array<std::int64_t, 3> pb_dims(const std::array<std::int64_t, 3>& dims) {
  std::array<std::int64_t, 3> out;
  for (int d = 0; d < 3; ++d) out[d] = std::max<std::int64_t>(1, (dims[d] - 1 + 15) / 16) * 16 + 1;
  return out;
}

std::size_t pb_host_bytes(const GridSpec& grid, const PbOptions& options) {
  return (options.nonlinear ? 20 : 17) * sizeof(double) * grid.point_count();
}

PbGridSolution pb_solve_grid_cpu(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options,
                                 double scale, const std::vector<double>* boundary) {
  require_host_memory(grid, pb_host_bytes(grid, options) / grid_bytes(grid));
  const auto start = std::chrono::steady_clock::now();
  PbOperator op;
  op.dims = grid.dims;
  op.spacing = grid.spacing;
  {
    PbDielectric eps = pb_dielectric(atoms, grid, options);
    op.eps_x = std::move(eps.eps_x);
    op.eps_y = std::move(eps.eps_y);
    op.eps_z = std::move(eps.eps_z);
  }
  op.c = pb_ion_accessibility(atoms, grid, options);
  const double kappa2 = kappa_bar_squared(options);
  for (double& c : op.c) c *= kappa2;
  std::vector<double> f = pb_source(atoms, grid, options, scale);

  PbGridSolution solution;
  if (boundary) {
    solution.potential = *boundary;
    pb_keep_faces(grid, solution.potential);
  } else {
    solution.potential.assign(grid.point_count(), 0.0);
    pb_boundary(atoms, grid, options, scale, solution.potential);
  }
  solution.setup_seconds = seconds_since(start);
  MultigridOptions mg;
  mg.tolerance = options.tolerance;
  mg.max_iterations = options.max_iterations;
  MultigridReport report = solves_nonlinear(options)
                               ? solve_newton(std::move(op), f, solution.potential, pb_ion_term(options, scale), mg)
                               : solve_multigrid(std::move(op), f, solution.potential, mg);
  solution.residual_history = std::move(report.residual_history);
  solution.iterations = report.iterations;
  solution.converged = report.converged;
  solution.solve_seconds = seconds_since(start) - solution.setup_seconds;
  return solution;
}

PbResult solve_pb(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                  PbGridSolver solver) {
  validate(options);
  validate(grid);
  require_positive(scale, "the unit scale");
  if (grid.nx() < 3 || grid.ny() < 3 || grid.nz() < 3)
    throw Error(fmt::format("pb: the grid ({}) needs at least 3 points along each axis", grid.describe()));
  check_atoms(atoms, grid);

  PbGridSolution solution = solver(atoms, grid, options, scale, nullptr);
  spdlog::debug("pb: {}: coefficients, source and boundary {:.4f} s, solve {:.4f} s, {} iterations",
                grid.describe(), solution.setup_seconds, solution.solve_seconds, solution.iterations);
  PbResult result;
  result.potential = std::move(solution.potential);
  result.residual_history = std::move(solution.residual_history);
  result.iterations = solution.iterations;
  if (!solution.converged)
    throw Error(fmt::format("pb: the solver did not reach the relative residual {:g} in {} iterations "
                            "(residuals: {})",
                            options.tolerance, options.max_iterations, residual_text(result.residual_history)));
  result.energy = pb_energy(atoms, grid, options, scale, result.potential);
  // ½Σqφ/scale is in e²/Å; k_C turns it into kcal/mol.
  result.energy_kj_per_mol = result.energy / scale * kCoulomb * 4.184;
  return result;
}

}  // namespace dcsgrid::engine
