// The multigrid's per-point formulas (engine/pb_multigrid.hpp), shared by the CPU solver
// (pb_multigrid.cpp) and the device's (pb_multigrid_cuda.cu) so that both compute the same operator,
// smoother and grid transfers. Arrays are a level's points, x fastest; face coefficients already
// divided by h² (cx[p] couples p and p + 1 along x).
#pragma once
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "dcsgrid/core/scalar_math.hpp"

namespace dcsgrid::engine::pb_stencil {

using Dims = std::array<std::int64_t, 3>;

// A grid coarsens while every count is odd and at least 5; the coarse grid has (n − 1)/2 + 1.
inline bool can_coarsen(const Dims& n) {
  return n[0] % 2 == 1 && n[1] % 2 == 1 && n[2] % 2 == 1 && n[0] >= 5 && n[1] >= 5 && n[2] >= 5;
}
inline Dims coarse_dims(const Dims& n) { return {(n[0] - 1) / 2 + 1, (n[1] - 1) / 2 + 1, (n[2] - 1) / 2 + 1}; }
inline std::size_t point_count(const Dims& n) { return std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]); }
// Red–black sweep pairs on the coarsest level: enough to solve it, as it is small.
inline std::int64_t coarsest_sweep_pairs(const Dims& n) {
  return 2 * (n[0] > n[1] ? (n[0] > n[2] ? n[0] : n[2]) : (n[1] > n[2] ? n[1] : n[2]));
}

// One level's coefficients: faces, the diagonal term and 1/diagonal.
struct Coefficients {
  Dims n{};
  const double* cx = nullptr;
  const double* cy = nullptr;
  const double* cz = nullptr;
  const double* c0 = nullptr;
  const double* inv_diag = nullptr;
  DCSGRID_HD std::size_t sy() const { return std::size_t(n[0]); }
  DCSGRID_HD std::size_t sz() const { return std::size_t(n[0]) * std::size_t(n[1]); }
};

DCSGRID_HD std::size_t at(const Dims& n, std::int64_t i, std::int64_t j, std::int64_t k) {
  return (std::size_t(k) * std::size_t(n[1]) + std::size_t(j)) * std::size_t(n[0]) + std::size_t(i);
}

DCSGRID_HD bool interior(const Dims& n, std::int64_t i, std::int64_t j, std::int64_t k) {
  return i > 0 && j > 0 && k > 0 && i < n[0] - 1 && j < n[1] - 1 && k < n[2] - 1;
}

// The operator's diagonal at interior point p.
DCSGRID_HD double diagonal(const Coefficients& L, std::size_t p) {
  const std::size_t sy = L.sy(), sz = L.sz();
  return L.cx[p] + L.cx[p - 1] + L.cy[p] + L.cy[p - sy] + L.cz[p] + L.cz[p - sz] + L.c0[p];
}

// (A u)_p at interior point p.
DCSGRID_HD double apply(const Coefficients& L, const double* u, std::size_t p) {
  const std::size_t sy = L.sy(), sz = L.sz();
  const double up = u[p];
  return L.cx[p] * (up - u[p + 1]) + L.cx[p - 1] * (up - u[p - 1]) + L.cy[p] * (up - u[p + sy]) +
         L.cy[p - sy] * (up - u[p - sy]) + L.cz[p] * (up - u[p + sz]) + L.cz[p - sz] * (up - u[p - sz]) +
         L.c0[p] * up;
}

// The Gauss–Seidel value of interior point p from its neighbours.
DCSGRID_HD double relaxed(const Coefficients& L, const double* f, const double* u, std::size_t p) {
  const std::size_t sy = L.sy(), sz = L.sz();
  const double sum = f[p] + L.cx[p] * u[p + 1] + L.cx[p - 1] * u[p - 1] + L.cy[p] * u[p + sy] +
                     L.cy[p - sy] * u[p - sy] + L.cz[p] * u[p + sz] + L.cz[p - sz] * u[p - sz];
  return sum * L.inv_diag[p];
}

// Red–black colour of a point: (i + j + k) % 2.
DCSGRID_HD int colour_of(std::int64_t i, std::int64_t j, std::int64_t k) { return int((i + j + k) & 1); }

DCSGRID_HD std::int64_t clamp_index(std::int64_t i, std::int64_t n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

DCSGRID_HD double transfer_weight(int offset) { return offset == 0 ? 0.5 : 0.25; }  // (¼, ½, ¼)

// The coarse face coefficient along axis a at coarse point (I, J, K) of a fine grid of n points:
// the two fine faces in series (harmonic mean), averaged across the axis with (¼, ½, ¼) weights;
// /4 for the doubled spacing.
DCSGRID_HD double coarse_face(const double* fine, const Dims& n, int axis, std::int64_t I, std::int64_t J,
                              std::int64_t K) {
  const std::int64_t c[3] = {2 * I, 2 * J, 2 * K};
  const int t1 = (axis + 1) % 3, t2 = (axis + 2) % 3;
  double sum = 0;
  for (int d1 = -1; d1 <= 1; ++d1)
    for (int d2 = -1; d2 <= 1; ++d2) {
      std::int64_t idx[3];
      idx[axis] = c[axis];
      idx[t1] = clamp_index(c[t1] + d1, n[t1]);
      idx[t2] = clamp_index(c[t2] + d2, n[t2]);
      const double a = fine[at(n, idx[0], idx[1], idx[2])];
      idx[axis] += 1;
      const double b = fine[at(n, idx[0], idx[1], idx[2])];
      const double series = (a + b > 0) ? 2 * a * b / (a + b) : 0.0;
      sum += transfer_weight(d1) * transfer_weight(d2) * series;
    }
  return sum / 4;
}

// Σ (¼, ½, ¼)³ weights · v around fine point (2I, 2J, 2K) of a grid of n points, indices clamped.
DCSGRID_HD double full_weighting(const double* v, const Dims& n, std::int64_t I, std::int64_t J, std::int64_t K) {
  double sum = 0;
  for (int dk = -1; dk <= 1; ++dk)
    for (int dj = -1; dj <= 1; ++dj)
      for (int di = -1; di <= 1; ++di)
        sum += transfer_weight(di) * transfer_weight(dj) * transfer_weight(dk) *
               v[at(n, clamp_index(2 * I + di, n[0]), clamp_index(2 * J + dj, n[1]),
                    clamp_index(2 * K + dk, n[2]))];
  return sum;
}

// The trilinear interpolation of a coarse correction e (nc points) at fine point (i, j, k).
DCSGRID_HD double prolonged(const double* e, const Dims& nc, std::int64_t i, std::int64_t j, std::int64_t k) {
  const std::int64_t i0 = i / 2, i1 = (i + 1) / 2, j0 = j / 2, j1 = (j + 1) / 2, k0 = k / 2, k1 = (k + 1) / 2;
  const double v = e[at(nc, i0, j0, k0)] + e[at(nc, i1, j0, k0)] + e[at(nc, i0, j1, k0)] + e[at(nc, i1, j1, k0)] +
                   e[at(nc, i0, j0, k1)] + e[at(nc, i1, j0, k1)] + e[at(nc, i0, j1, k1)] + e[at(nc, i1, j1, k1)];
  return 0.125 * v;
}

// The mobile ions of the full equation at one point (engine/pb_multigrid.hpp IonTerm): g(u) and
// g'(u) for species of valence z and weight w, t turning u into kT/e, exponents capped at ±85
// as APBS's EXPMAX.
constexpr double kExponentCap = 85.0;
DCSGRID_HD double capped_exp(double x) {
  return std::exp(x < -kExponentCap ? -kExponentCap : (x > kExponentCap ? kExponentCap : x));
}
DCSGRID_HD double ion_g(const double* z, const double* w, int species, double t, double u) {
  double g = 0;
  for (int s = 0; s < species; ++s) g -= w[s] * capped_exp(-z[s] * t * u);
  return g;
}
DCSGRID_HD double ion_dg(const double* z, const double* w, int species, double t, double u) {
  double dg = 0;
  for (int s = 0; s < species; ++s) dg += w[s] * z[s] * capped_exp(-z[s] * t * u);
  return dg;
}

}  // namespace dcsgrid::engine::pb_stencil
