// The cutoff method on the CPU: for every grid point, the atoms within rc.
//
// Atoms are binned into columns along x: square cells in (y, z) of edge rc/2, unbounded in x,
// sorted by column (a counting sort). A grid row (fixed y, z) can only see atoms in the columns
// that meet the disc of radius rc around it: with edge rc/2 those are at most 6x6 columns whose
// square (2.5 rc wide, 3 rc with the corner columns skipped) holds about twice the atoms that
// pass the exact test dy² + dz² < rc², and the scan costs a few operations per atom against
// ~50 for the pairs that atom then adds; a smaller edge cuts the scan but costs more columns per
// row, a larger one the reverse.
//
// The atoms that pass form the row's list, each with its dy² + dz² and its chord: the points
// within rc of an atom are one run along x, |x − ax| < sqrt(rc² − dy² − dz²). Each atom is then
// scattered onto the 8-point vectors its run overlaps (a mask drops the lanes outside rc), so
// no pair beyond rc is computed except the at most 7 lanes of rounding at each end. The row's
// float sums are folded into doubles every kFoldAtoms atoms. Threads take whole rows, so no
// two threads write one point, and the work follows the atoms: rows far from every atom cost a
// few column look-ups, which keeps the GPU engine's small, scattered overflow sets cheap.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu_frame.hpp"
#include "cpu_simd.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/cutoff_form.hpp"

namespace dcsgrid::engine {
namespace {

using namespace simd;

// Column edge as a fraction of rc (see above).
constexpr double kColumnEdgePerRadius = 0.5;
// Upper bound on the column count: a few atoms spread far apart get wider columns instead of a
// huge, mostly empty table.
constexpr std::size_t kMaxColumns = std::size_t(1) << 22;
// Atoms scattered into the row's float sums before they are folded into doubles.
constexpr std::size_t kFoldAtoms = 32;

void check_cutoff(const CutoffOptions& o) {
  if (!(o.radius > 0) || !std::isfinite(o.radius))
    throw Error("cutoff radius must be positive and finite, got " + std::to_string(o.radius));
  if (o.form == CutoffForm::switched && !(o.switch_start >= 0 && o.switch_start < o.radius))
    throw Error("switched cutoff: switch start " + std::to_string(o.switch_start) +
                " must lie in [0, " + std::to_string(o.radius) + ")");
}

// Squared distance from v to the interval [lo, hi].
double outside2(double v, double lo, double hi) {
  const double d = v < lo ? lo - v : (v > hi ? v - hi : 0.0);
  return d * d;
}

// The atoms that can reach the grid (within rc of its box), sorted into (y, z) columns: x in
// the row frame, y and z as given. The same for every slab of a grid, so a grid computed slab by
// slab sums in the same order as in one piece and gives the same floats.
struct Columns {
  std::vector<float> x, q;
  std::vector<double> y, z;
  std::vector<std::uint32_t> start; // column c holds atoms [start[c], start[c+1])
  double y0 = 0, z0 = 0, edge = 1;  // column (iy, iz) covers y0 + [iy, iy+1)·edge, same in z
  std::int64_t ny = 0, nz = 0;

  // Range of column indices along y (or z) that meet [v − r, v + r]; empty when lo > hi.
  std::array<std::int64_t, 2> span_y(double v, double r) const { return span(v, r, y0, ny); }
  std::array<std::int64_t, 2> span_z(double v, double r) const { return span(v, r, z0, nz); }
  std::array<std::int64_t, 2> span(double v, double r, double v0, std::int64_t n) const {
    const double lo = std::floor((v - r - v0) / edge), hi = std::floor((v + r - v0) / edge);
    return {std::int64_t(std::max(lo, 0.0)), std::int64_t(std::min(hi, double(n - 1)))};
  }
};

Columns make_columns(const AtomSet& atoms, const GridSpec& grid, double rc) {
  const auto far = grid.far_corner();
  std::vector<std::uint32_t> near;
  for (std::size_t a = 0; a < atoms.size(); ++a)
    if (outside2(atoms.x[a], grid.origin[0], far[0]) + outside2(atoms.y[a], grid.origin[1], far[1]) +
            outside2(atoms.z[a], grid.origin[2], far[2]) < rc * rc)
      near.push_back(std::uint32_t(a));

  Columns c;
  if (near.empty()) return c;
  double ymin = INFINITY, ymax = -INFINITY, zmin = INFINITY, zmax = -INFINITY;
  for (std::uint32_t a : near) {
    ymin = std::min<double>(ymin, atoms.y[a]);
    ymax = std::max<double>(ymax, atoms.y[a]);
    zmin = std::min<double>(zmin, atoms.z[a]);
    zmax = std::max<double>(zmax, atoms.z[a]);
  }
  c.y0 = ymin;
  c.z0 = zmin;
  c.edge = rc * kColumnEdgePerRadius;
  const auto count = [&](double extent) { return std::int64_t(extent / c.edge) + 1; };
  while (double(count(ymax - ymin)) * double(count(zmax - zmin)) > double(kMaxColumns))
    c.edge *= 2;
  c.ny = count(ymax - ymin);
  c.nz = count(zmax - zmin);

  std::vector<std::uint32_t> column(near.size());
  c.start.assign(std::size_t(c.ny * c.nz) + 1, 0);
  for (std::size_t n = 0; n < near.size(); ++n) {
    const std::uint32_t a = near[n];
    const std::int64_t iy = std::min(c.ny - 1, std::int64_t((atoms.y[a] - c.y0) / c.edge));
    const std::int64_t iz = std::min(c.nz - 1, std::int64_t((atoms.z[a] - c.z0) / c.edge));
    column[n] = std::uint32_t(iz * c.ny + iy);
    ++c.start[column[n] + 1];
  }
  for (std::size_t i = 1; i < c.start.size(); ++i) c.start[i] += c.start[i - 1];
  std::vector<std::uint32_t> fill(c.start.begin(), c.start.end() - 1);
  const double x0 = middle_x(grid);
  c.x.resize(near.size());
  c.y.resize(near.size());
  c.z.resize(near.size());
  c.q.resize(near.size());
  for (std::size_t n = 0; n < near.size(); ++n) {
    const std::uint32_t a = near[n], to = fill[column[n]]++;
    c.x[to] = float(double(atoms.x[a]) - x0);
    c.y[to] = atoms.y[a];
    c.z[to] = atoms.z[a];
    c.q[to] = atoms.q[a];
  }
  return c;
}

// A row's atoms within rc of its line: x, dy² + dz², charge, and the vectors [first, last] of
// the row that its chord overlaps.
struct RowAtoms {
  std::vector<float> x, dyz2, q;
  std::vector<std::int32_t> first, last;

  void clear() {
    x.clear();
    dyz2.clear();
    q.clear();
    first.clear();
    last.clear();
  }
};

// A row's sums: float per vector while atoms are scattered, double per point after each fold.
struct RowSums {
  std::vector<v8f> partial;
  std::vector<double> sum;
};

struct RowGeometry {
  const Columns& columns;
  double rc, hx;
  std::int64_t nx, middle;  // points per row, index of the row frame's origin
};

// Fills the row's atom list; false when no atom reaches the row at (y, z) = yz.
bool gather_row(const RowGeometry& g, std::array<double, 2> yz, RowAtoms& s) {
  const Columns& c = g.columns;
  const double rc2 = g.rc * g.rc;
  s.clear();
  const auto ys = c.span_y(yz[0], g.rc), zs = c.span_z(yz[1], g.rc);
  for (std::int64_t iz = zs[0]; iz <= zs[1]; ++iz) {
    const double dz2 = outside2(yz[1], c.z0 + iz * c.edge, c.z0 + (iz + 1) * c.edge);
    for (std::int64_t iy = ys[0]; iy <= ys[1]; ++iy) {
      if (dz2 + outside2(yz[0], c.y0 + iy * c.edge, c.y0 + (iy + 1) * c.edge) >= rc2) continue;
      const std::size_t column = std::size_t(iz * c.ny + iy);
      for (std::uint32_t a = c.start[column]; a < c.start[column + 1]; ++a) {
        const double dy = yz[0] - c.y[a], dz = yz[1] - c.z[a];
        const double dyz2 = dy * dy + dz * dz;
        if (dyz2 >= rc2) continue;
        // Points within rc along x; widened by a point each way, the mask r² < rc² is exact.
        const double chord = std::sqrt(rc2 - dyz2);
        const double i_lo = std::floor((c.x[a] - chord) / g.hx) + double(g.middle - 1);
        const double i_hi = std::ceil((c.x[a] + chord) / g.hx) + double(g.middle + 1);
        if (i_hi < 0 || i_lo > double(g.nx - 1)) continue;
        s.x.push_back(c.x[a]);
        s.dyz2.push_back(float(dyz2));
        s.q.push_back(c.q[a]);
        s.first.push_back(std::int32_t(std::max(0.0, i_lo)) / kLanes);
        s.last.push_back(std::int32_t(std::min(double(g.nx - 1), i_hi)) / kLanes);
      }
    }
  }
  return !s.x.empty();
}

// Adds the row's float sums over vectors [lo, hi] into its doubles and clears them.
void fold(RowSums& s, std::int32_t lo, std::int32_t hi) {
  for (std::int32_t v = lo; v <= hi; ++v) {
    add_to_double(&s.sum[std::size_t(v) * kLanes], s.partial[v]);
    s.partial[v] = v8f{};
  }
}

template <PairForm F, CutoffForm C>
void scatter_row(const RowAtoms& list, RowSums& s, const std::vector<v8f>& px,
                 const PairKernel& kernel, const CutoffParams& cut) {
  const v8f min_r2 = splat(kernel.min_r2), kappa = splat(kernel.kappa), rc2 = splat(cut.rc2);
  std::int32_t lo = INT32_MAX, hi = -1;  // vectors touched since the last fold
  for (std::size_t a = 0; a < list.x.size(); ++a) {
    const v8f ax = splat(list.x[a]), dyz2 = splat(list.dyz2[a]), q = splat(list.q[a]);
    for (std::int32_t v = list.first[a]; v <= list.last[a]; ++v) {
      const v8f dx = px[v] - ax;
      const v8f r2 = fma(dx, dx, dyz2);
      const v8f r2c = max(r2, min_r2);
      const v8f inv_r = rsqrt(r2c);
      const v8f term = pair_term<F>(r2c, inv_r, kappa) * cutoff_factor<C>(r2c, inv_r, cut);
      s.partial[v] = fma(q, select(r2 < rc2, term), s.partial[v]);
    }
    lo = std::min(lo, list.first[a]);
    hi = std::max(hi, list.last[a]);
    if ((a + 1) % kFoldAtoms == 0) {
      fold(s, lo, hi);
      lo = INT32_MAX;
      hi = -1;
    }
  }
  fold(s, lo, hi);
}

void cutoff_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel,
                const CutoffOptions& options, Slab slab, float* out, bool add, const char* who) {
  check_slab(grid, slab, who);
  check_cutoff(options);
  if (slab.planes() == 0) return;
  const std::int64_t ny = grid.ny(), nx = grid.nx();
  const auto row_out = [&](std::int64_t j, std::int64_t k) {
    return out + ((k - slab.z_begin) * ny + j) * nx;
  };
  const Columns columns = make_columns(atoms, grid, options.radius);
  const CutoffParams cut = make_cutoff_params(options);
  const RowGeometry geometry{columns, options.radius, grid.spacing[0], nx, middle_index(grid)};
  const std::vector<v8f> px = row_positions(grid);
  with_pair_form(kernel.form, [&](auto pair) {
    with_cutoff_form(options.form, [&](auto form) {
#pragma omp parallel
      {
        RowAtoms list;
        RowSums sums{std::vector<v8f>(px.size()), std::vector<double>(px.size() * kLanes)};
#pragma omp for collapse(2) schedule(dynamic, 4)
        for (std::int64_t k = slab.z_begin; k < slab.z_end; ++k)
          for (std::int64_t j = 0; j < ny; ++j) {
            float* row = row_out(j, k);
            if (!gather_row(geometry, row_yz(grid, j, k), list)) {
              if (!add) std::fill(row, row + nx, 0.0f);
              continue;
            }
            std::fill(sums.sum.begin(), sums.sum.end(), 0.0);
            scatter_row<decltype(pair)::value, decltype(form)::value>(list, sums, px, kernel, cut);
            finish_row(sums.sum, std::size_t(nx), kernel.scale_d, add, row);
          }
      }
    });
  });
}

}  // namespace

void cutoff_sum_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel,
                    const CutoffOptions& options, Slab slab, float* out) {
  cutoff_cpu(atoms, grid, kernel, options, slab, out, false, "cutoff_sum_cpu");
}

void cutoff_accumulate_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel,
                           const CutoffOptions& options, Slab slab, float* out) {
  cutoff_cpu(atoms, grid, kernel, options, slab, out, true, "cutoff_accumulate_cpu");
}

}  // namespace dcsgrid::engine
