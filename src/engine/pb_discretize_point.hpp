// The per-point formulas of the Poisson–Boltzmann coefficient maps (APBS's discretisation, docs/pb.md),
// shared by the CPU (pb_discretize.cpp) and the device (pb_discretize_cuda.cu) so that both compute
// the same numbers. The sphere tests are decisions on rounded distances: both files are compiled
// without floating-point contraction (CMakeLists.txt: -ffp-contract=off, nvcc -fmad=false), so that
// no FMA in one and not the other moves a tie. Private to src/engine.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/core/scalar_math.hpp"  // DCSGRID_HD
#include "dcsgrid/engine/pb.hpp"

namespace dcsgrid::engine::pb_point {

using Vec3 = std::array<double, 3>;

// APBS's VSMALL: radii (atoms skipped when marking spheres) and κ below it count as zero.
inline constexpr double kApbsSmall = 1e-9;
// APBS's VPMGSMALL: spline surfaces skip atoms of smaller radius and leave smaller values alone.
inline constexpr double kSplineSmall = 1e-12;

// The points of one grid: its first point's position, spacing and counts.
struct Lattice {
  Vec3 min{}, h{};
  std::array<std::int64_t, 3> n{};
  DCSGRID_HD std::size_t at(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return (std::size_t(k) * std::size_t(n[1]) + std::size_t(j)) * std::size_t(n[0]) + std::size_t(i);
  }
  DCSGRID_HD std::size_t size() const { return std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]); }
};

// The grid's points, or with shifted_axis 0-2 the face-centred points half a spacing along it.
inline Lattice lattice_of(const GridSpec& grid, int shifted_axis = -1) {
  Lattice l{grid.origin, grid.spacing, grid.dims};
  if (shifted_axis >= 0) l.min[shifted_axis] += 0.5 * grid.spacing[shifted_axis];
  return l;
}

// Inclusive index ranges along each axis.
struct IndexBox {
  std::int64_t lo[3], hi[3];
};

// An atom's centre relative to the lattice's first point.
DCSGRID_HD Vec3 relative_to(const Lattice& l, double x, double y, double z) {
  return {x - l.min[0], y - l.min[1], z - l.min[2]};
}

// pos (relative to the lattice) less point `index` along axis.
DCSGRID_HD double axis_offset(const Vec3& pos, const Lattice& l, int axis, std::int64_t index) {
  return pos[axis] - l.h[axis] * double(index);
}

// The squared distance from its axis offsets, summed in APBS's order: (dz² + dy²) + dx².
DCSGRID_HD double distance2(double dz, double dy, double dx) { return dz * dz + dy * dy + dx * dx; }

// APBS's markSphere index range for radius r around pos: every point within r (≤) lies inside it
// (it reaches half a spacing further).
DCSGRID_HD IndexBox sphere_box(double r, const Vec3& pos, const Lattice& l) {
  IndexBox b;
  for (int d = 0; d < 3; ++d) {
    const double range = r + 0.5 * l.h[d];
    const auto lo = std::int64_t(ceil((pos[d] - range) / l.h[d]));
    const auto hi = std::int64_t(floor((pos[d] + range) / l.h[d]));
    b.lo[d] = lo < 0 ? 0 : lo;
    b.hi[d] = hi > l.n[d] - 1 ? l.n[d] - 1 : hi;
  }
  return b;
}

// A point of an atom's probe sphere: centre c plus rad times the reference-sphere point s.
DCSGRID_HD Vec3 probe_point(const Vec3& c, double rad, const Vec3& s) {
  return {rad * s[0] + c[0], rad * s[1] + c[1], rad * s[2] + c[2]};
}

// APBS's ivdwAccExclus test for one atom (x, y, z, radius r): p lies within r + probe, strictly.
DCSGRID_HD bool covers(const Vec3& p, double x, double y, double z, double r, double probe) {
  const double dx = p[0] - x, dy = p[1] - y, dz = p[2] - z;
  const double reach = r + probe;
  return dx * dx + dy * dy + dz * dz < reach * reach;
}

// The probe sphere every atom's SAS points are taken from (APBS's VaccSurf_refSphere of
// ceil(4π·R²·sdens) points, R the largest radius plus the larger of srad and the ion radius plus
// 0.5 Å), as unit vectors: rings of constant θ, points evenly in φ.
std::vector<Vec3> probe_sphere(const AtomSet& atoms, const PbOptions& options);

// The spline surfaces' switch between r − w (0) and r + w (1): srfm spl2, APBS's fillcoCoefSpline,
// 0.75·s²/w² − 0.25·s³/w³ with s = d − r + w; srfm spl4, fillcoCoefSpline4, the degree-7
// polynomial in d with zero first three derivatives at both ends, clamped to [0, 1].
class SplineSwitch {
 public:
  SplineSwitch() = default;
  DCSGRID_HD SplineSwitch(PbSurface kind, double r, double w) : kind_(kind), r_(r), w_(w) {
    if (kind != PbSurface::spl4) return;
    const double b = r - w, e = r + w;
    const double b2 = b * b, b3 = b2 * b, b4 = b3 * b, b5 = b4 * b, b6 = b5 * b, b7 = b6 * b;
    const double e2 = e * e, e3 = e2 * e, e4 = e3 * e, e5 = e4 * e, e6 = e5 * e, e7 = e6 * e;
    const double denom = e7 - 7 * b * e6 + 21 * b2 * e5 - 35 * e4 * b3 + 35 * e3 * b4 - 21 * b5 * e2 + 7 * e * b6 - b7;
    c_[0] = b4 * (35 * e3 - 21 * b * e2 + 7 * e * b2 - b3) / denom;
    c_[1] = -140 * b3 * e3 / denom;
    c_[2] = 210 * e2 * b2 * (e + b) / denom;
    c_[3] = -140 * e * b * (e2 + 3 * b * e + b2) / denom;
    c_[4] = 35 * (e3 + 9 * b * e2 + 9 * e * b2 + b3) / denom;
    c_[5] = -84 * (e2 + 3 * b * e + b2) / denom;
    c_[6] = 70 * (e + b) / denom;
    c_[7] = -20 / denom;
  }
  DCSGRID_HD double outer() const { return r_ + w_; }
  DCSGRID_HD double inner() const { return r_ - w_ > 0.0 ? r_ - w_ : 0.0; }
  DCSGRID_HD double operator()(double d) const {
    if (kind_ != PbSurface::spl4) {
      const double s = d - r_ + w_;
      return 0.75 * s * s / (w_ * w_) - 0.25 * s * s * s / (w_ * w_ * w_);
    }
    double value = 0, power = 1;
    for (int i = 0; i < 8; ++i) {
      value += c_[i] * power;
      power *= d;
    }
    return value < 0.0 ? 0.0 : value > 1.0 ? 1.0 : value;
  }
  // The value v (a solvent fraction) after this switch at squared distance d2: 0 within the inner
  // radius, v times the switch within the outer one; unchanged beyond it and when v is already at
  // most kSplineSmall (APBS).
  DCSGRID_HD double apply(double v, double d2) const {
    const double out = outer(), in = inner();
    if (v <= kSplineSmall || d2 >= out * out) return v;
    return d2 <= in * in ? 0.0 : v * (*this)(sqrt(d2));
  }

 private:
  PbSurface kind_ = PbSurface::spl2;
  double r_ = 0, w_ = 0;
  double c_[8] = {};
};

// multiply_spline_switch's index range for a switch of outer radius `outer` around pos: it reaches
// at least a spacing beyond the switch, so apply() alone decides which points change.
DCSGRID_HD IndexBox switch_box(double outer, const Vec3& pos, const Lattice& l) {
  IndexBox b;
  for (int d = 0; d < 3; ++d) {
    const auto lo = std::int64_t(floor((pos[d] - outer) / l.h[d]));
    const auto hi = std::int64_t(ceil((pos[d] + outer) / l.h[d]));
    b.lo[d] = lo < 0 ? 0 : lo;
    b.hi[d] = hi > l.n[d] - 1 ? l.n[d] - 1 : hi;
  }
  return b;
}

// ε from the spline surfaces' solvent fraction v.
DCSGRID_HD double spline_dielectric(double v, double pdie, double sdie) { return (sdie - pdie) * v + pdie; }

// APBS's smoothing (fillcoCoefMolDielSmooth) at point p = (i, j, k) of the face grid `own`: the
// harmonic mean of its value, the other two grids' values at p and those of the 1/√2-spacing
// neighbours that lie inside the grid. inv(axis, index) is 1/ε of face grid axis at index.
template <typename Inverse>
DCSGRID_HD double smoothed_dielectric(const Inverse& inv, int own, const Lattice& l, std::int64_t i,
                                      std::int64_t j, std::int64_t k) {
  const std::int64_t idx[3] = {i, j, k};
  const std::size_t stride[3] = {1, std::size_t(l.n[0]), std::size_t(l.n[0]) * std::size_t(l.n[1])};
  const int a1 = (own + 1) % 3, a2 = (own + 2) % 3;
  const std::size_t p = l.at(i, j, k);
  double sum = inv(own, p) + inv(a1, p) + inv(a2, p);
  int count = 3;
  if (idx[a1] > 0) sum += inv(a1, p - stride[a1]), ++count;
  if (idx[a2] > 0) sum += inv(a2, p - stride[a2]), ++count;
  if (idx[own] < l.n[own] - 1) {
    const std::size_t q = p + stride[own];
    sum += inv(a1, q) + inv(a2, q);
    count += 2;
    if (idx[a1] > 0) sum += inv(a1, q - stride[a1]), ++count;
    if (idx[a2] > 0) sum += inv(a2, q - stride[a2]), ++count;
  }
  return count / sum;
}

// One outer face of a lattice: normal axis, its index there (0 or n − 1), and the two in-plane
// axes u, v (the face's own x and y).
struct Face {
  int normal, u, v;
  std::int64_t side;
};
// The six faces in the order the boundary fills them (a point on an edge takes the last face's
// value): normal x, y, z, each low side then high side.
inline std::array<Face, 6> outer_faces(const Lattice& l) {
  std::array<Face, 6> faces;
  for (int normal = 0; normal < 3; ++normal)
    for (int s = 0; s < 2; ++s)
      faces[2 * normal + s] = {normal, (normal + 1) % 3, (normal + 2) % 3, s == 0 ? 0 : l.n[normal] - 1};
  return faces;
}
// The lattice index of point (a, b) of face f.
DCSGRID_HD std::size_t face_point(const Lattice& l, const Face& f, std::int64_t a, std::int64_t b) {
  std::int64_t ijk[3];
  ijk[f.normal] = f.side;
  ijk[f.u] = a;
  ijk[f.v] = b;
  return l.at(ijk[0], ijk[1], ijk[2]);
}

// The mdh boundary's pair kernel: the Debye–Hückel (or Coulomb, without ions) form in sdie, with
// the atoms' charges raised as mdh_charges does.
PairKernel mdh_pair_kernel(const PbOptions& options, double scale);
// κ (1/Å) of the boundary's screening: √(κ̄²/sdie).
double boundary_kappa(const PbOptions& options);
// Each atom's charge times exp(κa)/(1 + κa), a its radius: APBS's mdh sphere of radius a.
std::vector<float> mdh_charges(const AtomSet& atoms, double kappa);

// APBS's sdh (bcfl_sdh, multipolebc): the molecule as a sphere around the centre of its atoms' box,
// radius max(|x − c| + r), holding its charge, dipole and traceless quadrupole, each term screened
// outside the sphere as a multipole in a dielectric sphere in salt.
struct SdhMultipole {
  Vec3 centre{};
  double size = 0, charge = 0;
  Vec3 dipole{};
  double quad[9] = {};
  double kappa = 0, sdie = 1, eps_r = 1, scale = 1;
};
SdhMultipole sdh_multipole(const AtomSet& atoms, const PbOptions& options, double scale);
// The sdh boundary value at position p.
DCSGRID_HD double sdh_value(const SdhMultipole& m, const Vec3& p) {
  const Vec3 d = {p[0] - m.centre[0], p[1] - m.centre[1], p[2] - m.centre[2]};
  const double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  double t0 = 1 / (m.sdie * r), t1 = -1 / (m.sdie * r * r * r), t2 = 3 / (m.sdie * r * r * r * r * r);
  const double ka = m.kappa * m.size, eps_r = m.eps_r;
  if (m.kappa < kApbsSmall) {
    t1 *= 3 * eps_r / (1 + 2 * eps_r);
    t2 *= 5 * eps_r / (2 + 3 * eps_r);
  } else {
    const double kr = m.kappa * r, screen = exp(ka - kr);
    t0 *= screen / (1 + ka);
    t1 *= 3 * eps_r * screen * (1 + kr) / (1 + ka + eps_r * (2 + 2 * ka + ka * ka));
    t2 *= 5 * eps_r * screen * (3 + 3 * kr + kr * kr) /
          (6 + 6 * ka + 2 * ka * ka + eps_r * (9 + 9 * ka + 4 * ka * ka + ka * ka * ka));
  }
  double quadrupole = 0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) quadrupole += m.quad[3 * a + b] * d[a] * d[b];
  const double dipole_term = m.dipole[0] * d[0] + m.dipole[1] * d[1] + m.dipole[2] * d[2];
  return m.scale * (m.charge * t0 - dipole_term * t1 + quadrupole * t2);
}

}  // namespace dcsgrid::engine::pb_point
