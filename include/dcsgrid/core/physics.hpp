// The potential of one charge, shared by every backend (host and device) so they cannot drift.
#pragma once
#include <string>

#include "dcsgrid/core/units.hpp"

#if defined(__CUDACC__)
#define DCSGRID_HD __host__ __device__ __forceinline__
#else
#define DCSGRID_HD inline
#endif

namespace dcsgrid {

// What surrounds the charges. V(p) = k_C·u · Σ q_i · g(|p − r_i|), where u converts kcal/mol/e
// to the output unit and g is one of:
//   constant dielectric ε:        g(r) = 1/(ε r)
//   distance-dependent ε(r) = 4r: g(r) = 1/(4 r²)
//   Debye–Hückel screening:       g(r) = exp(−κ r)/(ε r), κ from ionic strength, ε and T
// r is clamped below at min_distance so a point on an atom gives a finite value.
struct Physics {
  double dielectric = 1.0;
  bool distance_dependent = false;
  double ionic_strength = 0.0;  // mol/L; 0 = no screening
  double temperature = kDefaultTemperature;
  double min_distance = 0.5;  // Å
  Unit unit = Unit::kT_per_e;
};

// Throws Error on contradictory or out-of-range settings (for example ddd with screening).
void validate(const Physics& physics);
std::string describe(const Physics& physics);

enum class PairForm { coulomb, distance_dependent, debye_huckel };

// Physics reduced to what a kernel needs: the form, one scale factor, κ and r_min².
struct PairKernel {
  PairForm form = PairForm::coulomb;
  float scale = 1.0f;  // k_C·u/ε, or k_C·u/4 for ddd
  float kappa = 0.0f;  // 1/Å
  float min_r2 = 0.25f;

  double scale_d = 1.0;  // the same in double, for reference sums
  double kappa_d = 0.0;
  double min_r2_d = 0.25;
};
PairKernel make_pair_kernel(const Physics& physics);

// g(r)·(scale applied by the caller), given r² already clamped to min_r2, in float.
template <PairForm F>
DCSGRID_HD float pair_term(float r2, float kappa);

template <>
DCSGRID_HD float pair_term<PairForm::coulomb>(float r2, float) {
#if defined(__CUDA_ARCH__)
  return rsqrtf(r2);
#else
  return 1.0f / __builtin_sqrtf(r2);
#endif
}
template <>
DCSGRID_HD float pair_term<PairForm::distance_dependent>(float r2, float) { return 1.0f / r2; }
template <>
DCSGRID_HD float pair_term<PairForm::debye_huckel>(float r2, float kappa) {
#if defined(__CUDA_ARCH__)
  const float inv_r = rsqrtf(r2);
  return __expf(-kappa * r2 * inv_r) * inv_r;
#else
  const float r = __builtin_sqrtf(r2);
  return __builtin_expf(-kappa * r) / r;
#endif
}

// The same in double, for the float64 references the tests compare against.
inline double pair_term_double(const PairKernel& k, double r2) {
  if (r2 < k.min_r2_d) r2 = k.min_r2_d;
  switch (k.form) {
    case PairForm::coulomb: return 1.0 / __builtin_sqrt(r2);
    case PairForm::distance_dependent: return 1.0 / r2;
    case PairForm::debye_huckel: {
      const double r = __builtin_sqrt(r2);
      return __builtin_exp(-k.kappa_d * r) / r;
    }
  }
  return 0.0;
}

}  // namespace dcsgrid
