#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/pb_discretize.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/atom_cells.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "pb_discretize_point.hpp"

namespace dcsgrid::engine {
namespace {

using pb_point::IndexBox;
using pb_point::kApbsSmall;
using pb_point::kSplineSmall;
using pb_point::Lattice;
using pb_point::lattice_of;
using pb_point::SplineSwitch;
using pb_point::Vec3;

// Sets value at every lattice point within r (≤) of centre, as APBS's markSphere (the same index
// range and the same arithmetic, so that ties fall the same way).
void mark_sphere(double r, const Vec3& centre, const Lattice& l, std::vector<double>& a, double value) {
  const Vec3 pos = pb_point::relative_to(l, centre[0], centre[1], centre[2]);
  const double r2 = r * r;
  const IndexBox box = pb_point::sphere_box(r, pos, l);
  // z outermost for our layout; a row whose (dz² + dy²) is already beyond r² is skipped.
  for (std::int64_t k = box.lo[2]; k <= box.hi[2]; ++k) {
    const double dz = pb_point::axis_offset(pos, l, 2, k);
    for (std::int64_t j = box.lo[1]; j <= box.hi[1]; ++j) {
      const double dy = pb_point::axis_offset(pos, l, 1, j);
      if (pb_point::distance2(dz, dy, 0.0) > r2) continue;
      double* row = a.data() + l.at(0, j, k);
      for (std::int64_t i = box.lo[0]; i <= box.hi[0]; ++i)
        if (pb_point::distance2(dz, dy, pb_point::axis_offset(pos, l, 0, i)) <= r2) row[i] = value;
    }
  }
}

Vec3 position(const AtomSet& atoms, std::size_t n) { return {atoms.x[n], atoms.y[n], atoms.z[n]}; }

// APBS's ivdwAccExclus: none of the candidate atoms has p within (radius + probe), strictly.
// The last atom that covered a point is tried first: neighbouring sphere points share it.
bool accessible(const AtomSet& atoms, const Vec3& p, double probe, const std::vector<std::size_t>& candidates,
                std::size_t& last_cover) {
  const auto covers = [&](std::size_t a) {
    return pb_point::covers(p, atoms.x[a], atoms.y[a], atoms.z[a], atoms.r[a], probe);
  };
  if (last_cover < candidates.size() && covers(candidates[last_cover])) return false;
  for (std::size_t c = 0; c < candidates.size(); ++c)
    if (covers(candidates[c])) {
      last_cover = c;
      return false;
    }
  return true;
}

// Every atom's probe-sphere points that no other atom covers (APBS's SAS points).
std::vector<Vec3> accessible_surface_points(const AtomSet& atoms, const PbOptions& options) {
  const double max_radius = *std::max_element(atoms.r.begin(), atoms.r.end());
  const auto sphere = pb_point::probe_sphere(atoms, options);
  const AtomCells cells(atoms, std::max(max_radius + options.srad, 0.5));
  std::vector<std::vector<Vec3>> per_atom(atoms.size());
#pragma omp parallel num_threads(team_size())
  {
    std::vector<std::size_t> candidates;
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t a = 0; a < std::int64_t(atoms.size()); ++a) {
      if (atoms.r[a] < kApbsSmall) continue;
      const double rad = atoms.r[a] + options.srad;
      const Vec3 c = position(atoms, a);
      // An atom covers a point of this sphere only if its centre is within rad + its radius +
      // srad of c (a hair more, so rounding never drops one).
      cells.near(c, rad + options.srad + 1e-6, std::size_t(a), candidates);
      std::size_t last_cover = 0;
      for (const Vec3& s : sphere) {
        const Vec3 p = pb_point::probe_point(c, rad, s);
        if (accessible(atoms, p, options.srad, candidates, last_cover)) per_atom[a].push_back(p);
      }
    }
  }
  std::vector<Vec3> points;
  for (const auto& v : per_atom) points.insert(points.end(), v.begin(), v.end());
  return points;
}

// APBS's smoothing (fillcoCoefMolDielSmooth) of the three face grids, from their inverses.
void smooth_dielectric(PbDielectric& d, const GridSpec& grid) {
  const Lattice l = lattice_of(grid);
  std::array<std::vector<double>*, 3> eps = {&d.eps_x, &d.eps_y, &d.eps_z};
  std::array<std::vector<double>, 3> inv;
  for (int axis = 0; axis < 3; ++axis) {
    inv[axis].resize(eps[axis]->size());
    std::transform(eps[axis]->begin(), eps[axis]->end(), inv[axis].begin(), [](double e) { return 1 / e; });
  }
  const auto inverse = [&](int axis, std::size_t p) { return inv[axis][p]; };
  for (int own = 0; own < 3; ++own) {
    std::vector<double>& out = *eps[own];
#pragma omp parallel for num_threads(team_size()) schedule(static)
    for (std::int64_t k = 0; k < l.n[2]; ++k)
      for (std::int64_t j = 0; j < l.n[1]; ++j)
        for (std::int64_t i = 0; i < l.n[0]; ++i)
          out[l.at(i, j, k)] = pb_point::smoothed_dielectric(inverse, own, l, i, j, k);
  }
}

// Multiplies each lattice value within the switch's outer radius of centre by the switch (0 within
// its inner radius); a value already below 1e-12 (APBS's VPMGSMALL) is left as it is.
void multiply_spline_switch(const SplineSwitch& sw, const Vec3& centre, const Lattice& l, std::vector<double>& a) {
  const Vec3 pos = pb_point::relative_to(l, centre[0], centre[1], centre[2]);
  const IndexBox box = pb_point::switch_box(sw.outer(), pos, l);
  for (std::int64_t k = box.lo[2]; k <= box.hi[2]; ++k) {
    const double dz = pb_point::axis_offset(pos, l, 2, k);
    for (std::int64_t j = box.lo[1]; j <= box.hi[1]; ++j) {
      const double dy = pb_point::axis_offset(pos, l, 1, j);
      for (std::int64_t i = box.lo[0]; i <= box.hi[0]; ++i) {
        double& v = a[l.at(i, j, k)];
        v = sw.apply(v, pb_point::distance2(dz, dy, pb_point::axis_offset(pos, l, 0, i)));
      }
    }
  }
}

bool spline_surface(PbSurface srfm) { return srfm == PbSurface::spl2 || srfm == PbSurface::spl4; }

double bspline2(double x) {  // APBS's charge B-spline, support [0, 3]
  const double m2m = (x >= 0 && x <= 2) ? 1 - std::abs(x - 1) : 0.0;
  const double m2 = (x >= 1 && x <= 3) ? 1 - std::abs(x - 2) : 0.0;
  return (x >= 0 && x <= 3) ? 0.5 * x * m2m + 0.5 * (3 - x) * m2 : 0.0;
}

double bspline4(double x) {  // APBS's quintic charge B-spline, support (0, 5]
  if (x <= 0 || x > 5) return 0.0;
  if (x <= 1) return x * x * x * x / 24;
  if (x <= 2) {
    const double m = x - 1, m2 = m * m;
    return -1.0 / 8 + x / 6 + m2 * (0.25 + m / 6 - m2 / 6);
  }
  if (x <= 3) {
    const double m = x - 2, m2 = m * m;
    return -13.0 / 24 + 0.5 * x + m2 * (-0.25 - 0.5 * m + 0.25 * m2);
  }
  if (x <= 4) {
    const double m = x - 3, m2 = m * m;
    return 47.0 / 24 - 0.5 * x + m2 * (-0.25 + 0.5 * m - m2 / 6);
  }
  const double m = x - 4, m2 = m * m;
  return 17.0 / 24 - x / 6 + m2 * (0.25 - m / 6 + m2 / 24);
}

// q spread with weights w(offset + i − f) per axis over indices floor(f) − reach .. ceil(f) + reach,
// clamped into the grid (as APBS: the clamped ends lose their share): add(index, share) per point.
template <typename Weight, typename Add>
void spread_bspline(const Lattice& l, const Vec3& pos, double q, int reach, double offset, Weight w, Add&& add) {
  std::array<std::int64_t, 3> lo, hi;
  Vec3 f;
  for (int d = 0; d < 3; ++d) {
    f[d] = (pos[d] - l.min[d]) / l.h[d];
    lo[d] = std::max<std::int64_t>(std::int64_t(std::floor(f[d])) - reach, 0);
    hi[d] = std::min<std::int64_t>(std::int64_t(std::ceil(f[d])) + reach, l.n[d] - 1);
  }
  // Each axis's weights once (at most 2·reach + 2 of them), not once a point.
  std::array<std::array<double, 8>, 3> weight;
  for (int d = 0; d < 3; ++d)
    for (std::int64_t n = lo[d]; n <= hi[d]; ++n) weight[d][n - lo[d]] = w(offset + (double(n) - f[d]));
  for (std::int64_t i = lo[0]; i <= hi[0]; ++i) {
    const double wx = weight[0][i - lo[0]];
    for (std::int64_t j = lo[1]; j <= hi[1]; ++j) {
      const double wy = weight[1][j - lo[1]];
      for (std::int64_t k = lo[2]; k <= hi[2]; ++k) add(l.at(i, j, k), q * wx * wy * weight[2][k - lo[2]]);
    }
  }
}

template <typename Add>
void spread_spl0(const Lattice& l, const Vec3& pos, double q, Add&& add) {
  std::array<std::int64_t, 2> idx[3];
  std::array<double, 2> w[3];
  for (int d = 0; d < 3; ++d) {
    const double f = (pos[d] - l.min[d]) / l.h[d];
    idx[d] = {std::int64_t(std::floor(f)), std::int64_t(std::ceil(f))};
    const double t = f - std::floor(f);
    w[d] = {1 - t, t};
  }
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c) add(l.at(idx[0][a], idx[1][b], idx[2][c]), q * w[0][a] * w[1][b] * w[2][c]);
}

// The charges of atoms [first, end) spread by chgm, atom by atom: add(index, share) for each point
// of its stencil.
template <typename Add>
void spread_charges(const AtomSet& atoms, std::size_t first, std::size_t end, const GridSpec& grid, PbChargeMap chgm,
                    Add&& add) {
  const Lattice l = lattice_of(grid);
  for (std::size_t n = first; n < end; ++n) {
    if (atoms.q[n] == 0) continue;
    const Vec3 p = position(atoms, n);
    switch (chgm) {
      case PbChargeMap::spl0: spread_spl0(l, p, atoms.q[n], add); break;
      case PbChargeMap::spl2: spread_bspline(l, p, atoms.q[n], 1, 1.5, bspline2, add); break;
      case PbChargeMap::spl4: spread_bspline(l, p, atoms.q[n], 2, 2.5, bspline4, add); break;
    }
  }
}

}  // namespace

PbDielectric pb_dielectric(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options) {
  PbDielectric d;
  std::array<std::vector<double>*, 3> eps = {&d.eps_x, &d.eps_y, &d.eps_z};
  if (spline_surface(options.srfm)) {
#pragma omp parallel for num_threads(team_size()) schedule(static, 1)
    for (int axis = 0; axis < 3; ++axis) {
      const Lattice l = lattice_of(grid, axis);
      std::vector<double>& a = *eps[axis];
      a.assign(grid.point_count(), 1.0);  // the solvent fraction, then ε
      for (std::size_t n = 0; n < atoms.size(); ++n)
        if (atoms.r[n] > kSplineSmall)
          multiply_spline_switch(SplineSwitch(options.srfm, atoms.r[n], options.swin), position(atoms, n), l, a);
      for (double& v : a) v = pb_point::spline_dielectric(v, options.pdie, options.sdie);
    }
    return d;
  }
  const std::vector<Vec3> surface =
      options.srad > kApbsSmall ? accessible_surface_points(atoms, options) : std::vector<Vec3>{};
  // One face grid per thread: the marks of different atoms overlap, the grids do not.
#pragma omp parallel for num_threads(team_size()) schedule(static, 1)
  for (int axis = 0; axis < 3; ++axis) {
    const Lattice l = lattice_of(grid, axis);
    std::vector<double>& a = *eps[axis];
    a.assign(grid.point_count(), options.sdie);
    for (std::size_t n = 0; n < atoms.size(); ++n)
      if (atoms.r[n] > kApbsSmall) mark_sphere(atoms.r[n] + options.srad, position(atoms, n), l, a, options.pdie);
    for (const Vec3& p : surface) mark_sphere(options.srad, p, l, a, options.sdie);
  }
  if (options.srfm == PbSurface::smol) smooth_dielectric(d, grid);
  return d;
}

std::vector<double> pb_ion_accessibility(const AtomSet& atoms, const GridSpec& grid,
                                         const PbOptions& options) {
  if (ionic_strength(options) <= 0) return std::vector<double>(grid.point_count(), 0.0);
  std::vector<double> access(grid.point_count(), 1.0);
  const Lattice l = lattice_of(grid);
  const double ion_radius = max_ion_radius(options);
  for (std::size_t n = 0; n < atoms.size(); ++n) {
    if (spline_surface(options.srfm)) {
      if (atoms.r[n] > kSplineSmall)
        multiply_spline_switch(SplineSwitch(options.srfm, atoms.r[n] + ion_radius, options.swin),
                               position(atoms, n), l, access);
    } else if (atoms.r[n] > kApbsSmall) {
      mark_sphere(atoms.r[n] + ion_radius, position(atoms, n), l, access, 0.0);
    }
  }
  return access;
}

std::vector<double> pb_charge(const AtomSet& atoms, const GridSpec& grid, PbChargeMap chgm) {
  std::vector<double> charge(grid.point_count(), 0.0);
  spread_charges(atoms, 0, atoms.size(), grid, chgm, [&](std::size_t index, double share) { charge[index] += share; });
  return charge;
}

std::size_t pb_max_shares_per_atom(PbChargeMap chgm) {
  return chgm == PbChargeMap::spl0 ? 8 : chgm == PbChargeMap::spl2 ? 64 : 216;
}

void pb_charge_share_arrays(const AtomSet& atoms, std::size_t first, std::size_t end, const GridSpec& grid,
                            PbChargeMap chgm, std::vector<std::uint32_t>& points, std::vector<double>& charges) {
  if (grid.point_count() > std::size_t(UINT32_MAX))
    throw Error("pb: " + grid.describe() + " has more points than 32-bit indices reach");
  end = std::min(end, atoms.size());
  first = std::min(first, end);
  const std::size_t blocks = (end - first + kPbBlockAtoms - 1) / kPbBlockAtoms;
  std::vector<std::vector<PbChargeShare>> block_shares(blocks);
  std::vector<std::size_t> offset(blocks + 1, 0);
#pragma omp parallel num_threads(team_size())
  {
#pragma omp for schedule(dynamic)
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t from = first + b * kPbBlockAtoms;
      pb_charge_shares(atoms, from, from + kPbBlockAtoms, grid, chgm, block_shares[b]);
    }
#pragma omp single
    {
      for (std::size_t b = 0; b < blocks; ++b) offset[b + 1] = offset[b] + block_shares[b].size();
      points.resize(offset[blocks]);
      charges.resize(offset[blocks]);
    }
#pragma omp for schedule(static)
    for (std::size_t b = 0; b < blocks; ++b)
      for (std::size_t s = 0; s < block_shares[b].size(); ++s) {
        points[offset[b] + s] = std::uint32_t(block_shares[b][s].index);
        charges[offset[b] + s] = block_shares[b][s].charge;
      }
  }
}

void pb_charge_shares(const AtomSet& atoms, std::size_t first, std::size_t end, const GridSpec& grid,
                      PbChargeMap chgm, std::vector<PbChargeShare>& shares) {
  shares.clear();
  end = std::min(end, atoms.size());
  shares.reserve((end - std::min(first, end)) * pb_max_shares_per_atom(chgm));
  spread_charges(atoms, first, end, grid, chgm,
                 [&](std::size_t index, double share) { shares.push_back({index, share}); });
}

namespace pb_point {

std::vector<Vec3> probe_sphere(const AtomSet& atoms, const PbOptions& options) {
  const double max_radius = *std::max_element(atoms.r.begin(), atoms.r.end());
  const double list_radius = std::max(options.srad, max_ion_radius(options)) + 0.5;
  const double outer = max_radius + list_radius;
  const int wanted = int(std::ceil(4 * std::numbers::pi * outer * outer * options.sdens));
  const int rings = int(std::floor(std::sqrt(std::numbers::pi * wanted / 4.0) + 0.5));
  const double dtheta = std::numbers::pi / rings;
  std::vector<Vec3> points;
  for (int t = 0; t < rings; ++t) {
    const double theta = dtheta * t;
    const int count = int(std::floor(std::sin(theta) * 2 * rings + 0.5));
    if (count == 0) continue;
    const double dphi = 2 * std::numbers::pi / count;
    for (int p = 0; p < count; ++p) {
      const double phi = dphi * p;
      points.push_back({std::cos(phi) * std::sin(theta), std::sin(phi) * std::sin(theta), std::cos(theta)});
    }
  }
  return points;
}

double boundary_kappa(const PbOptions& options) { return std::sqrt(kappa_bar_squared(options) / options.sdie); }

PairKernel mdh_pair_kernel(const PbOptions& options, double scale) {
  const double kappa = boundary_kappa(options);
  PairKernel kernel;
  kernel.form = kappa > 0 ? PairForm::debye_huckel : PairForm::coulomb;
  kernel.scale_d = scale / options.sdie;
  kernel.kappa_d = kappa;
  kernel.exp2_kappa_d = -kappa * std::numbers::log2e;
  kernel.min_r2_d = 1e-12;  // atoms lie strictly inside the grid, never on a face
  kernel.scale = float(kernel.scale_d);
  kernel.exp2_kappa = float(kernel.exp2_kappa_d);
  kernel.min_r2 = float(kernel.min_r2_d);
  return kernel;
}

std::vector<float> mdh_charges(const AtomSet& atoms, double kappa) {
  std::vector<float> q(atoms.size());
  for (std::size_t n = 0; n < atoms.size(); ++n) {
    const double a = atoms.r[n];
    q[n] = float(atoms.q[n] * std::exp(kappa * a) / (1 + kappa * a));
  }
  return q;
}

// The quadrupole is APBS's 1.5·Σq(xx − r²/3)/3.
SdhMultipole sdh_multipole(const AtomSet& atoms, const PbOptions& options, double scale) {
  SdhMultipole m;
  m.centre = bounding_box(atoms).center();
  for (std::size_t n = 0; n < atoms.size(); ++n) {
    const Vec3 d = {atoms.x[n] - m.centre[0], atoms.y[n] - m.centre[1], atoms.z[n] - m.centre[2]};
    m.size = std::max(m.size, std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + atoms.r[n]);
    const double q = atoms.q[n];
    m.charge += q;
    const double trace = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) / 3;
    for (int a = 0; a < 3; ++a) {
      m.dipole[a] += q * d[a];
      for (int b = 0; b < 3; ++b) m.quad[3 * a + b] += 0.5 * q * (d[a] * d[b] - (a == b ? trace : 0.0));
    }
  }
  m.kappa = boundary_kappa(options);
  m.sdie = options.sdie;
  m.eps_r = options.sdie / options.pdie;
  m.scale = scale;
  return m;
}

}  // namespace pb_point

namespace {

// Calls fn(index, position) for every point on the grid's six outer faces (pb_face_points), in
// parallel.
template <typename Fn>
void for_each_face_point(const GridSpec& grid, Fn&& fn) {
  const std::vector<std::size_t> points = pb_face_points(grid);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::size_t f = 0; f < points.size(); ++f) {
    const auto ijk = grid.ijk(points[f]);
    fn(points[f], grid.position(ijk[0], ijk[1], ijk[2]));
  }
}

}  // namespace

void pb_boundary(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                 std::vector<double>& phi) {
  if (options.bcfl == PbBoundary::zero) return;
  if (options.bcfl == PbBoundary::sdh) {
    const pb_point::SdhMultipole m = pb_point::sdh_multipole(atoms, options, scale);
    for_each_face_point(grid, [&](std::size_t index, const Vec3& p) { phi[index] = pb_point::sdh_value(m, p); });
    return;
  }
  // mdh is a Debye–Hückel sum with each charge raised to q·exp(κa)/(1 + κa): the CPU direct
  // kernel's, run on each face as a one-plane grid whose normal is made its z axis (the kernel
  // vectorises along x).
  const PairKernel kernel = pb_point::mdh_pair_kernel(options, scale);
  const std::vector<float> charges = pb_point::mdh_charges(atoms, kernel.kappa_d);
  const Lattice l = lattice_of(grid);
  for (const pb_point::Face& f : pb_point::outer_faces(l)) {
    AtomSet turned;
    turned.reserve(atoms.size());
    for (std::size_t n = 0; n < atoms.size(); ++n) {
      const Vec3 p = position(atoms, n);
      turned.push_back(p[f.u], p[f.v], p[f.normal], charges[n]);
    }
    GridSpec face;
    face.origin = {l.min[f.u], l.min[f.v], l.min[f.normal] + double(f.side) * l.h[f.normal]};
    face.spacing = {l.h[f.u], l.h[f.v], l.h[f.normal]};
    face.dims = {l.n[f.u], l.n[f.v], 1};
    std::vector<float> values(face.point_count());
    direct_sum_cpu(turned, face, kernel, Slab{0, 1}, values.data());
    for (std::int64_t b = 0; b < l.n[f.v]; ++b)
      for (std::int64_t a = 0; a < l.n[f.u]; ++a)
        phi[pb_point::face_point(l, f, a, b)] = values[std::size_t(b) * l.n[f.u] + a];
  }
}

namespace {

// Where x falls on a coarse axis of n points from lo at spacing h: the point below and the
// fraction towards the next. A point off the axis by more than round-off is an error.
std::pair<std::int64_t, double> axis_cell(double x, double lo, double h, std::int64_t n, bool& off) {
  double t = (x - lo) / h;
  const double slack = 1e-9 * double(n);
  if (t < -slack || t > double(n - 1) + slack) off = true;
  t = std::clamp(t, 0.0, double(n - 1));
  const auto below = std::min<std::int64_t>(std::int64_t(std::floor(t)), std::max<std::int64_t>(n - 2, 0));
  return {below, t - double(below)};
}

}  // namespace

std::vector<std::size_t> pb_face_points(const GridSpec& grid) {
  std::vector<std::size_t> points;
  const std::int64_t nx = grid.nx(), ny = grid.ny(), nz = grid.nz();
  points.reserve(std::size_t(2 * (nx * ny + ny * nz + nz * nx)));
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j) {
      const bool whole_row = k == 0 || k == nz - 1 || j == 0 || j == ny - 1;
      for (std::int64_t i = 0; i < nx; i += whole_row ? 1 : std::max<std::int64_t>(nx - 1, 1))
        points.push_back(grid.index(i, j, k));
    }
  return points;
}

std::vector<std::size_t> pb_face_points_for(const GridSpec& grid, const std::vector<double>& face_values) {
  std::vector<std::size_t> points = pb_face_points(grid);
  if (face_values.size() != points.size())
    throw Error("pb: " + std::to_string(face_values.size()) + " boundary values for the " +
                std::to_string(points.size()) + " face points of " + grid.describe());
  return points;
}

std::vector<double> pb_with_faces(const GridSpec& grid, const std::vector<double>& face_values) {
  const std::vector<std::size_t> points = pb_face_points_for(grid, face_values);
  std::vector<double> phi(grid.point_count(), 0.0);
  for (std::size_t f = 0; f < points.size(); ++f) phi[points[f]] = face_values[f];
  return phi;
}

std::vector<double> pb_focus_boundary(const GridSpec& coarse, const std::vector<double>& coarse_phi,
                                      const GridSpec& fine) {
  const std::vector<std::size_t> points = pb_face_points(fine);
  std::vector<double> values(points.size());
  std::size_t first_off = points.size();
#pragma omp parallel for num_threads(team_size()) schedule(static) reduction(min : first_off)
  for (std::size_t f = 0; f < points.size(); ++f) {
    const auto ijk = fine.ijk(points[f]);
    const auto p = fine.position(ijk[0], ijk[1], ijk[2]);
    bool off = false;
    std::pair<std::int64_t, double> c[3];
    for (int d = 0; d < 3; ++d) c[d] = axis_cell(p[d], coarse.origin[d], coarse.spacing[d], coarse.dims[d], off);
    if (off) first_off = std::min(first_off, f);
    double sum = 0;
    for (int corner = 0; corner < 8; ++corner) {
      double w = 1;
      std::int64_t at[3];
      for (int d = 0; d < 3; ++d) {
        const bool up = (corner >> d) & 1;
        at[d] = std::min(c[d].first + up, coarse.dims[d] - 1);
        w *= up ? c[d].second : 1 - c[d].second;
      }
      if (w != 0) sum += w * coarse_phi[coarse.index(at[0], at[1], at[2])];
    }
    values[f] = sum;
  }
  if (first_off < points.size()) {
    const auto ijk = fine.ijk(points[first_off]);
    const auto p = fine.position(ijk[0], ijk[1], ijk[2]);
    throw Error("pb focusing: the point (" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ", " +
                std::to_string(p[2]) + ") Å of the grid " + fine.describe() + " lies off the coarser grid " +
                coarse.describe());
  }
  return values;
}

}  // namespace dcsgrid::engine
