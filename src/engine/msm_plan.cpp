// The MSM interpolation basis, the level shapes, stencils and 1-D transfer operators.
#include "dcsgrid/engine/msm_plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/softening.hpp"

namespace dcsgrid::engine {
namespace {

// Levels beyond this would be 2^20 h apart: never needed for a molecule.
constexpr int kMaxLevels = 20;

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floor_div(-a, b); }

// Solves A x = b (n×n, row-major) by Gaussian elimination with partial pivoting; b becomes x.
void solve(std::vector<double> a, std::vector<double>& b, int n) {
  for (int col = 0; col < n; ++col) {
    int pivot = col;
    for (int r = col + 1; r < n; ++r)
      if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
    for (int c = 0; c < n; ++c) std::swap(a[col * n + c], a[pivot * n + c]);
    std::swap(b[col], b[pivot]);
    for (int r = 0; r < n; ++r) {
      if (r == col) continue;
      const double f = a[r * n + col] / a[col * n + col];
      for (int c = col; c < n; ++c) a[r * n + c] -= f * a[col * n + c];
      b[r] -= f * b[col];
    }
  }
  for (int r = 0; r < n; ++r) b[r] /= a[r * n + r];
}

// Slope at 0 of the Lagrange polynomial through nodes −k..k that is 1 at node n, 0 elsewhere.
double lagrange_slope_at_zero(int n, int k) {
  double sum = 0;
  for (int j = -k; j <= k; ++j) {
    if (j == n) continue;
    double term = 1.0 / (n - j);
    for (int m = -k; m <= k; ++m)
      if (m != n && m != j) term *= (0.0 - m) / double(n - m);
    sum += term;
  }
  return sum;
}

// The conditions on the piece over [0, 1] as rows of a p×p system in the monomials s^j: values
// at nodes 2−p/2 .. p/2−1, then the slopes at 0 and 1.
std::vector<double> basis_conditions(int p) {
  std::vector<double> a(std::size_t(p) * p, 0.0);
  int row = 0;
  for (int v = 2 - p / 2; v <= p / 2 - 1; ++v, ++row)
    for (int j = 0; j < p; ++j) a[row * p + j] = std::pow(double(v), j);
  for (int end = 0; end <= 1; ++end, ++row)
    for (int j = 1; j < p; ++j) a[row * p + j] = j * std::pow(double(end), j - 1);
  return a;
}

MsmLevelShape coarser(const MsmLevelShape& fine, int p) {
  MsmLevelShape c;
  for (int d = 0; d < 3; ++d) {
    c.lo[d] = ceil_div(fine.lo[d] - (p - 1), 2);
    const std::int64_t hi = floor_div(fine.lo[d] + fine.n[d] - 1 + (p - 1), 2);
    c.n[d] = hi - c.lo[d] + 1;
  }
  return c;
}

// Level 0: every atom and output point with the nodes its interpolation reaches.
MsmLevelShape finest_level(const Box& box, const MsmPlan& plan) {
  const int p = plan.options.order;
  MsmLevelShape s;
  for (int d = 0; d < 3; ++d) {
    const double extent = (box.hi[d] - plan.origin[d]) / plan.options.spacing;
    if (!(extent < 1e7))
      throw Error("msm: the atoms and the output grid span " + std::to_string(box.hi[d] - box.lo[d]) +
                  " Å along an axis, too far for MSM grids of " +
                  std::to_string(plan.options.spacing) + " Å");
    s.lo[d] = 1 - p / 2;
    // One node more than the far corner needs, so rounding in (x − origin)/h cannot step past it.
    s.n[d] = std::int64_t(std::floor(extent)) + p / 2 + 1 - s.lo[d] + 1;
  }
  return s;
}

void fill_stencil(MsmPlan& plan) {
  const double a = plan.options.cutoff, h = plan.options.spacing;
  const int r = int(std::ceil(2 * a / h));
  const int w = 2 * r + 1;
  plan.stencil_radius = r;
  plan.stencil.assign(std::size_t(w) * w * w, 0.0);
  for (int dz = -r; dz <= r; ++dz)
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        const double dist = h * std::sqrt(double(dx * dx + dy * dy + dz * dz));
        if (dist >= 2 * a) continue;  // both terms are 1/r there
        plan.stencil[(std::size_t(dz + r) * w + (dy + r)) * w + (dx + r)] =
            softening(plan.softening, dist / a) / a - softening(plan.softening, dist / (2 * a)) / (2 * a);
      }
}

void fill_top_kernel(MsmPlan& plan) {
  const MsmLevelShape& top = plan.levels.back();
  const double a = plan.options.cutoff, h = plan.options.spacing;
  const double level_scale = 1.0 / (a * double(std::int64_t(1) << plan.top()));
  plan.top_kernel.resize(top.points());
  std::size_t n = 0;
  for (std::int64_t dz = 0; dz < top.n[2]; ++dz)
    for (std::int64_t dy = 0; dy < top.n[1]; ++dy)
      for (std::int64_t dx = 0; dx < top.n[0]; ++dx, ++n)
        plan.top_kernel[n] =
            softening(plan.softening, h * std::sqrt(double(dx * dx + dy * dy + dz * dz)) / a) * level_scale;
}

}  // namespace

void validate(const MsmOptions& o) {
  if (!(o.cutoff > 0) || !std::isfinite(o.cutoff))
    throw Error("msm cutoff must be positive and finite, got " + std::to_string(o.cutoff) + " Å");
  if (!(o.spacing > 0) || !std::isfinite(o.spacing))
    throw Error("msm spacing must be positive and finite, got " + std::to_string(o.spacing) + " Å");
  if (o.order < 4 || o.order > kMsmMaxOrder || o.order % 2)
    throw Error("msm order must be 4, 6, 8 or 10, got " + std::to_string(o.order));
  if (o.softening_order < 0 || o.softening_order > kMaxSofteningOrder)
    throw Error("msm softening order must be 1.." + std::to_string(kMaxSofteningOrder) +
                " (0: order/2), got " + std::to_string(o.softening_order));
  // The stencil has (4a/h + 1)³ points; below a/h = 1 the grids cannot carry γ's curvature, and
  // beyond a/h = 16 the stencil (~1.4·10^5 points) costs more than the cutoff sum it replaces.
  const double ratio = o.cutoff / o.spacing;
  if (ratio < 1 || ratio > 16)
    throw Error("msm cutoff/spacing must lie in [1, 16], got " + std::to_string(o.cutoff) + " / " +
                std::to_string(o.spacing) + " = " + std::to_string(ratio));
}

int softening_order_used(const MsmOptions& o) {
  return o.softening_order ? o.softening_order : o.order / 2;
}

MsmBasis make_msm_basis(int p) {
  if (p < 4 || p > kMsmMaxOrder || p % 2) throw Error("msm order must be 4, 6, 8 or 10, got " + std::to_string(p));
  MsmBasis basis;
  basis.order = p;
  const int k = p / 2 - 1;
  const std::vector<double> a = basis_conditions(p);
  for (int m = 0; m < p; ++m) {
    const int node = m - k;  // offset from the interval's start
    std::vector<double> b(p, 0.0);
    int row = 0;
    for (int v = 2 - p / 2; v <= p / 2 - 1; ++v, ++row) b[row] = v == node ? 1.0 : 0.0;
    b[row++] = std::abs(node) <= k ? lagrange_slope_at_zero(node, k) : 0.0;
    b[row++] = std::abs(node - 1) <= k ? lagrange_slope_at_zero(node - 1, k) : 0.0;
    solve(a, b, p);
    for (int j = 0; j < p; ++j) basis.coef[m][j] = b[j];
  }
  return basis;
}

double msm_phi(const MsmBasis& basis, double t) {
  const double fl = std::floor(t);
  const int m = -int(fl) - basis.first_offset();
  if (m < 0 || m >= basis.order) return 0.0;
  double w[kMsmMaxOrder];
  basis.weights(t - fl, w);
  return w[m];
}

MsmPlan make_msm_plan(const AtomSet& atoms, const GridSpec& output, const MsmOptions& options) {
  validate(options);
  validate(output);
  MsmPlan plan;
  plan.options = options;
  plan.softening = softening_order_used(options);
  plan.basis = make_msm_basis(options.order);
  const int p = options.order;
  for (int k = -(p - 1); k <= p - 1; ++k) plan.restriction.push_back(msm_phi(plan.basis, 0.5 * k));
  fill_stencil(plan);

  // The atoms in range (every core's pass) have finite coordinates; the others are looked at one by one.
  if (first_atom_out_of_range(atoms) < atoms.size())
    for (std::size_t i = 0; i < atoms.size(); ++i)
      if (!std::isfinite(atoms.x[i]) || !std::isfinite(atoms.y[i]) || !std::isfinite(atoms.z[i]))
        throw Error("msm: atom " + std::to_string(i + 1) + " has a non-finite coordinate");
  Box box{output.origin, output.far_corner()};
  if (!atoms.empty()) box = union_box(box, bounding_box(atoms));
  plan.origin = box.lo;
  plan.levels.push_back(finest_level(box, plan));
  const auto& l0 = plan.levels[0];
  // Charges, potentials and the transfer temporaries: about four doubles per level-0 point.
  require_host_memory(grid_from_origin(plan.origin, l0.n, options.spacing), 8);

  // Coarsen while a level holds more points than the stencil (the top level's all-pairs sum is
  // then no dearer than one stencil pass) and the next level is smaller.
  const std::size_t stencil_points = msm_stencil_points(plan);
  while (int(plan.levels.size()) < kMaxLevels && plan.levels.back().points() > stencil_points) {
    const MsmLevelShape next = coarser(plan.levels.back(), p);
    if (next.points() >= plan.levels.back().points()) break;
    plan.levels.push_back(next);
  }
  fill_top_kernel(plan);
  return plan;
}

namespace {

// Appends the row over inputs lo .. hi (empty when lo > hi; base: the input level's lo), the
// input at index i weighted by ω(offset(i)).
template <typename Offset>
void add_row(const MsmPlan& plan, std::int64_t lo, std::int64_t hi, std::int64_t base, Offset offset,
             MsmTransfer1D& op) {
  op.first.push_back(lo - base);
  op.count.push_back(int(std::max<std::int64_t>(hi - lo + 1, 0)));
  for (int c = 0; c < op.width; ++c)
    op.weight.push_back(lo + c <= hi ? plan.restriction[offset(lo + c) + plan.options.order - 1] : 0.0);
}

}  // namespace

MsmTransfer1D msm_restriction_1d(const MsmPlan& plan, int level, int axis) {
  const int p = plan.options.order;
  const MsmLevelShape &fine = plan.levels[level], &coarse = plan.levels[level + 1];
  const std::int64_t f_lo = fine.lo[axis], f_hi = fine.lo[axis] + fine.n[axis] - 1;
  MsmTransfer1D op;
  op.width = 2 * p - 1;
  for (std::int64_t r = 0; r < coarse.n[axis]; ++r) {
    const std::int64_t centre = 2 * (coarse.lo[axis] + r);
    add_row(plan, std::max(centre - (p - 1), f_lo), std::min(centre + (p - 1), f_hi), f_lo,
            [centre](std::int64_t i) { return i - centre; }, op);
  }
  return op;
}

MsmTransfer1D msm_prolongation_1d(const MsmPlan& plan, int level, int axis) {
  const int p = plan.options.order;
  const MsmLevelShape &fine = plan.levels[level], &coarse = plan.levels[level + 1];
  const std::int64_t c_lo = coarse.lo[axis], c_hi = coarse.lo[axis] + coarse.n[axis] - 1;
  MsmTransfer1D op;
  op.width = p;
  for (std::int64_t r = 0; r < fine.n[axis]; ++r) {
    const std::int64_t i = fine.lo[axis] + r;
    add_row(plan, std::max(ceil_div(i - (p - 1), 2), c_lo), std::min(floor_div(i + (p - 1), 2), c_hi), c_lo,
            [i](std::int64_t j) { return i - 2 * j; }, op);
  }
  return op;
}

MsmNodeMap msm_node_map(const MsmPlan& plan) {
  MsmNodeMap map;
  map.spacing = plan.options.spacing;
  for (int axis = 0; axis < 3; ++axis) {
    map.origin[axis] = plan.origin[axis];
    map.offset[axis] = plan.basis.first_offset() - plan.levels[0].lo[axis];
  }
  return map;
}

std::int64_t msm_first_node(const MsmPlan& plan, int axis, double x, double& s) {
  return msm_node_map(plan).first_node(axis, x, s);
}

std::vector<MsmStencilRow> msm_stencil_rows(const MsmPlan& plan) {
  const int r = plan.stencil_radius, width = 2 * r + 1;
  std::vector<MsmStencilRow> rows;
  for (int dz = -r; dz <= r; ++dz)
    for (int dy = -r; dy <= r; ++dy) {
      const std::size_t centre = (std::size_t(dz + r) * width + (dy + r)) * width + r;
      int x_hi = r;
      while (x_hi >= 0 && plan.stencil[centre + x_hi] == 0.0) --x_hi;
      if (x_hi >= 0) rows.push_back({dy, dz, -x_hi, x_hi, centre});  // else the row misses the sphere
    }
  return rows;
}

std::size_t msm_stencil_points(const MsmPlan& plan) {
  return std::size_t(std::count_if(plan.stencil.begin(), plan.stencil.end(), [](double x) { return x != 0.0; }));
}

MsmAxisWeights msm_output_weights(const MsmPlan& plan, const GridSpec& output, int axis) {
  const int p = plan.options.order;
  MsmAxisWeights w;
  w.weight.resize(std::size_t(output.dims[axis]) * p);
  for (std::int64_t i = 0; i < output.dims[axis]; ++i) {
    double s = 0;
    w.first.push_back(msm_first_node(plan, axis, output.origin[axis] + i * output.spacing[axis], s));
    plan.basis.weights(s, &w.weight[i * p]);
  }
  return w;
}

}  // namespace dcsgrid::engine
