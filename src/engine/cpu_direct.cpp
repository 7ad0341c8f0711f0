// Direct summation on the CPU, in gather form: OpenMP threads take (z, y) rows; within a row
// 8 consecutive points along x share one AVX2 vector, and blocks of kBlock vectors share each
// atom's loads. Atoms are visited in tiles of kTile that stay in L1 together with their
// dy² + dz² for the row (taken in double, rounded once) and their x relative to the block
// (cpu_frame.hpp). Float sums over kFoldAtoms atoms are folded into one double per point.
//
// Accuracy, measured against float64 sums (relative L2). Each pair term is a float32 value
// with ~1e-7 relative rounding; the sum's error is that times sqrt(Σ term²). For random charges
// and proteins that is 1e-7 to 4e-7 of the result (bench_cpu_direct: 1tii 3.7e-7). In a
// neutral system the potential is a small remainder of large sums and the same rounding weighs
// more: even exactly computed terms, rounded to float and summed in double, give 4.7e-7 (3·10^4-
// atom water box) and 6e-7 (10^5 atoms) on a grid covering the box. With one float per term this
// kernel gave 6e-7 to 1.05e-6 there, depending on the plane (a second-order Newton step or
// folding every 8 atoms gained < 5%, a correctly rounded sqrt + divide nothing). Three measures
// bring it to 8.7e-7 on bench_cpu_direct's 3·10^4-atom slab (6.3e-7 on the test's grid):
//   - Coulomb terms carried as two floats: q times the 12-bit rsqrt estimate, and q times its
//     Newton correction, summed in two accumulators. The estimate is exact as a float and the
//     correction is small, so 1/r is carried far below one ulp for one instruction more per
//     pair: 1.05e-6 -> 8.7e-7 (1TII 4.1e-7 -> 3.7e-7);
//   - x differences taken relative to the block (cpu_frame.hpp): with one frame for the grid,
//     the rounding of far atoms' coordinates gave 1.1e-6 and 2.1e-6;
//   - float sums folded every 32 atoms (~5% of the time): every 1024 gave 1.8e-6 on the random
//     atoms of tests/test_engine_cpu_direct.cpp.
// For the other forms 1/sqrt is the hardware estimate plus one Newton step: twice as fast as
// sqrt and divide (7.1e9 against 3.4e9 pairs/s per core) and as accurate at this level.
#include <algorithm>
#include <array>
#include <vector>

#include "cpu_frame.hpp"
#include "cpu_simd.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"

namespace dcsgrid::engine {
namespace {

using namespace simd;

// Atoms per tile: x, q and dy²+dz² of 1024 atoms take 12 KiB of L1.
constexpr std::size_t kTile = 1024;
// Atoms summed in float before the sums are added to the points' doubles (see above).
constexpr std::size_t kFoldAtoms = 32;
// Vectors of points per block, sharing each atom's three broadcasts. 2, 3, 4 and 6 measured
// within 5% of each other (the FMA pipes are the limit); 2 wastes the fewest lanes on short rows.
constexpr int kBlock = 2;

struct Tile {
  const float* x;
  const float* dyz2;
  const float* q;
  std::size_t n;
};

// Adds the tile's potential at B vectors of points to sum (8·B doubles). px: the points' x and
// tile.x the atoms', both relative to the block's first point.
template <PairForm F, int B>
void add_tile(const Tile& tile, const v8f* px, v8f min_r2, v8f exp2_kappa, double* sum) {
  v8f p[B];
  for (int b = 0; b < B; ++b) p[b] = px[b];
  for (std::size_t a0 = 0; a0 < tile.n; a0 += kFoldAtoms) {
    v8f acc[B] = {}, acc_lo[B] = {};
    const std::size_t end = std::min(tile.n, a0 + kFoldAtoms);
    for (std::size_t a = a0; a < end; ++a) {
      const v8f ax = splat(tile.x[a]), dyz2 = splat(tile.dyz2[a]), q = splat(tile.q[a]);
#pragma GCC unroll 8
      for (int b = 0; b < B; ++b) {
        const v8f dx = p[b] - ax;
        const v8f r2 = max(fma(dx, dx, dyz2), min_r2);
        if constexpr (F == PairForm::coulomb) {
          // g = 1/r is linear in 1/r: the form applied to each part of 1/√r², summed apart.
          const RsqrtParts y = rsqrt_parts(r2);
          acc[b] = fma(q, pair_term<F>(r2, y.hi, exp2_kappa), acc[b]);
          acc_lo[b] = fma(q, pair_term<F>(r2, y.lo, exp2_kappa), acc_lo[b]);
        } else {
          acc[b] = fma(q, pair_term<F>(r2, rsqrt(r2), exp2_kappa), acc[b]);
        }
      }
    }
    for (int b = 0; b < B; ++b) {
      add_to_double(sum + b * kLanes, acc[b]);
      if constexpr (F == PairForm::coulomb) add_to_double(sum + b * kLanes, acc_lo[b]);
    }
  }
}

// Per-thread buffers: a tile's dy²+dz² for the current row and x relative to the current block,
// and the row's double sums.
struct RowScratch {
  std::vector<float> dyz2, x;
  std::vector<double> sum;
};

struct DirectInput {
  const AtomSet& atoms;
  const SplitX& x;                // atoms' x relative to the grid origin
  const std::vector<v8f>& px;     // lane_offsets
  const GridSpec& grid;
  const PairKernel& kernel;
};

// The potential at the nx points of the row at (y, z) = yz.
template <PairForm F>
void direct_row(const DirectInput& in, std::array<double, 2> yz, RowScratch& scratch, float* out) {
  const v8f min_r2 = splat(in.kernel.min_r2), exp2_kappa = splat(in.kernel.exp2_kappa);
  const std::size_t nvec = in.px.size(), count = in.atoms.size();
  std::fill(scratch.sum.begin(), scratch.sum.end(), 0.0);
  for (std::size_t a0 = 0; a0 < count; a0 += kTile) {
    const std::size_t n = std::min(kTile, count - a0);
    const float *y = in.atoms.y.data() + a0, *z = in.atoms.z.data() + a0;
    const float *x_hi = in.x.hi.data() + a0, *x_lo = in.x.lo.data() + a0;
    float *dyz2 = scratch.dyz2.data(), *x = scratch.x.data();
    for (std::size_t a = 0; a < n; ++a) {
      const double dy = yz[0] - y[a], dz = yz[1] - z[a];
      dyz2[a] = float(dy * dy + dz * dz);
    }
    const Tile tile{x, dyz2, in.atoms.q.data() + a0, n};
    const auto block = [&](std::size_t v, auto width) {
      const Split origin = vector_origin(v, in.grid);
      for (std::size_t a = 0; a < n; ++a) x[a] = (x_hi[a] - origin.hi) + (x_lo[a] - origin.lo);
      add_tile<F, decltype(width)::value>(tile, in.px.data(), min_r2, exp2_kappa,
                                          &scratch.sum[v * kLanes]);
    };
    std::size_t v = 0;
    for (; v + kBlock <= nvec; v += kBlock) block(v, std::integral_constant<int, kBlock>{});
    for (; v < nvec; ++v) block(v, std::integral_constant<int, 1>{});
  }
  finish_row(scratch.sum, std::size_t(in.grid.nx()), in.kernel.scale_d, false, out);
}

// The potential at up to 8 points p[0..count) (one vector; missing lanes repeat the last point).
// Coordinates are taken relative to the first point: the lanes' offsets are small floats (exact
// for points of one grid near each other), and each atom's offset from that point is made, a tile
// at a time, from the atoms' and the point's coordinates split into two floats against the atoms'
// box (as the rows' x: near atoms keep their accuracy wherever the points lie).
template <PairForm F>
void direct_points(const std::array<double, 3>* p, std::size_t count, const std::array<SplitX, 3>& atom_xyz,
                   const std::array<double, 3>& frame, const float* charges, std::size_t atoms,
                   const PairKernel& kernel, std::array<std::vector<float>, 3>& offsets, float* out) {
  alignas(32) float lanes[3][kLanes];
  Split origin[3];
  for (int d = 0; d < 3; ++d) {
    origin[d] = split(p[0][d] - frame[d]);
    for (std::size_t l = 0; l < std::size_t(kLanes); ++l) lanes[d][l] = float(p[std::min(l, count - 1)][d] - p[0][d]);
  }
  const v8f px = load(lanes[0]), py = load(lanes[1]), pz = load(lanes[2]);
  const v8f min_r2 = splat(kernel.min_r2), exp2_kappa = splat(kernel.exp2_kappa);
  alignas(32) double sum[kLanes] = {};
  for (std::size_t a0 = 0; a0 < atoms; a0 += kTile) {
    const std::size_t n = std::min(kTile, atoms - a0);
    for (int d = 0; d < 3; ++d) {
      const float *hi = atom_xyz[d].hi.data() + a0, *lo = atom_xyz[d].lo.data() + a0;
      float* rel = offsets[d].data();
      for (std::size_t a = 0; a < n; ++a) rel[a] = (hi[a] - origin[d].hi) + (lo[a] - origin[d].lo);
    }
    const float *ax = offsets[0].data(), *ay = offsets[1].data(), *az = offsets[2].data(), *q = charges + a0;
    for (std::size_t f0 = 0; f0 < n; f0 += kFoldAtoms) {
      v8f acc = {}, acc_lo = {};
      const std::size_t end = std::min(n, f0 + kFoldAtoms);
      for (std::size_t a = f0; a < end; ++a) {
        const v8f dx = px - splat(ax[a]), dy = py - splat(ay[a]), dz = pz - splat(az[a]);
        const v8f r2 = max(fma(dx, dx, fma(dy, dy, dz * dz)), min_r2);
        if constexpr (F == PairForm::coulomb) {
          const RsqrtParts y = rsqrt_parts(r2);
          acc = fma(splat(q[a]), pair_term<F>(r2, y.hi, exp2_kappa), acc);
          acc_lo = fma(splat(q[a]), pair_term<F>(r2, y.lo, exp2_kappa), acc_lo);
        } else {
          acc = fma(splat(q[a]), pair_term<F>(r2, rsqrt(r2), exp2_kappa), acc);
        }
      }
      add_to_double(sum, acc);
      if constexpr (F == PairForm::coulomb) add_to_double(sum, acc_lo);
    }
  }
  for (std::size_t l = 0; l < count; ++l) out[l] = float(kernel.scale_d * sum[l]);
}

}  // namespace

void direct_sum_points_cpu(const AtomSet& atoms, const std::vector<std::array<double, 3>>& points,
                           const PairKernel& kernel, float* out) {
  if (points.empty()) return;
  // The frame: the atoms' box's low corner (any fixed point near the atoms keeps the splits small).
  std::array<double, 3> frame{};
  if (!atoms.empty()) {
    const auto box = bounding_box(atoms);
    frame = box.lo;
  }
  const std::array<SplitX, 3> xyz = {split_axis(atoms.x, frame[0]), split_axis(atoms.y, frame[1]),
                                     split_axis(atoms.z, frame[2])};
  const std::size_t groups = (points.size() + kLanes - 1) / kLanes;
  with_pair_form(kernel.form, [&](auto form) {
#pragma omp parallel num_threads(team_size())
    {
      std::array<std::vector<float>, 3> offsets;
      for (auto& o : offsets) o.resize(kTile);
#pragma omp for schedule(dynamic, 16)
      for (std::size_t g = 0; g < groups; ++g) {
        const std::size_t first = g * kLanes, count = std::min<std::size_t>(kLanes, points.size() - first);
        direct_points<decltype(form)::value>(points.data() + first, count, xyz, frame, atoms.q.data(), atoms.size(),
                                             kernel, offsets, out + first);
      }
    }
  });
}

void direct_sum_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel, Slab slab,
                    float* out) {
  check_slab(grid, slab, "direct_sum_cpu");
  require_orthogonal(grid, "direct_sum_cpu");
  const SplitX x = split_x(atoms, grid);
  const std::vector<v8f> px = lane_offsets(grid);
  const DirectInput in{atoms, x, px, grid, kernel};
  const std::int64_t ny = grid.ny(), nx = grid.nx();
  with_pair_form(kernel.form, [&](auto form) {
#pragma omp parallel num_threads(team_size())
    {
      RowScratch scratch{std::vector<float>(kTile), std::vector<float>(kTile),
                         std::vector<double>(px.size() * kLanes)};
#pragma omp for collapse(2) schedule(dynamic)
      for (std::int64_t k = slab.z_begin; k < slab.z_end; ++k)
        for (std::int64_t j = 0; j < ny; ++j)
          direct_row<decltype(form)::value>(in, row_yz(grid, j, k), scratch,
                                            out + ((k - slab.z_begin) * ny + j) * nx);
    }
  });
}

}  // namespace dcsgrid::engine
