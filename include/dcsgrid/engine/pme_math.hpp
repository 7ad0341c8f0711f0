// PME's per-point arithmetic, written once for the CPU (pme.cpp) and the GPU (pme_cuda.cu): the
// cardinal B-splines that spread charges and interpolate potentials, a spline's first mesh point,
// and the Ewald factor of the influence function at a mesh frequency.
#pragma once
#include <math.h>

#include <cstdint>
#include <numbers>

#include "dcsgrid/core/scalar_math.hpp"  // DCSGRID_HD

namespace dcsgrid::engine {

// The largest B-spline order PME takes.
inline constexpr int kMaxBsplineOrder = 12;

// M_p(w + j), j = 0..order−1, for w in [0, 1): the cardinal B-spline weights of the mesh points
// floor(u) − j for a charge at mesh coordinate u, w = u − floor(u). order ≤ kMaxBsplineOrder.
// Real: double, or a vector of doubles (GCC vector extension) for several axes at once.
template <typename Real>
DCSGRID_HD void bspline_weights(Real w, int order, Real* m) {
  // M_1 = 1 on [0, 1); M_n(x) = (x·M_{n−1}(x) + (n − x)·M_{n−1}(x − 1))/(n − 1), evaluated at
  // x = w + j in place from the top down.
  m[0] = Real{} + 1.0;
  DCSGRID_HOST_UNROLL
  for (int n = 2; n <= order; ++n) {
    const double inv = 1.0 / (n - 1);
    m[n - 1] = (1 - w) * m[n - 2] * inv;
    DCSGRID_HOST_UNROLL
    for (int j = n - 2; j >= 1; --j) m[j] = ((w + j) * m[j] + (n - w - j) * m[j - 1]) * inv;
    m[0] = w * m[0] * inv;
  }
}

// floor(u) wrapped into [0, k): the first mesh point of a spline at mesh coordinate u.
DCSGRID_HD std::int64_t bspline_first_point(double u, std::int64_t k) {
  const double base = floor(u);
  if (base >= 0 && base < double(k)) return std::int64_t(base);  // u inside the cell: most atoms
  const std::int64_t first = std::int64_t(base - floor(base / double(k)) * double(k));
  return first >= k ? first - k : first;  // rounding of a base just below a multiple of k
}

// (4π/V)·e^{−k²/4β²}/k² at the frequency of FFT index (m1, m2, m3) of a K1×K2×K3 mesh (each index
// is the signed frequency m, or m − K above K/2), k = 2π(s1 a* + s2 b* + s3 c*); 0 at k = 0.
// The influence function is this times the B-spline moduli |b1|²|b2|²|b3|². Matrix: Mat3 (rows
// a*, b*, c*, UnitCell::reciprocal) or its device copy.
template <typename Matrix>
DCSGRID_HD double pme_ewald_factor(std::int64_t m1, std::int64_t m2, std::int64_t m3, std::int64_t k1,
                                   std::int64_t k2, std::int64_t k3, const Matrix& reciprocal,
                                   double beta, double volume) {
  const double s1 = double(2 * m1 > k1 ? m1 - k1 : m1), s2 = double(2 * m2 > k2 ? m2 - k2 : m2),
               s3 = double(2 * m3 > k3 ? m3 - k3 : m3);
  if (s1 == 0 && s2 == 0 && s3 == 0) return 0;
  double kk = 0;
  for (int d = 0; d < 3; ++d) {
    const double kd =
        2 * std::numbers::pi * (s1 * reciprocal[0][d] + s2 * reciprocal[1][d] + s3 * reciprocal[2][d]);
    kk += kd * kd;
  }
  return 4 * std::numbers::pi / volume * exp(-kk / (4 * beta * beta)) / kk;
}

}  // namespace dcsgrid::engine
