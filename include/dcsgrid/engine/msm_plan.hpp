// Multilevel summation: options, the interpolation basis and the shape of the grid hierarchy,
// shared by the CPU and CUDA engines (engine/msm.hpp, engine/msm_cuda.hpp).
#pragma once
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"  // DCSGRID_HD

namespace dcsgrid::engine {

inline constexpr int kMsmMaxOrder = 10;

// Defaults from measurement (docs/msm.md): relative L2 against direct, order 4: 8e-4 on proteins,
// 2e-3 on water; order 6: 4e-4 on both at the same cost; order 10: 6e-5.
struct MsmOptions {
  double cutoff = 10.0;     // a, Å: the short-range part vanishes beyond it
  double spacing = 1.5;     // h, Å: the finest MSM grid (independent of the output grid)
  // Interpolation order p: 4 cubic, 6 quintic, 8, 10 (LAMMPS's convention). 6 by default: order 4
  // misses 1e-3 on water boxes at any affordable spacing, order 6 meets it at the same cost
  // (docs/msm.md).
  int order = 6;
  int softening_order = 0;  // Taylor C_k of γ; 0: p/2 (C2 for cubic; docs/msm.md)
};

// Throws Error naming the option when a setting is out of range.
void validate(const MsmOptions& options);
// The softening order used: options.softening_order, or p/2 when it is 0.
int softening_order_used(const MsmOptions& options);

// The nodal interpolation basis Φ of order p (Hardy's C1 piecewise polynomials of degree p−1):
// on each unit interval the polynomial that takes the data at the p−2 nearest nodes and, at the
// interval's two ends, the slope of the degree p−2 polynomial through the p−1 nodes centred
// there. p = 4 gives the Catmull–Rom cubic. Φ(n) = δ_n0, Φ is C1 and even, zero for |t| ≥ p/2,
// and the interpolant reproduces polynomials of degree p−2.
struct MsmBasis {
  int order = 4;
  // coef[m][j]: the weight of node floor(u) + m − (p/2 − 1) at u is Σ_j coef[m][j] s^j, s = u − floor(u).
  double coef[kMsmMaxOrder][kMsmMaxOrder] = {};

  // The weight of node m (0 .. order − 1) at fraction s ∈ [0, 1).
  template <typename T>
  DCSGRID_HD T weight(int m, T s) const {
    T v = T(coef[m][order - 1]);
    for (int j = order - 2; j >= 0; --j) v = v * s + T(coef[m][j]);
    return v;
  }
  // All order weights at fraction s.
  template <typename T>
  DCSGRID_HD void weights(T s, T* w) const {
    for (int m = 0; m < order; ++m) w[m] = weight(m, s);
  }
  // The offset of node 0 of weights() from floor(u).
  DCSGRID_HD int first_offset() const { return 1 - order / 2; }
};
MsmBasis make_msm_basis(int order);
// Φ(t) itself.
double msm_phi(const MsmBasis& basis, double t);

// One level's grid: points lo .. lo + n − 1 (global indices) along each axis, point I at
// origin + I·2^l·h. Arrays are x fastest.
struct MsmLevelShape {
  std::array<std::int64_t, 3> lo{}, n{};
  std::size_t points() const { return std::size_t(n[0]) * n[1] * n[2]; }
};

struct MsmPlan {
  MsmOptions options;
  int softening = 2;
  MsmBasis basis;
  std::array<double, 3> origin{};      // Å, global index 0 of every level
  std::vector<MsmLevelShape> levels;   // levels[0] finest; the last one is summed all pairs
  // Restriction weights ω_k = Φ(k/2), k = −(p−1) .. p−1 (2p − 1 entries); prolongation is the
  // transpose.
  std::vector<double> restriction;
  // Level stencil: g_0 at offsets d with |d| ≤ R = stencil_radius, dense (2R+1)³, x fastest;
  // level l uses g_0 · 2^−l (g_l(2^l h d) = g_0(h d)/2^l).
  int stencil_radius = 0;
  std::vector<double> stencil;
  // Top level kernel γ(|d|h/a)/(a·2^L) at |dx|, |dy|, |dz| < n of the top level, x fastest.
  std::vector<double> top_kernel;

  int top() const { return int(levels.size()) - 1; }
  double spacing(int level) const { return options.spacing * double(std::int64_t(1) << level); }
};

// The hierarchy for these atoms and output grid: level 0 covers both, with the interpolation
// margins; coarser levels are added while the next one is smaller and a level holds more points
// than the stencil. Throws Error for bad options or when the levels would not fit in memory.
MsmPlan make_msm_plan(const AtomSet& atoms, const GridSpec& output, const MsmOptions& options);

// The 1-D operator of a transfer between level l and l + 1 along one axis: output index r
// (relative to its level's lo) is Σ_c weight[r·width + c] · input[first[r] + c], c < count[r].
struct MsmTransfer1D {
  int width = 0;
  std::vector<std::int64_t> first;
  std::vector<int> count;
  std::vector<double> weight;
};
// Restriction (fine → coarse, coarse rows) and prolongation (coarse → fine, fine rows) of
// level → level + 1 along axis.
MsmTransfer1D msm_restriction_1d(const MsmPlan& plan, int level, int axis);
MsmTransfer1D msm_prolongation_1d(const MsmPlan& plan, int level, int axis);

// Where interpolation at a coordinate starts on level 0, as plain values a kernel can take.
struct MsmNodeMap {
  double origin[3] = {};
  double spacing = 0;
  std::int64_t offset[3] = {};  // basis.first_offset() − levels[0].lo
  // The first level-0 node (relative to level 0's lo) that interpolation at coordinate x along
  // axis reaches; s is set to the fraction that MsmBasis::weights takes.
  DCSGRID_HD std::int64_t first_node(int axis, double x, double& s) const {
    const double u = (x - origin[axis]) / spacing;
    const double fl = floor(u);
    s = u - fl;
    return std::int64_t(fl) + offset[axis];
  }
};
MsmNodeMap msm_node_map(const MsmPlan& plan);
// msm_node_map(plan).first_node(axis, x, s).
std::int64_t msm_first_node(const MsmPlan& plan, int axis, double x, double& s);

// The stencil's nonzero rows: at (dy, dz), weights plan.stencil[centre + dx] for dx = x_lo .. x_hi.
struct MsmStencilRow {
  int dy = 0, dz = 0, x_lo = 0, x_hi = 0;
  std::size_t centre = 0;
};
std::vector<MsmStencilRow> msm_stencil_rows(const MsmPlan& plan);
// The stencil's nonzero points (those within 2a of its centre).
std::size_t msm_stencil_points(const MsmPlan& plan);

// For each output point along axis (count output.dims[axis]), the first node (relative to
// level 0's lo) and the order interpolation weights, weights[i·order + m].
struct MsmAxisWeights {
  std::vector<std::int64_t> first;
  std::vector<double> weight;
};
MsmAxisWeights msm_output_weights(const MsmPlan& plan, const GridSpec& output, int axis);

}  // namespace dcsgrid::engine
