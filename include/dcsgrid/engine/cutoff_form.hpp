// The cutoff forms' smoothing factor S, shared by the CPU and CUDA cutoff engines. The pair term
// of a cutoff method is q·g(r)·S(r) for r < rc and 0 beyond; g is the physics' pair term.
#pragma once
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::engine {

// What a kernel needs of CutoffOptions, precomputed.
struct CutoffParams {
  CutoffForm form = CutoffForm::shifted;
  float rc2 = 144.0f;          // rc²
  float inv_rc2 = 1 / 144.0f;  // 1/rc²
  float rs = 10.0f;            // switch start (switched form)
  float inv_width = 0.5f;      // 1/(rc − rs)
};

inline CutoffParams make_cutoff_params(const CutoffOptions& o) {
  CutoffParams p;
  p.form = o.form;
  p.rc2 = float(o.radius * o.radius);
  p.inv_rc2 = float(1.0 / (o.radius * o.radius));
  p.rs = float(o.switch_start);
  p.inv_width = float(1.0 / (o.radius - o.switch_start));
  return p;
}

// S for a pair at squared distance r2 < rc2 (r = sqrt(r2), passed in when the caller has it).
//   truncated: 1
//   shifted:   (1 − r²/rc²)²                       value and slope vanish at rc
//   switched:  1 below rs, then 1 − 3t² + 2t³ with t = (r − rs)/(rc − rs)   (C1 at rs and rc)
template <CutoffForm F>
DCSGRID_HD float cutoff_factor(float r2, float r, const CutoffParams& p);

template <>
DCSGRID_HD float cutoff_factor<CutoffForm::truncated>(float, float, const CutoffParams&) {
  return 1.0f;
}
template <>
DCSGRID_HD float cutoff_factor<CutoffForm::shifted>(float r2, float, const CutoffParams& p) {
  const float s = 1.0f - r2 * p.inv_rc2;
  return s * s;
}
template <>
DCSGRID_HD float cutoff_factor<CutoffForm::switched>(float, float r, const CutoffParams& p) {
  float t = (r - p.rs) * p.inv_width;
  t = t < 0.0f ? 0.0f : t;
  return 1.0f - t * t * (3.0f - 2.0f * t);
}

// The same in double, for references.
inline double cutoff_factor_double(CutoffForm form, double r2, const CutoffOptions& o) {
  const double rc = o.radius;
  if (r2 >= rc * rc) return 0.0;
  switch (form) {
    case CutoffForm::truncated: return 1.0;
    case CutoffForm::shifted: {
      const double s = 1.0 - r2 / (rc * rc);
      return s * s;
    }
    case CutoffForm::switched: {
      const double r = __builtin_sqrt(r2);
      if (r <= o.switch_start) return 1.0;
      const double t = (r - o.switch_start) / (rc - o.switch_start);
      return 1.0 - t * t * (3.0 - 2.0 * t);
    }
  }
  return 0.0;
}

}  // namespace dcsgrid::engine
