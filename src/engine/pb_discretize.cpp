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

namespace dcsgrid::engine {
namespace {

using Vec3 = std::array<double, 3>;

// APBS's VSMALL: radii (atoms skipped when marking spheres) and κ below it count as zero.
constexpr double kApbsSmall = 1e-9;

// The points of one grid: its first point's position, spacing and counts.
struct Lattice {
  Vec3 min{}, h{};
  std::array<std::int64_t, 3> n{};
  std::size_t at(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return (std::size_t(k) * n[1] + j) * n[0] + i;
  }
};

Lattice lattice_of(const GridSpec& grid, int shifted_axis = -1) {
  Lattice l{grid.origin, grid.spacing, grid.dims};
  if (shifted_axis >= 0) l.min[shifted_axis] += 0.5 * grid.spacing[shifted_axis];
  return l;
}

// Sets value at every lattice point within r (≤) of centre, as APBS's markSphere (the same index
// range and the same arithmetic, so that ties fall the same way).
void mark_sphere(double r, const Vec3& centre, const Lattice& l, std::vector<double>& a, double value) {
  const Vec3 pos = {centre[0] - l.min[0], centre[1] - l.min[1], centre[2] - l.min[2]};
  const double r2 = r * r;
  std::array<std::int64_t, 3> lo, hi;
  for (int d = 0; d < 3; ++d) {
    const double range = r + 0.5 * l.h[d];
    lo[d] = std::max<std::int64_t>(0, std::int64_t(std::ceil((pos[d] - range) / l.h[d])));
    hi[d] = std::min<std::int64_t>(l.n[d] - 1, std::int64_t(std::floor((pos[d] + range) / l.h[d])));
  }
  // z outermost for our layout; the sum is APBS's (dz² + dy²) + dx².
  for (std::int64_t k = lo[2]; k <= hi[2]; ++k) {
    const double dz2 = (pos[2] - l.h[2] * double(k)) * (pos[2] - l.h[2] * double(k));
    for (std::int64_t j = lo[1]; j <= hi[1]; ++j) {
      const double dy2 = (pos[1] - l.h[1] * double(j)) * (pos[1] - l.h[1] * double(j));
      const double dzy2 = dz2 + dy2;
      if (dzy2 > r2) continue;
      double* row = a.data() + l.at(0, j, k);
      for (std::int64_t i = lo[0]; i <= hi[0]; ++i) {
        const double dx2 = (pos[0] - l.h[0] * double(i)) * (pos[0] - l.h[0] * double(i));
        if (dzy2 + dx2 <= r2) row[i] = value;
      }
    }
  }
}

Vec3 position(const AtomSet& atoms, std::size_t n) { return {atoms.x[n], atoms.y[n], atoms.z[n]}; }

// APBS's reference sphere (VaccSurf_refSphere): rings of constant θ, points evenly in φ.
std::vector<Vec3> reference_sphere(int wanted) {
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

// APBS's ivdwAccExclus: none of the candidate atoms has p within (radius + probe), strictly.
// The last atom that covered a point is tried first: neighbouring sphere points share it.
bool accessible(const AtomSet& atoms, const Vec3& p, double probe, const std::vector<std::size_t>& candidates,
                std::size_t& last_cover) {
  const auto covers = [&](std::size_t a) {
    const double dx = p[0] - atoms.x[a], dy = p[1] - atoms.y[a], dz = p[2] - atoms.z[a];
    const double reach = atoms.r[a] + probe;
    return dx * dx + dy * dy + dz * dz < reach * reach;
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
  const double list_radius = std::max(options.srad, max_ion_radius(options)) + 0.5;
  const double outer = max_radius + list_radius;
  const auto sphere = reference_sphere(int(std::ceil(4 * std::numbers::pi * outer * outer * options.sdens)));
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
        const Vec3 p = {rad * s[0] + c[0], rad * s[1] + c[1], rad * s[2] + c[2]};
        if (accessible(atoms, p, options.srad, candidates, last_cover)) per_atom[a].push_back(p);
      }
    }
  }
  std::vector<Vec3> points;
  for (const auto& v : per_atom) points.insert(points.end(), v.begin(), v.end());
  return points;
}

// APBS's smoothing (fillcoCoefMolDielSmooth): each face value becomes the harmonic mean of itself,
// the other two grids' faces at the same point and those of the 1/√2-spacing neighbours that lie
// inside the grid.
void smooth_dielectric(PbDielectric& d, const GridSpec& grid) {
  const Lattice l = lattice_of(grid);
  const std::array<std::size_t, 3> stride = {1, std::size_t(l.n[0]), std::size_t(l.n[0] * l.n[1])};
  std::array<std::vector<double>*, 3> eps = {&d.eps_x, &d.eps_y, &d.eps_z};
  std::array<std::vector<double>, 3> inv;
  for (int axis = 0; axis < 3; ++axis) {
    inv[axis].resize(eps[axis]->size());
    std::transform(eps[axis]->begin(), eps[axis]->end(), inv[axis].begin(), [](double e) { return 1 / e; });
  }
  for (int own = 0; own < 3; ++own) {
    const int a1 = (own + 1) % 3, a2 = (own + 2) % 3;
    const std::vector<double> &io = inv[own], &i1 = inv[a1], &i2 = inv[a2];
    std::vector<double>& out = *eps[own];
#pragma omp parallel for num_threads(team_size()) schedule(static)
    for (std::int64_t k = 0; k < l.n[2]; ++k)
      for (std::int64_t j = 0; j < l.n[1]; ++j)
        for (std::int64_t i = 0; i < l.n[0]; ++i) {
          const std::array<std::int64_t, 3> idx = {i, j, k};
          const std::size_t p = l.at(i, j, k);
          double sum = io[p] + i1[p] + i2[p];
          int count = 3;
          if (idx[a1] > 0) sum += i1[p - stride[a1]], ++count;
          if (idx[a2] > 0) sum += i2[p - stride[a2]], ++count;
          if (idx[own] < l.n[own] - 1) {
            const std::size_t q = p + stride[own];
            sum += i1[q] + i2[q];
            count += 2;
            if (idx[a1] > 0) sum += i1[q - stride[a1]], ++count;
            if (idx[a2] > 0) sum += i2[q - stride[a2]], ++count;
          }
          out[p] = count / sum;
        }
  }
}

// The spline surfaces' switch between r − w (0) and r + w (1): srfm spl2, APBS's fillcoCoefSpline,
// 0.75·s²/w² − 0.25·s³/w³ with s = d − r + w; srfm spl4, fillcoCoefSpline4, the degree-7
// polynomial in d with zero first three derivatives at both ends, clamped to [0, 1].
class SplineSwitch {
 public:
  SplineSwitch(PbSurface kind, double r, double w) : kind_(kind), r_(r), w_(w) {
    if (kind != PbSurface::spl4) return;
    const double b = r - w, e = r + w;
    const double b2 = b * b, b3 = b2 * b, b4 = b3 * b, b5 = b4 * b, b6 = b5 * b, b7 = b6 * b;
    const double e2 = e * e, e3 = e2 * e, e4 = e3 * e, e5 = e4 * e, e6 = e5 * e, e7 = e6 * e;
    const double denom = e7 - 7 * b * e6 + 21 * b2 * e5 - 35 * e4 * b3 + 35 * e3 * b4 - 21 * b5 * e2 + 7 * e * b6 - b7;
    c_ = {b4 * (35 * e3 - 21 * b * e2 + 7 * e * b2 - b3) / denom,
          -140 * b3 * e3 / denom,
          210 * e2 * b2 * (e + b) / denom,
          -140 * e * b * (e2 + 3 * b * e + b2) / denom,
          35 * (e3 + 9 * b * e2 + 9 * e * b2 + b3) / denom,
          -84 * (e2 + 3 * b * e + b2) / denom,
          70 * (e + b) / denom,
          -20 / denom};
  }
  double outer() const { return r_ + w_; }
  double inner() const { return std::max(0.0, r_ - w_); }
  double operator()(double d) const {
    if (kind_ != PbSurface::spl4) {
      const double s = d - r_ + w_;
      return 0.75 * s * s / (w_ * w_) - 0.25 * s * s * s / (w_ * w_ * w_);
    }
    double value = 0, power = 1;
    for (double c : c_) {
      value += c * power;
      power *= d;
    }
    return std::clamp(value, 0.0, 1.0);
  }

 private:
  PbSurface kind_;
  double r_, w_;
  std::array<double, 8> c_{};
};

// Multiplies each lattice value within the switch's outer radius of centre by the switch (0 within
// its inner radius); a value already below 1e-12 (APBS's VPMGSMALL) is left as it is.
void multiply_spline_switch(const SplineSwitch& sw, const Vec3& centre, const Lattice& l, std::vector<double>& a) {
  const Vec3 pos = {centre[0] - l.min[0], centre[1] - l.min[1], centre[2] - l.min[2]};
  const double outer = sw.outer(), inner = sw.inner();
  std::array<std::int64_t, 3> lo, hi;
  for (int d = 0; d < 3; ++d) {
    lo[d] = std::max<std::int64_t>(0, std::int64_t(std::floor((pos[d] - outer) / l.h[d])));
    hi[d] = std::min<std::int64_t>(l.n[d] - 1, std::int64_t(std::ceil((pos[d] + outer) / l.h[d])));
  }
  for (std::int64_t k = lo[2]; k <= hi[2]; ++k) {
    const double dz = pos[2] - l.h[2] * double(k);
    for (std::int64_t j = lo[1]; j <= hi[1]; ++j) {
      const double dy = pos[1] - l.h[1] * double(j);
      for (std::int64_t i = lo[0]; i <= hi[0]; ++i) {
        const double dx = pos[0] - l.h[0] * double(i);
        const double d2 = dz * dz + dy * dy + dx * dx;
        double& v = a[l.at(i, j, k)];
        if (v <= 1e-12 || d2 >= outer * outer) continue;
        v = d2 <= inner * inner ? 0.0 : v * sw(std::sqrt(d2));
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
// clamped into the grid (as APBS: the clamped ends lose their share).
template <typename Weight>
void spread_bspline(const Lattice& l, const Vec3& pos, double q, int reach, double offset, Weight w,
                    std::vector<double>& charge) {
  std::array<std::int64_t, 3> lo, hi;
  Vec3 f;
  for (int d = 0; d < 3; ++d) {
    f[d] = (pos[d] - l.min[d]) / l.h[d];
    lo[d] = std::max<std::int64_t>(std::int64_t(std::floor(f[d])) - reach, 0);
    hi[d] = std::min<std::int64_t>(std::int64_t(std::ceil(f[d])) + reach, l.n[d] - 1);
  }
  for (std::int64_t i = lo[0]; i <= hi[0]; ++i) {
    const double wx = w(offset + (double(i) - f[0]));
    for (std::int64_t j = lo[1]; j <= hi[1]; ++j) {
      const double wy = w(offset + (double(j) - f[1]));
      for (std::int64_t k = lo[2]; k <= hi[2]; ++k)
        charge[l.at(i, j, k)] += q * wx * wy * w(offset + (double(k) - f[2]));
    }
  }
}

void spread_spl0(const Lattice& l, const Vec3& pos, double q, std::vector<double>& charge) {
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
      for (int c = 0; c < 2; ++c)
        charge[l.at(idx[0][a], idx[1][b], idx[2][c])] += q * w[0][a] * w[1][b] * w[2][c];
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
        if (atoms.r[n] > 1e-12)
          multiply_spline_switch(SplineSwitch(options.srfm, atoms.r[n], options.swin), position(atoms, n), l, a);
      for (double& v : a) v = (options.sdie - options.pdie) * v + options.pdie;
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
      if (atoms.r[n] > 1e-12)
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
  const Lattice l = lattice_of(grid);
  for (std::size_t n = 0; n < atoms.size(); ++n) {
    if (atoms.q[n] == 0) continue;
    const Vec3 p = position(atoms, n);
    switch (chgm) {
      case PbChargeMap::spl0: spread_spl0(l, p, atoms.q[n], charge); break;
      case PbChargeMap::spl2: spread_bspline(l, p, atoms.q[n], 1, 1.5, bspline2, charge); break;
      case PbChargeMap::spl4: spread_bspline(l, p, atoms.q[n], 2, 2.5, bspline4, charge); break;
    }
  }
  return charge;
}

namespace {

// Calls fn(index, position) for every point on the grid's six outer faces, in parallel.
template <typename Fn>
void for_each_face_point(const GridSpec& grid, Fn&& fn) {
  const Lattice l = lattice_of(grid);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t k = 0; k < l.n[2]; ++k)
    for (std::int64_t j = 0; j < l.n[1]; ++j) {
      const bool whole_row = k == 0 || j == 0 || k == l.n[2] - 1 || j == l.n[1] - 1;
      const std::int64_t step = whole_row ? 1 : l.n[0] - 1;
      for (std::int64_t i = 0; i < l.n[0]; i += step) fn(l.at(i, j, k), grid.position(i, j, k));
    }
}

// APBS's sdh (bcfl_sdh, multipolebc): the molecule as a sphere around the centre of its atoms' box,
// radius max(|x − c| + r), holding its charge, dipole and traceless quadrupole (APBS's 1.5·Σq(xx −
// r²/3)/3), each term screened outside the sphere as a multipole in a dielectric sphere in salt.
void sdh_boundary(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                  std::vector<double>& phi) {
  const Vec3 c = bounding_box(atoms).center();
  double size = 0, charge = 0;
  Vec3 dipole{};
  std::array<double, 9> quad{};
  for (std::size_t n = 0; n < atoms.size(); ++n) {
    const Vec3 p = position(atoms, n);
    const Vec3 d = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    size = std::max(size, std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) + atoms.r[n]);
    const double q = atoms.q[n];
    charge += q;
    const double trace = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) / 3;
    for (int a = 0; a < 3; ++a) {
      dipole[a] += q * d[a];
      for (int b = 0; b < 3; ++b) quad[3 * a + b] += 0.5 * q * (d[a] * d[b] - (a == b ? trace : 0.0));
    }
  }
  const double kappa = std::sqrt(kappa_bar_squared(options) / options.sdie);
  const double eps_r = options.sdie / options.pdie, ka = kappa * size;
  for_each_face_point(grid, [&](std::size_t index, const Vec3& p) {
    const Vec3 d = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    const double r = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    double t0 = 1 / (options.sdie * r), t1 = -1 / (options.sdie * r * r * r),
           t2 = 3 / (options.sdie * r * r * r * r * r);
    if (kappa < kApbsSmall) {
      t1 *= 3 * eps_r / (1 + 2 * eps_r);
      t2 *= 5 * eps_r / (2 + 3 * eps_r);
    } else {
      const double kr = kappa * r, screen = std::exp(ka - kr);
      t0 *= screen / (1 + ka);
      t1 *= 3 * eps_r * screen * (1 + kr) / (1 + ka + eps_r * (2 + 2 * ka + ka * ka));
      t2 *= 5 * eps_r * screen * (3 + 3 * kr + kr * kr) /
            (6 + 6 * ka + 2 * ka * ka + eps_r * (9 + 9 * ka + 4 * ka * ka + ka * ka * ka));
    }
    double quadrupole = 0;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) quadrupole += quad[3 * a + b] * d[a] * d[b];
    const double dipole_term = dipole[0] * d[0] + dipole[1] * d[1] + dipole[2] * d[2];
    phi[index] = scale * (charge * t0 - dipole_term * t1 + quadrupole * t2);
  });
}

}  // namespace

void pb_boundary(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                 std::vector<double>& phi) {
  if (options.bcfl == PbBoundary::zero) return;
  if (options.bcfl == PbBoundary::sdh) return sdh_boundary(atoms, grid, options, scale, phi);
  // mdh is a Debye–Hückel sum with each charge raised to q·exp(κa)/(1 + κa): the CPU direct
  // kernel's, run on each face as a one-plane grid whose normal is made its z axis (the kernel
  // vectorises along x).
  const double kappa = std::sqrt(kappa_bar_squared(options) / options.sdie);
  PairKernel kernel;
  kernel.form = kappa > 0 ? PairForm::debye_huckel : PairForm::coulomb;
  kernel.scale_d = scale / options.sdie;
  kernel.kappa_d = kappa;
  kernel.exp2_kappa_d = -kappa * std::numbers::log2e;
  kernel.min_r2_d = 1e-12;  // atoms lie strictly inside the grid, never on a face
  kernel.scale = float(kernel.scale_d);
  kernel.exp2_kappa = float(kernel.exp2_kappa_d);
  kernel.min_r2 = float(kernel.min_r2_d);
  const Lattice l = lattice_of(grid);
  for (int normal = 0; normal < 3; ++normal) {
    const int u = (normal + 1) % 3, v = (normal + 2) % 3;
    AtomSet turned;
    turned.reserve(atoms.size());
    for (std::size_t n = 0; n < atoms.size(); ++n) {
      const Vec3 p = position(atoms, n);
      const double a = atoms.r[n];
      turned.push_back(p[u], p[v], p[normal], atoms.q[n] * std::exp(kappa * a) / (1 + kappa * a));
    }
    for (std::int64_t side : {std::int64_t(0), l.n[normal] - 1}) {
      GridSpec face;
      face.origin = {l.min[u], l.min[v], l.min[normal] + double(side) * l.h[normal]};
      face.spacing = {l.h[u], l.h[v], l.h[normal]};
      face.dims = {l.n[u], l.n[v], 1};
      std::vector<float> values(face.point_count());
      direct_sum_cpu(turned, face, kernel, Slab{0, 1}, values.data());
      for (std::int64_t b = 0; b < l.n[v]; ++b)
        for (std::int64_t a = 0; a < l.n[u]; ++a) {
          std::array<std::int64_t, 3> ijk;
          ijk[normal] = side;
          ijk[u] = a;
          ijk[v] = b;
          phi[l.at(ijk[0], ijk[1], ijk[2])] = values[std::size_t(b) * l.n[u] + a];
        }
    }
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

std::vector<double> pb_focus_boundary(const GridSpec& coarse, const std::vector<double>& coarse_phi,
                                      const GridSpec& fine) {
  std::vector<double> phi(fine.point_count(), 0.0);
  const auto value_at = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    const auto p = fine.position(i, j, k);
    bool off = false;
    std::pair<std::int64_t, double> c[3];
    for (int d = 0; d < 3; ++d) c[d] = axis_cell(p[d], coarse.origin[d], coarse.spacing[d], coarse.dims[d], off);
    if (off)
      throw Error("pb focusing: the point (" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ", " +
                  std::to_string(p[2]) + ") Å of the grid " + fine.describe() + " lies off the coarser grid " +
                  coarse.describe());
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
    return sum;
  };
  const std::int64_t nx = fine.nx(), ny = fine.ny(), nz = fine.nz();
  for (std::int64_t k = 0; k < nz; ++k)
    for (std::int64_t j = 0; j < ny; ++j) {
      const bool whole_row = k == 0 || k == nz - 1 || j == 0 || j == ny - 1;
      for (std::int64_t i = 0; i < nx; i += whole_row ? 1 : nx - 1) phi[fine.index(i, j, k)] = value_at(i, j, k);
    }
  return phi;
}

}  // namespace dcsgrid::engine
