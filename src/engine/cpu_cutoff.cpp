// The cutoff method on the CPU: for every grid point, the atoms within rc.
//
// Atoms are binned into columns along x: square cells in (y, z), unbounded in x, sorted by
// column (a counting sort), z major, so the columns of one z slice that a row can reach hold one
// contiguous run of atoms. For a row (fixed y, z) each z slice within rc contributes the run of
// columns that meets the row's disc of radius rc in that slice; the scan tests dy² + dz² < rc²
// for 8 atoms at a time and packs those that pass into the row's list.
//
// Column edge rc/4: the runs cover the disc of radius rc widened by up to a column edge, so most
// scanned atoms pass. Edges of rc/2, rc/4 and rc/8 timed within 10% of
// each other (2·10^4-atom water box, rc 6 and 12 Å, one thread): the scan is ~15% of the time
// and the per-slice overhead small, so the choice is not critical.
//
// Each atom in the list knows its chord: the points within rc of it are one run along x,
// |x − ax| < sqrt(rc² − dy² − dz²). It is scattered onto the 8-point vectors that run overlaps,
// a mask dropping the lanes beyond rc (about 80% of the lanes computed are within rc). The
// row's float sums are folded into doubles every kFoldAtoms = 32 atoms: 7% slower than every
// 256, and it brings the switched form on a 12000-atom water box from 9.9e-7 to 6.6e-7
// (relative L2 against float64).
//
// Threads take whole rows, so no two threads write one point, and the work follows the atoms:
// rows far from every atom cost a few column look-ups, which keeps the GPU engine's small,
// scattered overflow sets cheap.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cpu_frame.hpp"
#include "cpu_simd.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/cutoff_form.hpp"

namespace dcsgrid::engine {
namespace {

using namespace simd;

// Column edge as a fraction of rc (see above).
constexpr double kColumnEdgePerRadius = 0.25;
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
  if (o.form == CutoffForm::ewald_real && !(o.ewald_beta > 0 && std::isfinite(o.ewald_beta)))
    throw Error("ewald-real cutoff form: the Ewald coefficient must be positive and finite, got " +
                std::to_string(o.ewald_beta) + " Å⁻¹");
}

// Squared distance from v to the interval [lo, hi].
double outside2(double v, double lo, double hi) {
  const double d = v < lo ? lo - v : (v > hi ? v - hi : 0.0);
  return d * d;
}

// The atoms that can reach the grid (within rc of its box), sorted into (y, z) columns, with
// coordinates relative to the grid origin, split (cpu_frame.hpp). The same for every slab of a
// grid, so a grid computed slab by slab sums in the same order as in one piece and gives the
// same floats. Each array has kLanes entries of padding (charge 0, far away) so the scan can
// load whole vectors past the end of a run.
struct Columns {
  std::vector<float> x_hi, x_lo, y_hi, y_lo, z_hi, z_lo, q;
  std::vector<std::uint32_t> start;  // column c holds atoms [start[c], start[c+1])
  double y0 = 0, z0 = 0, edge = 1;   // column (iy, iz) covers y0 + [iy, iy+1)·edge, same in z
  std::int64_t ny = 0, nz = 0;       // relative to the grid origin

  // Column indices along y (or z) that meet [v − r, v + r], clipped; empty when lo > hi.
  std::array<std::int64_t, 2> span_y(double v, double r) const { return span(v, r, y0, ny); }
  std::array<std::int64_t, 2> span_z(double v, double r) const { return span(v, r, z0, nz); }
  std::array<std::int64_t, 2> span(double v, double r, double v0, std::int64_t n) const {
    const double lo = std::floor((v - r - v0) / edge), hi = std::floor((v + r - v0) / edge);
    return {std::int64_t(std::max(lo, 0.0)), std::int64_t(std::min(hi, double(n - 1)))};
  }
};

Columns make_columns(const AtomSet& atoms, const GridSpec& grid, double rc) {
  const Box box = grid.bounds();
  std::vector<std::uint32_t> near;
  for (std::size_t a = 0; a < atoms.size(); ++a)
    if (outside2(atoms.x[a], box.lo[0], box.hi[0]) + outside2(atoms.y[a], box.lo[1], box.hi[1]) +
            outside2(atoms.z[a], box.lo[2], box.hi[2]) < rc * rc)
      near.push_back(std::uint32_t(a));

  Columns c;
  double ymin = INFINITY, ymax = -INFINITY, zmin = INFINITY, zmax = -INFINITY;
  for (std::uint32_t a : near) {
    ymin = std::min(ymin, atoms.y[a] - grid.origin[1]);
    ymax = std::max(ymax, atoms.y[a] - grid.origin[1]);
    zmin = std::min(zmin, atoms.z[a] - grid.origin[2]);
    zmax = std::max(zmax, atoms.z[a] - grid.origin[2]);
  }
  if (!near.empty()) {
    c.y0 = ymin;
    c.z0 = zmin;
    c.edge = rc * kColumnEdgePerRadius;
    const auto count = [&](double extent) { return std::int64_t(extent / c.edge) + 1; };
    while (double(count(ymax - ymin)) * double(count(zmax - zmin)) > double(kMaxColumns))
      c.edge *= 2;
    c.ny = count(ymax - ymin);
    c.nz = count(zmax - zmin);
  }

  std::vector<std::uint32_t> column(near.size());
  c.start.assign(std::size_t(c.ny * c.nz) + 1, 0);
  for (std::size_t n = 0; n < near.size(); ++n) {
    const std::uint32_t a = near[n];
    const double y = atoms.y[a] - grid.origin[1], z = atoms.z[a] - grid.origin[2];
    const std::int64_t iy = std::min(c.ny - 1, std::int64_t((y - c.y0) / c.edge));
    const std::int64_t iz = std::min(c.nz - 1, std::int64_t((z - c.z0) / c.edge));
    column[n] = std::uint32_t(iz * c.ny + iy);
    ++c.start[column[n] + 1];
  }
  for (std::size_t i = 1; i < c.start.size(); ++i) c.start[i] += c.start[i - 1];
  std::vector<std::uint32_t> fill(c.start.begin(), c.start.end() - 1);
  const std::size_t padded = near.size() + kLanes;
  c.x_hi.assign(padded, 1e30f);
  c.x_lo.assign(padded, 0.0f);
  c.y_hi.assign(padded, 1e30f);
  c.y_lo.assign(padded, 0.0f);
  c.z_hi.assign(padded, 1e30f);
  c.z_lo.assign(padded, 0.0f);
  c.q.assign(padded, 0.0f);
  for (std::size_t n = 0; n < near.size(); ++n) {
    const std::uint32_t a = near[n], to = fill[column[n]]++;
    const Split x = split(atoms.x[a] - grid.origin[0]), y = split(atoms.y[a] - grid.origin[1]),
                z = split(atoms.z[a] - grid.origin[2]);
    c.x_hi[to] = x.hi;
    c.x_lo[to] = x.lo;
    c.y_hi[to] = y.hi;
    c.y_lo[to] = y.lo;
    c.z_hi[to] = z.hi;
    c.z_lo[to] = z.lo;
    c.q[to] = atoms.q[a];
  }
  return c;
}

// A row's atoms within rc of its line: the vectors [first, last] of the row that its chord
// overlaps, x relative to the first point of vector `first`, dy² + dz² and charge. Sized with
// kLanes slack for the packing stores.
struct RowAtoms {
  std::vector<float> x, dyz2, q;
  std::vector<std::int32_t> first, last;
  std::size_t size = 0;

  void reserve(std::size_t n) {
    if (x.size() >= n + kLanes) return;
    for (auto* v : {&x, &dyz2, &q}) v->resize(n + kLanes);
    for (auto* v : {&first, &last}) v->resize(n + kLanes);
  }
};

// A row's sums: float per vector while atoms are scattered, double per point after each fold.
struct RowSums {
  std::vector<v8f> partial;
  std::vector<double> sum;
};

struct RowGeometry {
  const Columns& columns;
  double rc;
  Split hx;           // point spacing along x
  std::int64_t nx;    // points per row
};

// The runs of atoms [begin, end) in the columns that a row at (y, z) (relative to the grid
// origin) can reach: one run per z slice.
template <typename Fn>
void for_each_run(const RowGeometry& g, double y, double z, Fn&& fn) {
  const Columns& c = g.columns;
  const double rc2 = g.rc * g.rc;
  const auto zs = c.span_z(z, g.rc);
  for (std::int64_t iz = zs[0]; iz <= zs[1]; ++iz) {
    const double dz2 = outside2(z, c.z0 + iz * c.edge, c.z0 + (iz + 1) * c.edge);
    if (dz2 >= rc2) continue;
    const auto ys = c.span_y(y, std::sqrt(rc2 - dz2));
    if (ys[0] > ys[1]) continue;
    fn(c.start[iz * c.ny + ys[0]], c.start[iz * c.ny + ys[1] + 1]);
  }
}

// Fills the list of row (j, k) from the columns, 8 atoms at a time; false when it is empty.
bool gather_row(const RowGeometry& g, std::int64_t j, std::int64_t k, const GridSpec& grid, RowAtoms& s) {
  const std::array<double, 2> yz_absolute = row_yz(grid, j, k);
  const Columns& c = g.columns;
  const double y = yz_absolute[0] - grid.origin[1], z = yz_absolute[1] - grid.origin[2];
  std::size_t candidates = 0;
  for_each_run(g, y, z, [&](std::uint32_t b, std::uint32_t e) { candidates += e - b; });
  s.size = 0;
  if (candidates == 0) return false;
  s.reserve(candidates);

  const Split ys = split(y), zs = split(z);
  const v8f y_hi = splat(ys.hi), y_lo = splat(ys.lo), z_hi = splat(zs.hi), z_lo = splat(zs.lo);
  const v8f rc2 = splat(float(g.rc * g.rc)), inv_hx = splat(float(1.0 / double(g.hx.hi)));
  const v8f hx_hi = splat(g.hx.hi), hx_lo = splat(g.hx.lo);
  // A skewed grid's row starts `shift` along x from the origin (the columns' x is relative to the
  // origin): it is taken off each atom's x exactly (Knuth's two-sum), so the differences below
  // stay as exact as on an orthogonal grid.
  const double shift = row_shift(grid, j, k);
  const Split shift_split = split(shift);
  const v8f shift_hi = splat(shift_split.hi), shift_lo = splat(shift_split.lo);
  const auto shifted = [&](v8f x_hi, v8f x_lo) -> std::array<v8f, 2> {
    if (shift == 0) return {x_hi, x_lo};
    const v8f sum = x_hi - shift_hi, back = sum - x_hi;
    const v8f error = (x_hi - (sum - back)) + (-shift_hi - back);
    return {sum, (error + x_lo) - shift_lo};
  };
  const v8f last_point = splat(float(g.nx - 1));
  // Float rounding moves x/hx by far less than 0.01 for any row under 10^5 points; the mask
  // r² < rc² then decides exactly.
  const v8f slack = splat(0.01f);
  for_each_run(g, y, z, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t a = begin; a < end; a += kLanes) {
      const v8f dy = (y_hi - load(&c.y_hi[a])) + (y_lo - load(&c.y_lo[a]));
      const v8f dz = (z_hi - load(&c.z_hi[a])) + (z_lo - load(&c.z_lo[a]));
      const v8f dyz2 = fma(dy, dy, dz * dz);
      const auto [x_hi, x_lo] = shifted(load(&c.x_hi[a]), load(&c.x_lo[a]));
      // The points within rc along x.
      const v8f chord = sqrt(max(rc2 - dyz2, v8f{}));
      const v8f first = ceil(fma(x_hi - chord, inv_hx, -slack));
      const v8f last = floor(fma(x_hi + chord, inv_hx, slack));
      const v8i in = (dyz2 < rc2) & (first <= last) & (last >= v8f{}) & (first <= last_point) &
                     (lane_index() < splat(float(end - a)));
      const unsigned mask = movemask(in);
      if (!mask) continue;
      const auto vector_of = [&](v8f point) {
        return __builtin_convertvector(max(v8f{}, point < last_point ? point : last_point), v8i) /
               kLanes;
      };
      const v8i first_vector = vector_of(first);
      // x relative to the first point of the first vector, f·hx with f = 8·first_vector: the
      // product split exactly into f·hx.hi (rounded) and its error, plus f·hx.lo.
      const v8f f = __builtin_convertvector(first_vector * kLanes, v8f);
      const v8f origin_hi = f * hx_hi;
      const v8f origin_err = fma(f, hx_hi, -origin_hi);
      const v8f x = (x_hi - origin_hi) + ((x_lo - origin_err) - f * hx_lo);
      compress_store(x, mask, &s.x[s.size]);
      compress_store(dyz2, mask, &s.dyz2[s.size]);
      compress_store(load(&c.q[a]), mask, &s.q[s.size]);
      compress_store(first_vector, mask, &s.first[s.size]);
      s.size += compress_store(vector_of(last), mask, &s.last[s.size]);
    }
  });
  return s.size > 0;
}

// Adds the row's float sums over vectors [lo, hi] into its doubles and clears them.
void fold(RowSums& s, std::int32_t lo, std::int32_t hi) {
  for (std::int32_t v = lo; v <= hi; ++v) {
    add_to_double(&s.sum[std::size_t(v) * kLanes], s.partial[v]);
    s.partial[v] = v8f{};
  }
}

template <PairForm F, CutoffForm C, int K>
void scatter_row(const RowAtoms& list, RowSums& s, const std::vector<v8f>& px,
                 const PairKernel& kernel, const CutoffParams& params) {
  const v8f min_r2 = splat(kernel.min_r2), exp2_kappa = splat(kernel.exp2_kappa);
  const CutoffCoefficients<float>& f = params.f;
  const CutoffCoefficients<v8f> cut{splat(f.rc2),  splat(f.inv_rc2),   splat(f.inv_rc),
                                    splat(f.rs),   splat(f.inv_width), splat(f.beta)};
  std::int32_t lo = INT32_MAX, hi = -1;  // vectors touched since the last fold
  for (std::size_t a = 0; a < list.size; ++a) {
    const v8f ax = splat(list.x[a]), dyz2 = splat(list.dyz2[a]), q = splat(list.q[a]);
    const v8f* offset = px.data() - list.first[a];  // px relative to vector `first`
    for (std::int32_t v = list.first[a]; v <= list.last[a]; ++v) {
      const v8f dx = offset[v] - ax;
      const v8f r2 = fma(dx, dx, dyz2);
      const v8f r2c = max(r2, min_r2);
      const v8f term = cutoff_pair_term<F, C, K>(r2, r2c, rsqrt(r2c), exp2_kappa, cut);
      s.partial[v] = fma(q, select(r2 < cut.rc2, term), s.partial[v]);
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

// threads: the OpenMP team for the rows (0: all).
void cutoff_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel,
                const CutoffOptions& options, Slab slab, float* out, bool add, const char* who,
                int threads = 0) {
  check_slab(grid, slab, who);
  check_cutoff(options);
  if (slab.planes() == 0) return;
  const std::int64_t ny = grid.ny(), nx = grid.nx();
  const auto row_out = [&](std::int64_t j, std::int64_t k) {
    return out + ((k - slab.z_begin) * ny + j) * nx;
  };
  const Columns columns = make_columns(atoms, grid, options.radius);
  const CutoffParams cut = make_cutoff_params(options);
  const RowGeometry geometry{columns, options.radius, split(grid.spacing[0]), nx};
  const std::vector<v8f> px = lane_offsets(grid);
  with_cutoff_term(kernel.form, options.form, options.softening_order,
                   [&](auto pair, auto form, auto order) {
#pragma omp parallel num_threads(threads > 0 ? threads : team_size())
      {
        RowAtoms list;
        RowSums sums{std::vector<v8f>(px.size()), std::vector<double>(px.size() * kLanes)};
#pragma omp for collapse(2) schedule(dynamic, 4)
        for (std::int64_t k = slab.z_begin; k < slab.z_end; ++k)
          for (std::int64_t j = 0; j < ny; ++j) {
            float* row = row_out(j, k);
            if (!gather_row(geometry, j, k, grid, list)) {
              if (!add) std::fill(row, row + nx, 0.0f);
              continue;
            }
            std::fill(sums.sum.begin(), sums.sum.end(), 0.0);
            scatter_row<decltype(pair)::value, decltype(form)::value, decltype(order)::value>(
                list, sums, px, kernel, cut);
            finish_row(sums.sum, std::size_t(nx), kernel.scale_d, add, row);
          }
      }
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

void cutoff_accumulate_parts_cpu(const std::vector<CutoffPart>& parts, const PairKernel& kernel,
                                 const CutoffOptions& options) {
  const char* who = "cutoff_accumulate_parts_cpu";
  if (parts.size() < std::size_t(team_size())) {
    for (const CutoffPart& p : parts)
      cutoff_cpu(*p.atoms, p.grid, kernel, options, Slab{0, p.grid.nz()}, p.out, true, who);
    return;
  }
  check_cutoff(options);  // before the threads: an exception must not leave a parallel region
  for (const CutoffPart& p : parts) validate(p.grid);
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const CutoffPart& p = parts[i];
    cutoff_cpu(*p.atoms, p.grid, kernel, options, Slab{0, p.grid.nz()}, p.out, true, who, 1);
  }
}

}  // namespace dcsgrid::engine
