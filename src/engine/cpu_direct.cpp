// Direct summation on the CPU, in gather form: OpenMP threads take (z, y) rows; within a row
// 8 consecutive points along x share one AVX2 vector, and blocks of kBlock vectors share each
// atom's loads. Atoms are visited in tiles of kTile that stay in L1 together with their
// dy² + dz² for the row (taken in double, rounded once). Float sums over kFoldAtoms atoms are
// folded into one double per point.
//
// Accuracy, measured against float64 sums (relative L2): what remains is the rounding of each
// float32 pair term, ~1e-7 of sqrt(Σ term²). For random charges that is ~2e-7 of the result;
// in a neutral system, where the potential is a small remainder of large sums, it grows like
// sqrt(atoms): 7e-7 for a 3·10^4-atom water box, 1.2e-6 at 10^5 atoms, whatever the
// accumulation (even summing float-rounded exact terms in double gives 4e-7 and 7e-7 there).
// Folding every 32 atoms costs ~3% and keeps accumulation well below that: folding every 1024
// atoms gave 1.8e-6 on the test's random atoms, every 32 atoms 3.6e-7.
#include <algorithm>
#include <array>
#include <vector>

#include "cpu_frame.hpp"
#include "cpu_simd.hpp"
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

// Adds the tile's potential at B vectors of points (x positions px) to sum (8·B doubles).
template <PairForm F, int B>
void add_tile(const Tile& tile, const v8f* px, v8f min_r2, v8f kappa, double* sum) {
  v8f p[B];
  for (int b = 0; b < B; ++b) p[b] = px[b];
  for (std::size_t a0 = 0; a0 < tile.n; a0 += kFoldAtoms) {
    v8f acc[B] = {};
    const std::size_t end = std::min(tile.n, a0 + kFoldAtoms);
    for (std::size_t a = a0; a < end; ++a) {
      const v8f ax = splat(tile.x[a]), dyz2 = splat(tile.dyz2[a]), q = splat(tile.q[a]);
#pragma GCC unroll 8
      for (int b = 0; b < B; ++b) {
        const v8f dx = p[b] - ax;
        const v8f r2 = max(fma(dx, dx, dyz2), min_r2);
        acc[b] = fma(q, pair_term<F>(r2, rsqrt(r2), kappa), acc[b]);
      }
    }
    for (int b = 0; b < B; ++b) add_to_double(sum + b * kLanes, acc[b]);
  }
}

// Per-thread buffers: dy²+dz² of a tile for the current row, and the row's double sums.
struct RowScratch {
  std::vector<float> dyz2;
  std::vector<double> sum;
};

// The potential at the nx points of the row at (y, z) = yz; ax: the atoms' x in the row frame.
template <PairForm F>
void direct_row(const AtomSet& atoms, const std::vector<float>& ax, std::array<double, 2> yz,
                const std::vector<v8f>& px, const PairKernel& kernel, RowScratch& scratch,
                std::size_t nx, float* out) {
  const v8f min_r2 = splat(kernel.min_r2), kappa = splat(kernel.kappa);
  const std::size_t nvec = px.size();
  std::fill(scratch.sum.begin(), scratch.sum.end(), 0.0);
  for (std::size_t a0 = 0; a0 < atoms.size(); a0 += kTile) {
    const std::size_t n = std::min(kTile, atoms.size() - a0);
    const float *y = atoms.y.data() + a0, *z = atoms.z.data() + a0;
    float* dyz2 = scratch.dyz2.data();
    for (std::size_t a = 0; a < n; ++a) {
      const double dy = yz[0] - y[a], dz = yz[1] - z[a];
      dyz2[a] = float(dy * dy + dz * dz);
    }
    const Tile tile{ax.data() + a0, dyz2, atoms.q.data() + a0, n};
    std::size_t v = 0;
    for (; v + kBlock <= nvec; v += kBlock)
      add_tile<F, kBlock>(tile, &px[v], min_r2, kappa, &scratch.sum[v * kLanes]);
    for (; v < nvec; ++v) add_tile<F, 1>(tile, &px[v], min_r2, kappa, &scratch.sum[v * kLanes]);
  }
  finish_row(scratch.sum, nx, kernel.scale_d, false, out);
}

}  // namespace

void direct_sum_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel, Slab slab,
                    float* out) {
  check_slab(grid, slab, "direct_sum_cpu");
  const std::vector<float> ax = row_frame_x(atoms, grid);
  const std::vector<v8f> px = row_positions(grid);
  const std::int64_t ny = grid.ny(), nx = grid.nx();
  with_pair_form(kernel.form, [&](auto form) {
#pragma omp parallel
    {
      RowScratch scratch{std::vector<float>(kTile), std::vector<double>(px.size() * kLanes)};
#pragma omp for collapse(2) schedule(dynamic)
      for (std::int64_t k = slab.z_begin; k < slab.z_end; ++k)
        for (std::int64_t j = 0; j < ny; ++j)
          direct_row<decltype(form)::value>(atoms, ax, row_yz(grid, j, k), px, kernel, scratch,
                                            nx, out + ((k - slab.z_begin) * ny + j) * nx);
    }
  });
}

}  // namespace dcsgrid::engine
