// The float64 references of the periodic tests (CPU and GPU), written with plain loops and no engine
// code: the real-space sum over every image within 5.9/β (erfc < 1e-16) and the reciprocal sum over
// every k with e^{−k²/4β²} ≥ 1e-17; and what those tests share (cells, atoms, grids, physics with a
// 0.01 Å minimum distance).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"

namespace dcsgrid::test {

inline constexpr double kPi = std::numbers::pi;

inline Physics test_physics() {
  Physics p;
  p.min_distance = 0.01;
  return p;
}
inline double scale() { return make_pair_kernel(test_physics()).scale_d; }

// n atoms at uniform fractional coordinates in [lo, hi) (beyond the cell too), charges in [−1, 1]
// shifted to a total of `charge`.
inline AtomSet atoms_in_cell(const UnitCell& cell, std::size_t n, unsigned seed, double charge = 0,
                             double lo = 0, double hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi), q(-1, 1);
  std::vector<double> charges(n);
  double sum = 0;
  for (double& c : charges) sum += (c = q(rng));
  AtomSet atoms;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 p = cell.cartesian({u(rng), u(rng), u(rng)});
    atoms.push_back(p[0], p[1], p[2], charges[i] + (charge - sum) / double(n));
  }
  return atoms;
}

// A grid over the cell's bounding box, grown by `margin`, about `points` points along its longest
// side.
inline GridSpec grid_over_cell(const UnitCell& cell, double margin, int points) {
  Box box{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
  for (int c = 0; c < 8; ++c) {
    const Vec3 p = cell.cartesian({double(c & 1), double(c >> 1 & 1), double(c >> 2 & 1)});
    for (int a = 0; a < 3; ++a) {
      box.lo[a] = std::min(box.lo[a], p[a] - margin);
      box.hi[a] = std::max(box.hi[a], p[a] + margin);
    }
  }
  const auto e = box.extent();
  const double spacing = std::max({e[0], e[1], e[2]}) / (points - 1);
  std::array<std::int64_t, 3> dims;
  for (int a = 0; a < 3; ++a) dims[a] = std::int64_t(std::ceil(e[a] / spacing)) + 1;
  return grid_from_origin({box.lo[0] + 0.123, box.lo[1] - 0.071, box.lo[2] + 0.049}, dims, spacing);
}

inline double norm(const Vec3& v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

// ---- the float64 reference ----

struct ReferenceParts {
  std::vector<double> real, reciprocal;  // without scale; reciprocal without background
};

// The lattice translations that can bring a difference vector of fractional coordinates in
// [−1/2, 1/2]³ within rc of the origin.
inline std::vector<Vec3> translations_within(const UnitCell& cell, double rc) {
  const double reach = rc + 0.5 * (norm(cell.vectors[0]) + norm(cell.vectors[1]) + norm(cell.vectors[2]));
  std::array<int, 3> shells;
  for (int a = 0; a < 3; ++a) shells[a] = int(std::ceil(reach * norm(cell.reciprocal[a])));
  std::vector<Vec3> out;
  for (int n1 = -shells[0]; n1 <= shells[0]; ++n1)
    for (int n2 = -shells[1]; n2 <= shells[1]; ++n2)
      for (int n3 = -shells[2]; n3 <= shells[2]; ++n3) {
        const Vec3 t = cell.cartesian({double(n1), double(n2), double(n3)});
        if (norm(t) <= reach) out.push_back(t);
      }
  return out;
}

// with_real false: the reciprocal part only.
inline ReferenceParts reference_parts(const AtomSet& atoms, const UnitCell& cell, const GridSpec& grid,
                               double beta, double r_min, bool with_real = true) {
  ReferenceParts out{std::vector<double>(grid.point_count(), 0.0),
                     std::vector<double>(grid.point_count(), 0.0)};
  // Real part: erfc(5.9)/5.9 < 1e-16: every image within 5.9/β.
  const double rc = 5.9 / beta;
  const std::vector<Vec3> translations = with_real ? translations_within(cell, rc) : std::vector<Vec3>{};
  // Reciprocal part: every k with e^{−k²/4β²} ≥ 1e-17.
  const double kc = 2 * beta * std::sqrt(17 * std::log(10.0));
  std::vector<Vec3> ks;
  std::vector<std::complex<double>> s;
  std::array<int, 3> kmax;
  for (int a = 0; a < 3; ++a) kmax[a] = int(std::ceil(kc * norm(cell.vectors[a]) / (2 * kPi)));
  for (int m1 = -kmax[0]; m1 <= kmax[0]; ++m1)
    for (int m2 = -kmax[1]; m2 <= kmax[1]; ++m2)
      for (int m3 = -kmax[2]; m3 <= kmax[2]; ++m3) {
        Vec3 k;
        for (int d = 0; d < 3; ++d)
          k[d] = 2 * kPi * (m1 * cell.reciprocal[0][d] + m2 * cell.reciprocal[1][d] + m3 * cell.reciprocal[2][d]);
        const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        if (k2 == 0 || k2 > kc * kc) continue;
        std::complex<double> sum = 0;
        for (std::size_t i = 0; i < atoms.size(); ++i)
          sum += double(atoms.q[i]) * std::polar(1.0, -(k[0] * atoms.x[i] + k[1] * atoms.y[i] + k[2] * atoms.z[i]));
        ks.push_back(k);
        s.push_back(sum * (4 * kPi / cell.volume) * std::exp(-k2 / (4 * beta * beta)) / k2);
      }
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t n = 0; n < grid.point_count(); ++n) {
    const auto ijk = grid.ijk(n);
    const auto p = grid.position(ijk[0], ijk[1], ijk[2]);
    for (std::size_t i = 0; i < atoms.size() && with_real; ++i) {
      Vec3 f = cell.fractional({p[0] - atoms.x[i], p[1] - atoms.y[i], p[2] - atoms.z[i]});
      for (double& v : f) v -= std::round(v);
      const Vec3 d = cell.cartesian(f);
      for (const Vec3& t : translations) {
        const double r2 = (d[0] + t[0]) * (d[0] + t[0]) + (d[1] + t[1]) * (d[1] + t[1]) +
                          (d[2] + t[2]) * (d[2] + t[2]);
        if (r2 >= rc * rc) continue;
        const double dist = std::max(std::sqrt(r2), r_min);
        out.real[n] += atoms.q[i] * std::erfc(beta * dist) / dist;
      }
    }
    for (std::size_t k = 0; k < ks.size(); ++k)
      out.reciprocal[n] += (s[k] * std::polar(1.0, ks[k][0] * p[0] + ks[k][1] * p[1] + ks[k][2] * p[2])).real();
  }
  return out;
}

// scale·(real + reciprocal − πQ/(β²V)): the Ewald potential.
inline std::vector<double> reference_ewald(const AtomSet& atoms, const UnitCell& cell, const GridSpec& grid,
                                    double beta = 0.3) {
  const ReferenceParts parts = reference_parts(atoms, cell, grid, beta, test_physics().min_distance);
  const double background = kPi * atoms.total_charge() / (beta * beta * cell.volume);
  std::vector<double> out(grid.point_count());
  for (std::size_t n = 0; n < out.size(); ++n)
    out[n] = scale() * (parts.real[n] + parts.reciprocal[n] - background);
  return out;
}

// scale·Σ_{k≠0} (4π/V) e^{−k²/4β²}/k² Re[S(k) e^{ik·r}] at every grid point: the smooth map of
// Ewald factor β (the reciprocal part, without background).
inline std::vector<double> reference_reciprocal(const AtomSet& atoms, const UnitCell& cell, const GridSpec& grid,
                                                double beta) {
  std::vector<double> out = reference_parts(atoms, cell, grid, beta, test_physics().min_distance, false).reciprocal;
  for (double& v : out) v *= scale();
  return out;
}

const UnitCell& orthorhombic() {
  static const UnitCell cell = make_cell({20, 18, 22});
  return cell;
}
const UnitCell& triclinic() {
  static const UnitCell cell = make_cell({20, 22, 19}, {75, 85, 65});
  return cell;
}

}  // namespace dcsgrid::test
