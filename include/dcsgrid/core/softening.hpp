// The softening γ that splits 1/r for multilevel summation (MSM):
//   1/r = [1/r − γ(r/a)/a] + γ(r/a)/a
// The first part vanishes for r ≥ a (summed over atom bins); the second is smooth and carried on
// grids. γ(ρ) = 1/ρ for ρ ≥ 1; below 1 it is the Taylor polynomial of ρ^(−1) = (1 + (ρ² − 1))^(−1/2)
// in ρ² − 1 up to degree k ("Taylor C_k", C^k at ρ = 1), so it holds only even powers of ρ and
// needs no square root. C1: 3/2 − ρ²/2; C2: 15/8 − 5/4 ρ² + 3/8 ρ⁴ (Hardy, Stone & Schulten 2009).
// Written once over the scalar type (ScalarMath<T>: double, float, the CPU engine's SIMD vector).
#pragma once
#include "dcsgrid/core/scalar_math.hpp"

namespace dcsgrid {

inline constexpr int kMaxSofteningOrder = 6;

// Taylor coefficients of (1 + t)^(−1/2): binom(−1/2, n) = (−1)^n (2n)! / (4^n (n!)²).
DCSGRID_HD double softening_coefficient(int n) {
  constexpr double c[kMaxSofteningOrder + 1] = {
      1.0, -1.0 / 2, 3.0 / 8, -5.0 / 16, 35.0 / 128, -63.0 / 256, 231.0 / 1024};
  return c[n];
}

// γ_k at ρ² = s for s < 1 (callers handle s ≥ 1, where γ = 1/ρ): Horner's rule in t = s − 1.
template <int K, typename T>
DCSGRID_HD T softening_inside(T s) {
  static_assert(K >= 1 && K <= kMaxSofteningOrder, "softening order 1..6");
  using M = ScalarMath<T>;
  const T t = s - M::constant(1.0);
  T g = M::constant(softening_coefficient(K));
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int n = K - 1; n >= 0; --n) g = M::mul_add(g, t, M::constant(softening_coefficient(n)));
  return g;
}

// γ_k(ρ) in double for any ρ ≥ 0, order chosen at run time (grid stencils, references).
inline double softening(int order, double rho) {
  if (rho >= 1.0) return 1.0 / rho;
  const double t = rho * rho - 1.0;
  double g = softening_coefficient(order);
  for (int n = order - 1; n >= 0; --n) g = g * t + softening_coefficient(n);
  return g;
}

}  // namespace dcsgrid
