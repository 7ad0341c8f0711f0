// The potential of one charge, shared by every backend (host and device) so they cannot drift.
#pragma once
#include <string>
#include <type_traits>

#include "dcsgrid/core/scalar_math.hpp"  // DCSGRID_HD, ScalarMath<T>
#include "dcsgrid/core/units.hpp"

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
  float scale = 1.0f;       // k_C·u/ε, or k_C·u/4 for ddd
  float exp2_kappa = 0.0f;  // −κ·log2(e): exp(−κr) = 2^(exp2_kappa·r), one multiply per pair
  float min_r2 = 0.25f;

  double scale_d = 1.0;  // the same in double, for reference sums
  double kappa_d = 0.0;  // κ, 1/Å
  double exp2_kappa_d = 0.0;
  double min_r2_d = 0.25;
};
PairKernel make_pair_kernel(const Physics& physics);

// g(r) of the form for r² already clamped to min_r2, with inv_r = 1/√r2 from the caller (each
// backend computes 1/√ its own way: MUFU, FMA-pipe Newton steps, the AVX2 estimate + Newton;
// the compiler drops it where a form does not use it). The scale is applied by the caller. Written
// once over the scalar type T (ScalarMath<T>): every backend and the float64 references
// instantiate this.
template <PairForm F, typename T>
DCSGRID_HD T pair_term(T r2, T inv_r, T exp2_kappa) {
  using M = ScalarMath<T>;
  if constexpr (F == PairForm::coulomb) {
    return inv_r;
  } else if constexpr (F == PairForm::distance_dependent) {
    return M::recip(r2);
  } else {
    return M::exp2(exp2_kappa * (r2 * inv_r)) * inv_r;
  }
}

// Calls fn(std::integral_constant<PairForm, F>{}) for the kernel's form, so one template body
// serves all three forms without a branch per pair.
template <typename Fn>
decltype(auto) with_pair_form(PairForm form, Fn&& fn) {
  switch (form) {
    case PairForm::distance_dependent:
      return fn(std::integral_constant<PairForm, PairForm::distance_dependent>{});
    case PairForm::debye_huckel:
      return fn(std::integral_constant<PairForm, PairForm::debye_huckel>{});
    case PairForm::coulomb: break;
  }
  return fn(std::integral_constant<PairForm, PairForm::coulomb>{});
}

// g(max(r², r_min²)) in double, for the float64 references the tests compare against.
inline double pair_term_double(const PairKernel& k, double r2) {
  using M = ScalarMath<double>;
  r2 = M::max(r2, k.min_r2_d);
  return with_pair_form(k.form, [&](auto f) {
    return pair_term<decltype(f)::value>(r2, M::rsqrt(r2), k.exp2_kappa_d);
  });
}

}  // namespace dcsgrid
