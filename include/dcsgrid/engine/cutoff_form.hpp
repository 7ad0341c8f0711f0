// The cutoff forms, written once over the scalar type (core/scalar_math.hpp) and shared by the CPU
// and CUDA cutoff engines and the float64 references. The pair value of a cutoff method for r < rc
// is q·V(r) with V one of (g the physics' pair term, r clamped below at r_min):
//   truncated: g(r)
//   shifted:   g(r)·(1 − r²/rc²)²                  value and slope vanish at rc
//   switched:  g(r)·(1 − 3t² + 2t³), t = max(0, (r − rs)/(rc − rs))   (C1 at rs and rc)
//   msm_short: 1/r − γ_k(r_true²/rc²)/rc            MSM's short-range part (core/softening.hpp);
//              γ at the unclamped distance, so that with the long-range part γ_k/rc the sum is
//              exactly the clamped 1/r of the direct method
//   ewald_real: erfc(β·r)/r                        the real-space part of the Ewald sum
//              (engine/periodic.hpp), at the clamped distance; constant dielectric only
// and 0 for r ≥ rc.
#pragma once
#include <type_traits>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/core/softening.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::engine {

// What the forms read, in the scalar type T of the kernel.
template <typename T>
struct CutoffCoefficients {
  T rc2;        // rc²
  T inv_rc2;    // 1/rc²
  T inv_rc;     // 1/rc
  T rs;         // switch start (switched form)
  T inv_width;  // 1/(rc − rs) (switched form)
  T beta;       // Ewald coefficient β, Å⁻¹ (ewald_real form)
};

// CutoffOptions reduced to what a kernel needs, in float and in double.
struct CutoffParams {
  CutoffForm form = CutoffForm::shifted;
  int softening_order = 2;
  CutoffCoefficients<float> f{};
  CutoffCoefficients<double> d{};
};

inline CutoffParams make_cutoff_params(const CutoffOptions& o) {
  CutoffParams p;
  p.form = o.form;
  p.softening_order = o.softening_order;
  const double rc = o.radius;
  p.d = {rc * rc, 1.0 / (rc * rc), 1.0 / rc, o.switch_start, 1.0 / (rc - o.switch_start),
         o.ewald_beta};
  p.f = {float(p.d.rc2), float(p.d.inv_rc2), float(p.d.inv_rc), float(p.d.rs),
         float(p.d.inv_width), float(p.d.beta)};
  return p;
}

// V(r) for a pair with r2 = r² < rc², r2c = max(r2, r_min²) and inv_r = 1/√r2c (computed by the
// caller, each backend its own way). K: the softening order (msm_short only; 0 otherwise).
template <PairForm P, CutoffForm C, int K, typename T>
DCSGRID_HD T cutoff_pair_term(T r2, T r2c, T inv_r, T exp2_kappa, const CutoffCoefficients<T>& c) {
  using M = ScalarMath<T>;
  const T g = pair_term<P>(r2c, inv_r, exp2_kappa);
  if constexpr (C == CutoffForm::truncated) {
    return g;
  } else if constexpr (C == CutoffForm::shifted) {
    const T s = M::neg_mul_add(r2c, c.inv_rc2, M::constant(1.0));
    return g * (s * s);
  } else if constexpr (C == CutoffForm::switched) {
    const T t = M::max((r2c * inv_r - c.rs) * c.inv_width, M::constant(0.0));
    return g * M::neg_mul_add(t * t, M::neg_mul_add(M::constant(2.0), t, M::constant(3.0)),
                              M::constant(1.0));
  } else if constexpr (C == CutoffForm::msm_short) {
    static_assert(P == PairForm::coulomb, "msm_short splits 1/r only");
    return g - softening_inside<K>(r2 * c.inv_rc2) * c.inv_rc;
  } else {
    static_assert(P == PairForm::coulomb, "ewald_real splits 1/r only");
    return M::erfc(c.beta * (r2c * inv_r)) * g;
  }
}

// Calls fn(pair, form, order) with std::integral_constant values for every (pair form, cutoff
// form, softening order) that exists: the one list of kernel instantiations. The softening
// orders 1..kMaxSofteningOrder are all compiled (each is a short polynomial); order is 0 for the
// forms other than msm_short. Throws Error for msm_short or ewald_real with a pair form other
// than Coulomb.
template <typename Fn>
void with_cutoff_term(PairForm pair, CutoffForm form, int softening_order, Fn&& fn) {
  using std::integral_constant;
  const auto order = [&](auto p) {
    if constexpr (decltype(p)::value != PairForm::coulomb) {
      throw Error("the msm-short cutoff form needs a constant dielectric");
    } else {
      using C = integral_constant<CutoffForm, CutoffForm::msm_short>;
      switch (softening_order) {
        case 1: return fn(p, C{}, integral_constant<int, 1>{});
        case 2: return fn(p, C{}, integral_constant<int, 2>{});
        case 3: return fn(p, C{}, integral_constant<int, 3>{});
        case 4: return fn(p, C{}, integral_constant<int, 4>{});
        case 5: return fn(p, C{}, integral_constant<int, 5>{});
        case 6: return fn(p, C{}, integral_constant<int, 6>{});
      }
      static_assert(kMaxSofteningOrder == 6, "list every softening order above");
      throw Error("msm-short cutoff form: softening order " + std::to_string(softening_order) +
                  " is out of range (1..6)");
    }
  };
  with_pair_form(pair, [&](auto p) {
    using Zero = integral_constant<int, 0>;
    const auto ewald = [&] {
      if constexpr (decltype(p)::value != PairForm::coulomb)
        throw Error("the ewald-real cutoff form needs a constant dielectric");
      else
        return fn(p, integral_constant<CutoffForm, CutoffForm::ewald_real>{}, Zero{});
    };
    switch (form) {
      case CutoffForm::truncated:
        return fn(p, integral_constant<CutoffForm, CutoffForm::truncated>{}, Zero{});
      case CutoffForm::shifted:
        return fn(p, integral_constant<CutoffForm, CutoffForm::shifted>{}, Zero{});
      case CutoffForm::switched:
        return fn(p, integral_constant<CutoffForm, CutoffForm::switched>{}, Zero{});
      case CutoffForm::msm_short: return order(p);
      case CutoffForm::ewald_real: return ewald();
    }
  });
}

// V(r) in double for any r² (0 beyond rc), for the float64 references.
inline double cutoff_pair_term_double(const PairKernel& k, const CutoffParams& p, double r2) {
  using M = ScalarMath<double>;
  if (r2 >= p.d.rc2) return 0.0;
  const double r2c = M::max(r2, k.min_r2_d), inv_r = M::rsqrt(r2c);
  double v = 0.0;
  with_cutoff_term(k.form, p.form, p.softening_order, [&](auto pair, auto form, auto order) {
    v = cutoff_pair_term<decltype(pair)::value, decltype(form)::value, decltype(order)::value>(
        r2, r2c, inv_r, k.exp2_kappa_d, p.d);
  });
  return v;
}

}  // namespace dcsgrid::engine
