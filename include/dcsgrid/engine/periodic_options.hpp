// The periodic methods' options (ewald, pme, the smooth map), apart from the engine's periodic.hpp
// so that the request (engine.hpp) can hold them.
#pragma once

namespace dcsgrid::engine {

struct PeriodicOptions {
  // The real-space part is cut at real_cutoff (Å); the Ewald coefficient β is chosen so that
  // erfc(β·real_cutoff) = tolerance (GROMACS' ewald-rtol), unless beta is set (> 0, Å⁻¹). The
  // exact Ewald sum keeps the k vectors with e^{−k²/4β²} ≥ tolerance.
  double real_cutoff = 10.0;
  double tolerance = 1e-5;  // --pme-tolerance
  double beta = 0;
  // pme: the B-spline order (4..12) and the mesh's largest spacing (Å); the mesh takes the
  // FFT-friendly sizes (2^a 3^b 5^c 7^d) at or above cell length / mesh_spacing.
  int pme_order = 6;
  double mesh_spacing = 1.0;  // --pme-spacing
  // > 0: only the reciprocal part, of Gaussian charges of Ewald factor smooth_beta (Å⁻¹).
  double smooth_beta = 0;    // --smooth
};

inline constexpr int kPmeMinOrder = 4, kPmeMaxOrder = 12;

// Throws Error naming the option for a value out of range.
void validate(const PeriodicOptions& options);

}  // namespace dcsgrid::engine
