#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/pb_multigrid.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "dcsgrid/core/error.hpp"
#include "pb_stencil.hpp"

namespace dcsgrid::engine {
namespace {

using pb_stencil::Dims;
using pb_stencil::at;
using pb_stencil::can_coarsen;

// Below this many points a loop runs on one thread: the coarse levels' sweeps are too short to
// pay for a parallel region (and a busy machine makes every barrier slow).
constexpr std::int64_t kParallelPoints = 1 << 15;
bool parallel_worth(const Dims& n) { return n[0] * n[1] * n[2] > kParallelPoints; }

// One grid of the hierarchy: face coefficients already divided by h² (cx = ε_x/h_x²), the
// diagonal term, 1/diagonal, and the work vectors of the V-cycle.
struct Level {
  Dims n{};
  std::vector<double> cx, cy, cz, c0, inv_diag;
  std::vector<double> u, f, r;  // unused on the finest level (the caller's vectors)
  std::size_t size() const { return std::size_t(n[0]) * n[1] * n[2]; }
  pb_stencil::Coefficients view() const {
    return {n, cx.data(), cy.data(), cz.data(), c0.data(), inv_diag.empty() ? nullptr : inv_diag.data()};
  }
};

// Calls f(i, j, k, p) at every interior point (i, j, k) of a grid of n points, p = at(n, i, j, k);
// its planes on the team when the grid is large enough.
template <typename F>
void for_interior(const Dims& n, F&& f) {
#pragma omp parallel for num_threads(team_size()) schedule(static) if(parallel_worth(n))
  for (std::int64_t k = 1; k < n[2] - 1; ++k)
    for (std::int64_t j = 1; j < n[1] - 1; ++j)
      for (std::int64_t i = 1; i < n[0] - 1; ++i) f(i, j, k, at(n, i, j, k));
}

void fill_inverse_diagonal(Level& L) {
  L.inv_diag.assign(L.size(), 0.0);
  const pb_stencil::Coefficients view = L.view();
  for_interior(L.n, [&](std::int64_t, std::int64_t, std::int64_t, std::size_t p) {
    L.inv_diag[p] = 1.0 / pb_stencil::diagonal(view, p);
  });
}

// out = A u on the interior, 0 on the faces.
void apply(const Level& L, const std::vector<double>& u, std::vector<double>& out) {
  const Dims n = L.n;
  const pb_stencil::Coefficients view = L.view();
#pragma omp parallel for num_threads(team_size()) schedule(static) if(parallel_worth(n))
  for (std::int64_t k = 0; k < n[2]; ++k)
    for (std::int64_t j = 0; j < n[1]; ++j) {
      const std::size_t row = at(n, 0, j, k);
      if (k == 0 || j == 0 || k == n[2] - 1 || j == n[1] - 1) {
        std::fill_n(out.begin() + row, n[0], 0.0);
        continue;
      }
      out[row] = out[row + n[0] - 1] = 0.0;
      for (std::int64_t i = 1; i < n[0] - 1; ++i) out[row + i] = pb_stencil::apply(view, u.data(), row + i);
    }
}

void residual(const Level& L, const std::vector<double>& f, const std::vector<double>& u,
              std::vector<double>& r) {
  apply(L, u, r);
  const Dims n = L.n;
  for_interior(n, [&](std::int64_t, std::int64_t, std::int64_t, std::size_t p) { r[p] = f[p] - r[p]; });
}

// One Gauss–Seidel sweep over the points with (i + j + k) % 2 == colour: they couple only to
// the other colour, so the planes run in parallel.
void smooth(const Level& L, const std::vector<double>& f, std::vector<double>& u, int colour) {
  const Dims n = L.n;
  const pb_stencil::Coefficients view = L.view();
#pragma omp parallel for num_threads(team_size()) schedule(static) if(parallel_worth(n))
  for (std::int64_t k = 1; k < n[2] - 1; ++k)
    for (std::int64_t j = 1; j < n[1] - 1; ++j) {
      const std::int64_t first = 1 + ((1 + j + k + colour) & 1);
      for (std::int64_t i = first; i < n[0] - 1; i += 2) {
        const std::size_t p = at(n, i, j, k);
        u[p] = pb_stencil::relaxed(view, f.data(), u.data(), p);
      }
    }
}


Level coarsen(const Level& fine) {
  Level c;
  c.n = pb_stencil::coarse_dims(fine.n);
  const std::size_t size = c.size();
  c.cx.assign(size, 0.0);
  c.cy.assign(size, 0.0);
  c.cz.assign(size, 0.0);
  c.c0.assign(size, 0.0);
  const Dims n = c.n;
#pragma omp parallel for num_threads(team_size()) schedule(static) if(parallel_worth(n))
  for (std::int64_t K = 0; K < n[2]; ++K)
    for (std::int64_t J = 0; J < n[1]; ++J)
      for (std::int64_t I = 0; I < n[0]; ++I) {
        const std::size_t p = at(n, I, J, K);
        if (I < n[0] - 1) c.cx[p] = pb_stencil::coarse_face(fine.cx.data(), fine.n, 0, I, J, K);
        if (J < n[1] - 1) c.cy[p] = pb_stencil::coarse_face(fine.cy.data(), fine.n, 1, I, J, K);
        if (K < n[2] - 1) c.cz[p] = pb_stencil::coarse_face(fine.cz.data(), fine.n, 2, I, J, K);
        c.c0[p] = pb_stencil::full_weighting(fine.c0.data(), fine.n, I, J, K);
      }
  fill_inverse_diagonal(c);
  c.u.assign(size, 0.0);
  c.f.assign(size, 0.0);
  c.r.assign(size, 0.0);
  return c;
}

void restrict_to(const Level& fine, const std::vector<double>& r, Level& coarse) {
  const Dims n = coarse.n;
#pragma omp parallel for num_threads(team_size()) schedule(static) if(parallel_worth(n))
  for (std::int64_t K = 1; K < n[2] - 1; ++K)
    for (std::int64_t J = 1; J < n[1] - 1; ++J)
      for (std::int64_t I = 1; I < n[0] - 1; ++I)
        coarse.f[at(n, I, J, K)] = pb_stencil::full_weighting(r.data(), fine.n, I, J, K);
}

// u += trilinear interpolation of the coarse correction, on the fine interior.
void prolong_add(const Level& coarse, const Level& fine, std::vector<double>& u) {
  const double* e = coarse.u.data();
  for_interior(fine.n, [&](std::int64_t i, std::int64_t j, std::int64_t k, std::size_t p) {
    u[p] += pb_stencil::prolonged(e, coarse.n, i, j, k);
  });
}

struct Hierarchy {
  std::vector<Level> levels;
  int sweeps = 2;
};

// One symmetric V-cycle from level l: u (zero on entry) approximates A⁻¹ f.
void v_cycle(Hierarchy& h, std::size_t l, const std::vector<double>& f, std::vector<double>& u,
             std::vector<double>& r) {
  Level& L = h.levels[l];
  if (l + 1 == h.levels.size()) {
    const std::int64_t pairs = pb_stencil::coarsest_sweep_pairs(L.n);
    for (std::int64_t s = 0; s < pairs; ++s) {
      smooth(L, f, u, 0);
      smooth(L, f, u, 1);
      smooth(L, f, u, 1);
      smooth(L, f, u, 0);
    }
    return;
  }
  for (int s = 0; s < h.sweeps; ++s) {
    smooth(L, f, u, 0);
    smooth(L, f, u, 1);
  }
  residual(L, f, u, r);
  Level& C = h.levels[l + 1];
  restrict_to(L, r, C);
  std::fill(C.u.begin(), C.u.end(), 0.0);
  v_cycle(h, l + 1, C.f, C.u, C.r);
  prolong_add(C, L, u);
  for (int s = 0; s < h.sweeps; ++s) {
    smooth(L, f, u, 1);
    smooth(L, f, u, 0);
  }
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  const std::int64_t n = std::int64_t(a.size());
#pragma omp parallel for num_threads(team_size()) reduction(+ : sum) schedule(static) if(n > kParallelPoints)
  for (std::int64_t p = 0; p < n; ++p) sum += a[p] * b[p];
  return sum;
}

// The operator's coefficients divided by h², taken over (not copied: they are the largest arrays).
Level finest_level(PbOperator op) {
  Level L;
  L.n = op.dims;
  L.cx = std::move(op.eps_x);
  L.cy = std::move(op.eps_y);
  L.cz = std::move(op.eps_z);
  L.c0 = std::move(op.c);
  const double wx = 1 / (op.spacing[0] * op.spacing[0]), wy = 1 / (op.spacing[1] * op.spacing[1]),
               wz = 1 / (op.spacing[2] * op.spacing[2]);
  const std::int64_t size = std::int64_t(L.size());
#pragma omp parallel for num_threads(team_size()) schedule(static) if(size > kParallelPoints)
  for (std::int64_t p = 0; p < size; ++p) {
    L.cx[p] *= wx;
    L.cy[p] *= wy;
    L.cz[p] *= wz;
  }
  fill_inverse_diagonal(L);
  return L;
}

void check_operator(const PbOperator& op, const std::vector<double>& f, const std::vector<double>& u) {
  const std::size_t size = std::size_t(op.dims[0]) * op.dims[1] * op.dims[2];
  if (op.dims[0] < 3 || op.dims[1] < 3 || op.dims[2] < 3)
    throw Error("multigrid: the grid needs at least 3 points along each axis");
  for (const auto* v : {&op.eps_x, &op.eps_y, &op.eps_z, &op.c, &f, &u})
    if (v->size() != size) throw Error("multigrid: an array does not have one value per grid point");
}

}  // namespace

void pb_residual(const PbOperator& op, const std::vector<double>& f, const std::vector<double>& u,
                 std::vector<double>& r) {
  check_operator(op, f, u);
  r.assign(u.size(), 0.0);
  residual(finest_level(op), f, u, r);
}

namespace {

Hierarchy build_hierarchy(Level finest, int sweeps) {
  Hierarchy h;
  h.sweeps = sweeps;
  h.levels.push_back(std::move(finest));
  while (can_coarsen(h.levels.back().n)) h.levels.push_back(coarsen(h.levels.back()));
  return h;
}

// ‖f − A u_b‖, u_b: u's boundary values with a zero interior and no diagonal term: the norm of
// the right-hand side with the boundary's terms, the scale of every relative residual.
double rhs_norm(Level& L, const std::vector<double>& f, const std::vector<double>& u) {
  std::vector<double> boundary_only = u, r(u.size());
  for (std::int64_t k = 1; k < L.n[2] - 1; ++k)
    for (std::int64_t j = 1; j < L.n[1] - 1; ++j)
      std::fill_n(boundary_only.begin() + at(L.n, 1, j, k), L.n[0] - 2, 0.0);
  residual(L, f, boundary_only, r);
  return std::sqrt(dot(r, r));
}

// CG on the finest level preconditioned by one V-cycle a step, from u and its residual r, until
// ‖r‖ ≤ stop or max_steps; each step's ‖r‖/norm_f is appended to history (if given). Returns the
// steps taken.
int preconditioned_cg(Hierarchy& h, std::vector<double>& u, std::vector<double>& r, double stop,
                      int max_steps, double norm_f, std::vector<double>* history) {
  const Level& L = h.levels[0];
  const std::int64_t size = std::int64_t(u.size());
  std::vector<double> z(u.size(), 0.0), q(u.size());
  v_cycle(h, 0, r, z, q);
  std::vector<double> p = z;
  double rz = dot(r, z);
  for (int it = 1; it <= max_steps; ++it) {
    apply(L, p, q);
    const double alpha = rz / dot(p, q);
#pragma omp parallel for num_threads(team_size()) schedule(static) if(size > kParallelPoints)
    for (std::int64_t n = 0; n < size; ++n) {
      u[n] += alpha * p[n];
      r[n] -= alpha * q[n];
    }
    const double norm_r = std::sqrt(dot(r, r));
    if (history) history->push_back(norm_r / norm_f);
    if (norm_r <= stop || it == max_steps) return it;
    std::fill(z.begin(), z.end(), 0.0);
    v_cycle(h, 0, r, z, q);
    const double rz_next = dot(r, z);
    const double beta = rz_next / rz;
    rz = rz_next;
#pragma omp parallel for num_threads(team_size()) schedule(static) if(size > kParallelPoints)
    for (std::int64_t n = 0; n < size; ++n) p[n] = z[n] + beta * p[n];
  }
  return max_steps;
}

}  // namespace

MultigridReport solve_multigrid(PbOperator op, const std::vector<double>& f, std::vector<double>& u,
                                const MultigridOptions& options) {
  check_operator(op, f, u);
  Hierarchy h = build_hierarchy(finest_level(std::move(op)), options.smoothing_sweeps);
  Level& L = h.levels[0];
  MultigridReport report;
  report.levels = int(h.levels.size());
  const double norm_f = rhs_norm(L, f, u);
  std::vector<double> r(u.size());
  residual(L, f, u, r);
  const double norm_r = std::sqrt(dot(r, r));
  report.residual_history.push_back(norm_f > 0 ? norm_r / norm_f : 0.0);
  if (norm_f == 0 || norm_r <= options.tolerance * norm_f) {
    report.converged = true;
    return report;
  }
  report.iterations = preconditioned_cg(h, u, r, options.tolerance * norm_f, options.max_iterations,
                                        norm_f, &report.residual_history);
  report.converged = report.residual_history.back() <= options.tolerance;
  return report;
}

namespace {

// F = f − A_ε u − c·g(u) on the interior (A_ε: L with its diagonal term removed); returns ‖F‖.
double newton_residual(Level& L, const std::vector<double>& c, const IonTerm& ions,
                       const std::vector<double>& f, const std::vector<double>& u, std::vector<double>& F) {
  residual(L, f, u, F);
  const Dims n = L.n;
  for_interior(n, [&](std::int64_t, std::int64_t, std::int64_t, std::size_t p) {
    if (c[p] == 0) return;
    const double g = pb_stencil::ion_g(ions.valence.data(), ions.weight.data(), int(ions.weight.size()), ions.to_kt, u[p]);
    F[p] -= c[p] * g / ions.to_kt;
  });
  return std::sqrt(dot(F, F));
}

// The Jacobian's diagonal term c·g'(u) into L.c0, and the coarse levels rebuilt from it.
void set_jacobian(Hierarchy& h, const std::vector<double>& c, const IonTerm& ions, const std::vector<double>& u) {
  Level& L = h.levels[0];
  const std::int64_t size = std::int64_t(u.size());
#pragma omp parallel for num_threads(team_size()) schedule(static) if(size > kParallelPoints)
  for (std::int64_t p = 0; p < size; ++p) {
    const double dg =
        c[p] != 0 ? pb_stencil::ion_dg(ions.valence.data(), ions.weight.data(), int(ions.weight.size()), ions.to_kt, u[p])
                  : 0.0;
    L.c0[p] = c[p] * dg;
  }
  fill_inverse_diagonal(L);
  h.levels.resize(1);
  while (can_coarsen(h.levels.back().n)) h.levels.push_back(coarsen(h.levels.back()));
}

}  // namespace

MultigridReport solve_newton(PbOperator op, const std::vector<double>& f, std::vector<double>& u,
                             const IonTerm& ions, const MultigridOptions& options) {
  check_operator(op, f, u);
  Level finest = finest_level(std::move(op));
  const std::vector<double> c = std::move(finest.c0);
  finest.c0.assign(c.size(), 0.0);
  Hierarchy h = build_hierarchy(std::move(finest), options.smoothing_sweeps);
  MultigridReport report;
  report.levels = int(h.levels.size());
  const double norm_f = rhs_norm(h.levels[0], f, u);
  std::vector<double> F(u.size()), delta(u.size()), trial(u.size()), F_trial(u.size());
  double norm_F = newton_residual(h.levels[0], c, ions, f, u, F);
  report.residual_history.push_back(norm_f > 0 ? norm_F / norm_f : 0.0);
  for (int step = 1; norm_f > 0 && norm_F > options.tolerance * norm_f && step <= options.max_iterations; ++step) {
    set_jacobian(h, c, ions, u);
    std::fill(delta.begin(), delta.end(), 0.0);
    std::vector<double> r = F;
    const double stop = std::max(0.1 * norm_F, 0.5 * options.tolerance * norm_f);
    preconditioned_cg(h, delta, r, stop, options.max_iterations, norm_f, nullptr);
    // Residuals are measured with A_ε alone: the ion term comes from newton_residual.
    std::fill(h.levels[0].c0.begin(), h.levels[0].c0.end(), 0.0);
    double lambda = 1.0, norm_trial = 0;
    for (int halving = 0; halving < 20; ++halving, lambda *= 0.5) {
      for (std::size_t p = 0; p < u.size(); ++p) trial[p] = u[p] + lambda * delta[p];
      norm_trial = newton_residual(h.levels[0], c, ions, f, trial, F_trial);
      if (norm_trial < norm_F) break;
    }
    if (!(norm_trial < norm_F)) break;  // no descent: report as not converged
    u.swap(trial);
    F.swap(F_trial);
    norm_F = norm_trial;
    report.iterations = step;
    report.residual_history.push_back(norm_F / norm_f);
  }
  report.converged = norm_f == 0 || norm_F <= options.tolerance * norm_f;
  return report;
}

}  // namespace dcsgrid::engine
