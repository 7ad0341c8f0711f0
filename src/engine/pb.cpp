#include "dcsgrid/engine/pb.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <numbers>
#include <optional>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
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

double pb_source_factor(const GridSpec& grid, double scale) {
  const double volume = grid.spacing[0] * grid.spacing[1] * grid.spacing[2];
  return 4 * std::numbers::pi * scale / volume;
}

std::vector<double> pb_source(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale) {
  std::vector<double> f = pb_charge(atoms, grid, options.chgm);
  const double factor = pb_source_factor(grid, scale);
  for (double& v : f) v *= factor;
  return f;
}

namespace {

// APBS's partition of a coarser grid by the finer one inside it (Vpmg_setPart, flipped by
// extEnergy): 0 at the points within half a spacing of the finer grid's box, 1 elsewhere. A point
// is inside when its index is inside along every axis: the axes' tests, made once each.
class OutsideWeight {
 public:
  OutsideWeight(const GridSpec& grid, const GridSpec& inner) : nx_(std::size_t(grid.nx())) {
    const auto lo = inner.origin, hi = inner.far_corner();
    std::array<std::vector<char>, 3> inside;
    for (int d = 0; d < 3; ++d) {
      inside[d].resize(std::size_t(grid.dims[d]));
      for (std::int64_t n = 0; n < grid.dims[d]; ++n) {
        const double p = grid.position(d == 0 ? n : 0, d == 1 ? n : 0, d == 2 ? n : 0)[d];
        inside[d][n] = p > lo[d] - 0.5 * grid.spacing[d] && p < hi[d] + 0.5 * grid.spacing[d];
      }
    }
    inside_x_ = std::move(inside[0]);
    row_inside_.resize(std::size_t(grid.ny() * grid.nz()));
    for (std::int64_t k = 0; k < grid.nz(); ++k)
      for (std::int64_t j = 0; j < grid.ny(); ++j) row_inside_[std::size_t(k * grid.ny() + j)] = inside[1][j] && inside[2][k];
  }
  double operator()(std::size_t index) const {
    const std::size_t row = index / nx_;
    return row_inside_[row] && inside_x_[index - row * nx_] ? 0.0 : 1.0;
  }

 private:
  std::size_t nx_;
  std::vector<char> inside_x_, row_inside_;  // by i; by row (j, k)
};

// Σ q·φ over the charges as spread by chgm (each atom's shares at their points), each point counted
// weight(point) times (all once without weight). Threads take blocks of kPbBlockAtoms atoms; the
// blocks' sums are added in atom order, so the sum is the same for any number of threads.
double charge_potential_sum(const AtomSet& atoms, const GridSpec& grid, PbChargeMap chgm,
                            const std::vector<double>& phi, const OutsideWeight* weight) {
  const std::size_t blocks = (atoms.size() + kPbBlockAtoms - 1) / kPbBlockAtoms;
  std::vector<double> block_sum(blocks, 0.0);
#pragma omp parallel num_threads(team_size())
  {
    std::vector<PbChargeShare> shares;
#pragma omp for schedule(dynamic)
    for (std::size_t b = 0; b < blocks; ++b) {
      pb_charge_shares(atoms, b * kPbBlockAtoms, (b + 1) * kPbBlockAtoms, grid, chgm, shares);
      double sum = 0;
      for (const PbChargeShare& s : shares) sum += (weight ? (*weight)(s.index) : 1.0) * s.charge * phi[s.index];
      block_sum[b] = sum;
    }
  }
  double sum = 0;
  for (const double s : block_sum) sum += s;
  return sum;
}

// APBS's nonlinear "Total electrostatic energy" (Vpmg_energy), kT: Σ q·u − ½Σ_faces ε·(Δu/h)²·V/(4π·l)
// − Σ κ̄²·a/(Σc z²)·Σ_i c_i (e^(−z_i u) − 1)·V/(4π·l), u = φ·t in kT/e, V the cell volume, l the
// vacuum Bjerrum length (scale_kt, Å), a the ion accessibility. The dielectric's face sums
// run, as APBS's, over the points with every index below its last.
// With weight (focusing's coarser grids), each point counts weight(n) times and each face the mean
// of its two points' (APBS's partition vector), and the charges only as spread for spl2.
double nonlinear_energy_kt(const GridSpec& grid, const PbDielectric& eps, const std::vector<double>& access,
                           double charge_potential, const std::vector<double>& phi, const PbOptions& o,
                           double to_kt, double scale_kt, const OutsideWeight* weight) {
  const auto h = grid.spacing;
  const double volume = h[0] * h[1] * h[2];
  double qf = 0, diel = 0, qm = 0;
  const std::size_t sy = grid.dims[0], sz = grid.plane_size();
  const auto w = [weight](std::size_t n) { return weight ? (*weight)(n) : 1.0; };
  if (!weight || o.chgm == PbChargeMap::spl2) qf = charge_potential * to_kt;
  for (std::int64_t k = 0; k + 1 < grid.nz(); ++k)
    for (std::int64_t j = 0; j + 1 < grid.ny(); ++j)
      for (std::int64_t i = 0; i + 1 < grid.nx(); ++i) {
        const std::size_t p = grid.index(i, j, k);
        const double dx = (phi[p] - phi[p + 1]) * to_kt / h[0], dy = (phi[p] - phi[p + sy]) * to_kt / h[1],
                     dz = (phi[p] - phi[p + sz]) * to_kt / h[2];
        diel += 0.5 * (eps.eps_x[p] * dx * dx * (w(p) + w(p + 1)) + eps.eps_y[p] * dy * dy * (w(p) + w(p + sy)) +
                       eps.eps_z[p] * dz * dz * (w(p) + w(p + sz)));
      }
  const double zks2 = kappa_bar_squared(o) / (2 * ionic_strength(o));
  for (std::size_t n = 0; n < phi.size(); ++n) {
    if (access[n] <= 0 || w(n) == 0) continue;
    for (const PbIon& ion : o.ions)
      qm += w(n) * access[n] * zks2 * ion.concentration *
            (std::exp(std::clamp(-ion.charge * phi[n] * to_kt, -85.0, 85.0)) - 1);
  }
  const double per_kt = volume / (4 * std::numbers::pi * scale_kt);
  return qf - 0.5 * diel * per_kt - qm * per_kt;
}

// APBS's "Total electrostatic energy" of a solved grid in the potential's unit × e: ½Σqφ over the
// charges as spread for spl2, else at the atoms with trilinear interpolation of φ (the spl0
// spread); nonlinear, the field and mobile-ion terms as well (nonlinear_energy_kt). With weight
// (a coarser focusing grid: 1 outside the finer grid, 0 inside) only what lies outside counts, as
// APBS's extEnergy: the atoms are all inside, so the charges count only as spread for spl2.
// The charges' sum runs over each atom's shares (pb_charge_shares), not over the grid's points.
double pb_energy(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                 const std::vector<double>& phi, const OutsideWeight* weight) {
  const double charge_potential = charge_potential_sum(
      atoms, grid, options.chgm == PbChargeMap::spl4 ? PbChargeMap::spl0 : options.chgm, phi, weight);
  if (solves_nonlinear(options)) {
    // The face dielectric and accessibility went into the solver; rebuilt rather than kept.
    const PbDielectric eps = pb_dielectric(atoms, grid, options);
    const std::vector<double> access = pb_ion_accessibility(atoms, grid, options);
    const double to_kt = to_kt_factor(options, scale);
    return nonlinear_energy_kt(grid, eps, access, charge_potential, phi, options, to_kt, scale * to_kt, weight) /
           to_kt;
  }
  return 0.5 * charge_potential;
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
const char* keyword(PbFocus focus) {
  switch (focus) {
    case PbFocus::automatic: return "auto";
    case PbFocus::always: return "always";
    case PbFocus::never: break;
  }
  return "never";
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
  const bool coarse_given = o.coarse_size != std::array<double, 3>{};
  for (const double length : o.coarse_size)
    if (coarse_given && (!(length > 0) || !std::isfinite(length)))
      throw Error(fmt::format("pb: the coarse grid's lengths must be positive, got {:g}, {:g}, {:g} Å",
                              o.coarse_size[0], o.coarse_size[1], o.coarse_size[2]));
  if (coarse_given && o.focus == PbFocus::never)
    throw Error("pb: a coarse grid size is given with focusing turned off (a boundary of zero, sdh or mdh on "
                "the grid itself)");
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
  std::string focus = fmt::format("focusing {}", keyword(o.focus));
  if (o.coarse_size != std::array<double, 3>{})
    focus += fmt::format(" (coarse {:g} x {:g} x {:g} Å)", o.coarse_size[0], o.coarse_size[1], o.coarse_size[2]);
  return fmt::format("pdie {:g}, sdie {:g}, {}, {}, {}, {}, {}, {:g} K, {}{}", o.pdie, o.sdie, ions, surface,
                     keyword(o.chgm), keyword(o.bcfl), focus, o.temp, o.nonlinear ? "nonlinear" : "linear",
                     o.solvation ? ", solvation" : "");
}

std::array<std::int64_t, 3> pb_dims(const std::array<std::int64_t, 3>& dims) {
  std::array<std::int64_t, 3> out;
  for (int d = 0; d < 3; ++d) out[d] = std::max<std::int64_t>(1, (dims[d] - 1 + 15) / 16) * 16 + 1;
  return out;
}

std::size_t pb_host_bytes(const GridSpec& grid, const PbOptions& options) {
  // Focusing holds the finer grid's boundary array during its solve; solvation the map's potential
  // during the reference medium's.
  const std::size_t arrays = (options.nonlinear ? 20 : 17) + (options.focus != PbFocus::never) + options.solvation;
  return arrays * sizeof(double) * grid.point_count();
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
    solution.potential = pb_with_faces(grid, *boundary);
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

namespace {

// The molecule as APBS's mg-auto set-up sees it: the centre of its atoms' box (cgcent mol) and,
// as psize measures it, the extent of its atoms' spheres (at least 0.1 Å).
struct Molecule {
  std::array<double, 3> centre{}, extent{};
};

Molecule molecule_of(const AtomSet& atoms) {
  Molecule m;
  for (int d = 0; d < 3; ++d) {
    const float* x = d == 0 ? atoms.x.data() : d == 1 ? atoms.y.data() : atoms.z.data();
    const auto radius = [&](std::size_t n) { return atoms.has_radii() ? double(atoms.r[n]) : 0.0; };
    double lo = x[0], hi = x[0], lo_r = x[0] - radius(0), hi_r = x[0] + radius(0);
    for (std::size_t n = 1; n < atoms.size(); ++n) {
      lo = std::min(lo, double(x[n]));
      hi = std::max(hi, double(x[n]));
      lo_r = std::min(lo_r, double(x[n]) - radius(n));
      hi_r = std::max(hi_r, double(x[n]) + radius(n));
    }
    m.centre[d] = 0.5 * (lo + hi);
    m.extent[d] = std::max(hi_r - lo_r, 0.1);
  }
  return m;
}

double length_of(const GridSpec& g, int d) { return g.spacing[d] * double(g.dims[d] - 1); }
double centre_of(const GridSpec& g, int d) { return g.origin[d] + 0.5 * length_of(g, d); }

// A grid of `dims` points spanning `length` around `centre`, as APBS lays its meshes.
GridSpec grid_around_centre(const std::array<double, 3>& centre, const std::array<double, 3>& length,
                            const std::array<std::int64_t, 3>& dims) {
  GridSpec g;
  g.dims = dims;
  for (int d = 0; d < 3; ++d) {
    g.spacing[d] = length[d] / double(dims[d] - 1);
    g.origin[d] = centre[d] - 0.5 * length[d];
  }
  return g;
}

constexpr double kFitSlack = 1e-9;  // Å; APBS's VSMALL
constexpr double kApbsSpacingReduction = 0.25;  // APBS's VREDFRAC: the most a level shrinks the spacing

// APBS's mesh repositioning: moves an intermediate grid (centred on the requested one) back inside
// its parent where one end sticks out.
GridSpec fit_inside(GridSpec g, const GridSpec& parent) {
  for (int d = 0; d < 3; ++d) {
    const double below = parent.origin[d] - g.origin[d];
    const double above = g.far_corner()[d] - parent.far_corner()[d];
    if (below >= kFitSlack && above >= kFitSlack)
      throw Error(fmt::format("pb focusing: the grid {} is longer than its coarser grid {} along {}", g.describe(),
                              parent.describe(), "xyz"[d]));
    if (below >= kFitSlack) g.origin[d] += below;
    if (above >= kFitSlack) g.origin[d] -= above;
  }
  return g;
}

void require_inside(const GridSpec& g, const GridSpec& parent, const PbOptions& o) {
  for (int d = 0; d < 3; ++d)
    if (parent.origin[d] - g.origin[d] >= kFitSlack || g.far_corner()[d] - parent.far_corner()[d] >= kFitSlack)
      throw Error(fmt::format("pb focusing: the grid {} reaches beyond the coarser grid {} along {}{}", g.describe(),
                              parent.describe(), "xyz"[d],
                              o.coarse_size != std::array<double, 3>{}
                                  ? " (the coarse grid is centred on the atoms' box: centre the grid on the "
                                    "molecule or give a larger coarse size)"
                                  : ""));
}

// The coarsest grid, or nothing when the solve does not focus.
std::optional<GridSpec> coarse_grid(const AtomSet& atoms, const GridSpec& grid, const PbOptions& o) {
  const bool given = o.coarse_size != std::array<double, 3>{};
  const Molecule mol = molecule_of(atoms);
  std::array<double, 3> length;
  bool tight = false;
  for (int d = 0; d < 3; ++d) {
    const double fine = length_of(grid, d);
    if (given && o.coarse_size[d] < fine - kFitSlack)
      throw Error(fmt::format("pb focusing: the coarse grid ({:g} Å along {}) is shorter than the grid ({:g} Å); "
                              "the coarse size must be at least the grid's",
                              o.coarse_size[d], "xyz"[d], fine));
    tight = tight || fine < kPbCoarseFactor * mol.extent[d];
    length[d] = given ? o.coarse_size[d] : std::max(kPbCoarseFactor * mol.extent[d], fine);
  }
  if (o.focus == PbFocus::automatic && !given && !tight) return std::nullopt;
  GridSpec coarse = grid_around_centre(mol.centre, length, grid.dims);
  // A chosen coarse grid moves to hold the requested one (which need not be centred on the atoms).
  if (!given)
    for (int d = 0; d < 3; ++d)
      coarse.origin[d] = std::clamp(coarse.origin[d], grid.far_corner()[d] - length[d], grid.origin[d]);
  require_inside(grid, coarse, o);
  return coarse;
}

}  // namespace

std::vector<GridSpec> pb_focus_grids(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options) {
  if (options.focus == PbFocus::never || atoms.empty()) return {grid};
  const std::optional<GridSpec> coarse = coarse_grid(atoms, grid, options);
  if (!coarse) return {grid};
  // APBS's NOsh_setupCalcMGAUTO: enough levels that the spacing never falls by more than 4 at once,
  // every level shrinking it by the same ratio along an axis.
  int levels = 2;
  std::array<double, 3> ratio;
  for (int d = 0; d < 3; ++d) {
    ratio[d] = grid.spacing[d] / coarse->spacing[d];
    if (ratio[d] < kApbsSpacingReduction)
      levels = std::max(levels, int(std::ceil(std::log(ratio[d]) / std::log(kApbsSpacingReduction))) + 1);
  }
  std::vector<GridSpec> grids = {*coarse};
  for (int level = 1; level + 1 < levels; ++level) {
    std::array<double, 3> length, centre;
    for (int d = 0; d < 3; ++d) {
      length[d] = length_of(grids.back(), d) * std::pow(ratio[d], 1.0 / double(levels - 1));
      centre[d] = centre_of(grid, d);
    }
    grids.push_back(fit_inside(grid_around_centre(centre, length, grid.dims), grids.back()));
  }
  require_inside(grid, grids.back(), options);
  grids.push_back(grid);
  return grids;
}

std::string describe_focus(const std::vector<GridSpec>& grids, const PbOptions& options) {
  if (grids.size() < 2) return fmt::format("one grid ({})", keyword(options.bcfl));
  std::string text = fmt::format("{} grids: ", grids.size());
  for (std::size_t l = 0; l + 1 < grids.size(); ++l)
    text += fmt::format("{} ({}), ", grids[l].describe(), l == 0 ? keyword(options.bcfl) : "focus");
  return text + "then the requested grid (focus)";
}

namespace {

struct GridsSolution {
  std::vector<double> potential;  // the last grid's
  double energy = 0;
  std::vector<SolverLevel> levels;
};

// Solves on each grid in turn, each one's faces from the one before (focusing), and sums APBS's
// energy: the last grid's, plus each coarser grid's outside its finer one.
GridsSolution solve_on_grids(const AtomSet& atoms, const std::vector<GridSpec>& grids, const PbOptions& options,
                             double scale, PbGridSolver solver, bool reference) {
  GridsSolution out;
  std::vector<double> boundary;
  for (std::size_t l = 0; l < grids.size(); ++l) {
    PbGridSolution s = solver(atoms, grids[l], options, scale, l ? &boundary : nullptr);
    spdlog::debug("pb: {}: coefficients, source and boundary {:.4f} s, solve {:.4f} s, {} iterations{}{}",
                  grids[l].describe(), s.setup_seconds, s.solve_seconds, s.iterations, s.stages.empty() ? "" : "; ",
                  s.stages);
    if (!s.converged)
      throw Error(fmt::format("pb: the solver did not reach the relative residual {:g} in {} iterations{}{} "
                              "(residuals: {})",
                              options.tolerance, options.max_iterations,
                              grids.size() > 1 ? fmt::format(" on the grid {}", grids[l].describe()) : "",
                              reference ? " (the reference medium)" : "", residual_text(s.residual_history)));
    const bool last = l + 1 == grids.size();
    const auto energy_start = std::chrono::steady_clock::now();
    if (last) {
      out.energy += pb_energy(atoms, grids[l], options, scale, s.potential, nullptr);
    } else {
      // Linear with charges not spread by spl2, APBS counts no outside energy.
      if (solves_nonlinear(options) || options.chgm == PbChargeMap::spl2) {
        const OutsideWeight outside(grids[l], grids[l + 1]);
        out.energy += pb_energy(atoms, grids[l], options, scale, s.potential, &outside);
      }
      boundary = pb_focus_boundary(grids[l], s.potential, grids[l + 1]);
    }
    spdlog::debug("pb: {}: energy{} {:.4f} s", grids[l].describe(), last ? "" : " and the next grid's boundary",
                  seconds_since(energy_start));
    out.levels.push_back({grids[l], l ? "focus" : keyword(options.bcfl), reference, s.iterations,
                          std::move(s.residual_history)});
    if (last) out.potential = std::move(s.potential);
  }
  return out;
}

double to_kj_per_mol(double energy, double scale) { return energy / scale * kCoulomb * 4.184; }

}  // namespace

PbResult solve_pb(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                  PbGridSolver solver) {
  validate(options);
  validate(grid);
  require_positive(scale, "the unit scale");
  if (grid.nx() < 3 || grid.ny() < 3 || grid.nz() < 3)
    throw Error(fmt::format("pb: the grid ({}) needs at least 3 points along each axis", grid.describe()));
  check_atoms(atoms, grid);
  const std::vector<GridSpec> grids = pb_focus_grids(atoms, grid, options);
  if (grids.size() > 1)
    spdlog::info("pb focusing (as APBS mg-auto){}: {}",
                 options.focus == PbFocus::automatic && options.coarse_size == std::array<double, 3>{}
                     ? fmt::format(", the grid being shorter than {:g} × the molecule's extent", kPbCoarseFactor)
                     : "",
                 describe_focus(grids, options));

  GridsSolution solved = solve_on_grids(atoms, grids, options, scale, solver, false);
  PbResult result;
  result.potential = std::move(solved.potential);
  result.residual_history = solved.levels.back().residual_history;
  result.iterations = solved.levels.back().iterations;
  result.levels = std::move(solved.levels);
  result.energy = solved.energy;
  // ½Σqφ/scale is in e²/Å; k_C turns it into kcal/mol.
  result.energy_kj_per_mol = to_kj_per_mol(result.energy, scale);
  if (options.solvation) {
    // APBS's usual reference: the solute's dielectric everywhere and no ions, on the same grids.
    PbOptions medium = options;
    medium.sdie = options.pdie;
    medium.ions.clear();
    GridsSolution ref = solve_on_grids(atoms, grids, medium, scale, solver, true);
    result.solvation_energy = result.energy - ref.energy;
    result.solvation_kj_per_mol = to_kj_per_mol(*result.solvation_energy, scale);
    for (SolverLevel& level : ref.levels) result.levels.push_back(std::move(level));
  }
  return result;
}

SolverReport solver_report(const PbResult& result, double temp) {
  const double kt_kj_per_mol = kGasConstant * 4.184 * temp;
  SolverReport report;
  report.method = "pb";
  report.iterations = result.iterations;
  report.residual_history = result.residual_history;
  report.levels = result.levels;
  report.energy_kj_per_mol = result.energy_kj_per_mol;
  report.energy_kt = result.energy_kj_per_mol / kt_kj_per_mol;
  if (result.solvation_kj_per_mol) {
    report.solvation_kj_per_mol = result.solvation_kj_per_mol;
    report.solvation_kt = *result.solvation_kj_per_mol / kt_kj_per_mol;
  }
  return report;
}

}  // namespace dcsgrid::engine
