// A float64 multigrid solver for the 7-point variable-coefficient operator
//   (A u)_p = Σ_faces ε_f (u_p − u_neighbour)/h² + c_p·u_p
// on a vertex grid's interior, u fixed on the outer faces (Dirichlet). Conjugate gradients
// preconditioned by one symmetric V-cycle per iteration: red–black Gauss–Seidel smoothing
// (red then black before the coarse correction, black then red after), full-weighting restriction,
// trilinear prolongation and coarse operators rediscretised from the fine coefficients (faces in
// series along their axis: harmonic mean; across it: (¼, ½, ¼) weights), so the preconditioner is
// symmetric positive definite and CG converges at a rate nearly independent of the dielectric jump.
// A grid coarsens while every dimension n is odd and (n − 1)/2 ≥ 2: n = c·2^l + 1 gives l levels.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

namespace dcsgrid::engine {

struct PbOperator {
  std::array<std::int64_t, 3> dims{};   // nx, ny, nz, x fastest
  std::array<double, 3> spacing{1, 1, 1};  // Å
  std::vector<double> eps_x, eps_y, eps_z;  // face coefficients, engine/pb_discretize.hpp layout
  std::vector<double> c;                    // the diagonal term (κ̄² for linearised PB)
};

struct MultigridOptions {
  double tolerance = 1e-9;  // on ‖f − A u‖₂ / ‖f‖₂
  int max_iterations = 100;
  int smoothing_sweeps = 2;  // red–black sweeps before and after each coarse correction
};

struct MultigridReport {
  std::vector<double> residual_history;  // before the first iteration, then after each
  int iterations = 0;
  int levels = 0;
  bool converged = false;
};

// Solves A u = f on the interior points; u holds the boundary values on its outer faces and the
// initial guess inside. f's values on the faces are ignored. op is taken by value so that a caller
// can move its arrays in. Does not throw on non-convergence: the report says so.
MultigridReport solve_multigrid(PbOperator op, const std::vector<double>& f, std::vector<double>& u,
                                const MultigridOptions& options);

// The mobile ions of the full PB equation: the diagonal term c·u becomes c·g(u) with
//   g(u) = −Σ_i w_i·exp(−z_i·t·u)/t,   w_i = c_i·z_i/Σ_j c_j·z_j²,
// z_i the ions' charges, c_i their concentrations and t the factor that turns u into kT/e (the
// exponents capped at ±85, as APBS). g(u) ≈ u for small u: the linearised equation.
struct IonTerm {
  std::vector<double> valence, weight;  // z_i, w_i
  double to_kt = 1.0;                   // t
};

// Solves −∇·ε∇u + c·g(u) = f by Newton's method: each step solves the Jacobian system (diagonal
// c·g'(u)) with the preconditioned CG of solve_multigrid to a tenth of the current residual, then
// halves the step until the residual falls. report.residual_history holds ‖F(u)‖/‖f‖ before and
// after each Newton step; iterations counts the Newton steps.
MultigridReport solve_newton(PbOperator op, const std::vector<double>& f, std::vector<double>& u,
                             const IonTerm& ions, const MultigridOptions& options);

// r = f − A u on the interior, 0 on the faces (for tests and the callers' checks).
void pb_residual(const PbOperator& op, const std::vector<double>& f, const std::vector<double>& u,
                 std::vector<double>& r);

}  // namespace dcsgrid::engine
