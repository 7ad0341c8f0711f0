// The distance shell of every grid point (compare.hpp, atom_shells): a cell list gives each block
// of 16³ points the atoms that can be nearest to any of its points; the block is halved down to
// single points, and a part is settled whole, without touching its points, as soon as its
// centre's nearest-atom distance ± its radius lies inside one shell (the distance to the nearest
// atom moves no faster than the point). Only points within a part's radius of a shell edge get
// their own exact nearest-atom search, over a handful of candidates.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>

#include <fmt/format.h>
#include <immintrin.h>

#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::analysis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kUnreached = std::numeric_limits<int>::max();
constexpr std::int64_t kBlockPoints = 16;  // the first parts, per axis

// Squared distance between p and an atom, float64, in one fixed order of operations (explicit
// FMAs, so no compiler contracts it differently in the tests' brute force).
double distance2(const std::array<double, 3>& p, double x, double y, double z) {
  const double dx = p[0] - x, dy = p[1] - y, dz = p[2] - z;
  return std::fma(dz, dz, std::fma(dy, dy, dx * dx));
}

// Atom positions, float64, side by side; the first `size` are in use. Callers reserve room first,
// so appending never reallocates.
struct Candidates {
  std::vector<double> x, y, z;
  std::size_t size = 0;
  void reserve(std::size_t n) {
    if (x.size() >= n) return;
    x.resize(n);
    y.resize(n);
    z.resize(n);
  }
  void append(const Candidates& from, std::size_t k) {
    x[size] = from.x[k];
    y[size] = from.y[k];
    z[size++] = from.z[k];
  }
};

using Point = std::array<double, 3>;

// Appends the atoms [begin, end) of `from` that lie within √r2 of c (distance2 ≤ r2), four at a
// time.
void append_within(const Candidates& from, std::size_t begin, std::size_t end, const Point& c, double r2,
                   Candidates& out) {
  const __m256d cx = _mm256_set1_pd(c[0]), cy = _mm256_set1_pd(c[1]), cz = _mm256_set1_pd(c[2]);
  const __m256d limit = _mm256_set1_pd(r2);
  std::size_t a = begin;
  for (; a + 4 <= end; a += 4) {
    const __m256d ax = _mm256_loadu_pd(&from.x[a]), ay = _mm256_loadu_pd(&from.y[a]), az = _mm256_loadu_pd(&from.z[a]);
    const __m256d dx = _mm256_sub_pd(cx, ax), dy = _mm256_sub_pd(cy, ay), dz = _mm256_sub_pd(cz, az);
    const __m256d d2 = _mm256_fmadd_pd(dz, dz, _mm256_fmadd_pd(dy, dy, _mm256_mul_pd(dx, dx)));
    for (int bits = _mm256_movemask_pd(_mm256_cmp_pd(d2, limit, _CMP_LE_OQ)); bits; bits &= bits - 1)
      out.append(from, a + std::size_t(std::countr_zero(unsigned(bits))));
  }
  for (; a < end; ++a)
    if (distance2(c, from.x[a], from.y[a], from.z[a]) <= r2) out.append(from, a);
}

// Atoms sorted into cubic cells covering the grid's box grown by the search distance (atoms
// farther out cannot be the nearest within it and are left out).
struct CellList {
  double edge = 3.0;  // Å
  std::array<double, 3> lo{};
  std::array<int, 3> dims{};
  std::vector<std::uint32_t> start;  // cells + 1
  Candidates atoms;  // by cell
  std::vector<int> ring;  // per cell: Chebyshev distance (in cells) to the nearest occupied cell

  std::size_t cell(int i, int j, int k) const { return (std::size_t(k) * dims[1] + j) * dims[0] + i; }
  int coord(double x, int axis) const {
    return int(std::clamp(std::floor((x - lo[axis]) / edge), 0.0, double(dims[axis] - 1)));  // clamped before the cast
  }
  bool inside(int x, int y, int z) const {
    return x >= 0 && y >= 0 && z >= 0 && x < dims[0] && y < dims[1] && z < dims[2];
  }
};

// Multi-source breadth-first search over the 26 neighbours: each cell's ring distance.
void fill_rings(CellList& c) {
  const std::size_t cells = c.start.size() - 1;
  c.ring.assign(cells, kUnreached);
  std::deque<std::size_t> queue;
  for (std::size_t k = 0; k < cells; ++k)
    if (c.start[k + 1] > c.start[k]) {
      c.ring[k] = 0;
      queue.push_back(k);
    }
  while (!queue.empty()) {
    const std::size_t k = queue.front();
    queue.pop_front();
    const int i = int(k % c.dims[0]), j = int(k / c.dims[0] % c.dims[1]),
              l = int(k / (std::size_t(c.dims[0]) * c.dims[1]));
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (!c.inside(i + dx, j + dy, l + dz)) continue;
          const std::size_t n = c.cell(i + dx, j + dy, l + dz);
          if (c.ring[n] != kUnreached) continue;
          c.ring[n] = c.ring[k] + 1;
          queue.push_back(n);
        }
  }
}

CellList make_cells(const AtomSet& atoms, const GridSpec& grid, double reach, double edge) {
  CellList c;
  c.edge = edge;
  const Box box = grid.bounds();
  std::array<double, 3> hi{};
  for (int a = 0; a < 3; ++a) {
    c.lo[a] = box.lo[a] - reach;
    hi[a] = box.hi[a] + reach;
    c.dims[a] = std::max(1, int(std::ceil((hi[a] - c.lo[a]) / edge)));
  }
  const std::size_t cells = std::size_t(c.dims[0]) * c.dims[1] * c.dims[2];
  std::vector<std::size_t> cell_of(atoms.size(), cells);
  std::vector<std::uint32_t> count(cells + 1, 0);
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const double p[3] = {atoms.x[i], atoms.y[i], atoms.z[i]};
    bool inside = true;
    for (int a = 0; a < 3; ++a) inside = inside && p[a] >= c.lo[a] && p[a] <= hi[a];
    if (!inside) continue;  // NaN coordinates too
    cell_of[i] = c.cell(c.coord(p[0], 0), c.coord(p[1], 1), c.coord(p[2], 2));
    ++count[cell_of[i]];
  }
  c.start.assign(cells + 1, 0);
  for (std::size_t k = 0; k < cells; ++k) c.start[k + 1] = c.start[k] + count[k];
  c.atoms.reserve(c.start[cells]);
  c.atoms.size = c.start[cells];
  std::vector<std::uint32_t> next(c.start.begin(), c.start.end() - 1);
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    if (cell_of[i] == cells) continue;
    const std::uint32_t k = next[cell_of[i]]++;
    c.atoms.x[k] = atoms.x[i];
    c.atoms.y[k] = atoms.y[i];
    c.atoms.z[k] = atoms.z[i];
  }
  fill_rings(c);
  return c;
}

// Squared distance from p to the nearest atom within reach, or reach² when none is closer.
double nearest_squared(const CellList& c, const std::array<double, 3>& p, double reach) {
  const int ci = c.coord(p[0], 0), cj = c.coord(p[1], 1), ck = c.coord(p[2], 2);
  const int first_ring = c.ring[c.cell(ci, cj, ck)];
  double best = reach * reach;
  if (first_ring == kUnreached) return best;
  const auto scan = [&](int x, int y, int z) {
    if (!c.inside(x, y, z)) return;
    const std::size_t k = c.cell(x, y, z);
    for (std::uint32_t a = c.start[k]; a < c.start[k + 1]; ++a)
      best = std::min(best, distance2(p, c.atoms.x[a], c.atoms.y[a], c.atoms.z[a]));
  };
  // A cell r rings away is at least (r − 1) cells' edges from p.
  for (int r = first_ring; r == 0 || (r - 1) * c.edge * ((r - 1) * c.edge) < best; ++r) {
    for (int dz = -r; dz <= r; ++dz)
      for (int dy = -r; dy <= r; ++dy) {
        if (std::abs(dz) == r || std::abs(dy) == r) {
          for (int dx = -r; dx <= r; ++dx) scan(ci + dx, cj + dy, ck + dz);
        } else {
          scan(ci - r, cj + dy, ck + dz);
          if (r > 0) scan(ci + r, cj + dy, ck + dz);
        }
      }
    if (r > std::max({c.dims[0], c.dims[1], c.dims[2]})) break;
  }
  return best;
}

constexpr int kLanes = 8;  // points measured at once: two AVX vectors of four

// Up to kLanes points in the lanes of two vectors per axis (spare lanes repeat the last point),
// measured against one atom at a time.
struct PointLanes {
  __m256d x[2], y[2], z[2];
  PointLanes(const Point* points, int count) {
    alignas(32) double c[3][kLanes];
    for (int l = 0; l < kLanes; ++l)
      for (int a = 0; a < 3; ++a) c[a][l] = points[std::min(l, count - 1)][a];
    for (int h = 0; h < 2; ++h) {
      x[h] = _mm256_load_pd(c[0] + 4 * h);
      y[h] = _mm256_load_pd(c[1] + 4 * h);
      z[h] = _mm256_load_pd(c[2] + 4 * h);
    }
  }
  // distance2's operations, lane by lane, to atom k of the list.
  void distance2_to(const Candidates& atoms, std::size_t k, __m256d* d2) const {
    const __m256d ax = _mm256_set1_pd(atoms.x[k]), ay = _mm256_set1_pd(atoms.y[k]), az = _mm256_set1_pd(atoms.z[k]);
    for (int h = 0; h < 2; ++h) {
      const __m256d dx = _mm256_sub_pd(x[h], ax), dy = _mm256_sub_pd(y[h], ay), dz = _mm256_sub_pd(z[h], az);
      d2[h] = _mm256_fmadd_pd(dz, dz, _mm256_fmadd_pd(dy, dy, _mm256_mul_pd(dx, dx)));
    }
  }
};

// For each of `count` (≤ kLanes) points, the squared distance of the nearest candidate (+inf
// when there is none).
void nearest_d2(const Candidates& atoms, const Point* points, int count, double* d2) {
  const PointLanes lanes(points, count);
  __m256d best[2] = {_mm256_set1_pd(kInf), _mm256_set1_pd(kInf)};
  for (std::size_t a = 0; a < atoms.size; ++a) {
    __m256d e[2];
    lanes.distance2_to(atoms, a, e);
    best[0] = _mm256_min_pd(best[0], e[0]);
    best[1] = _mm256_min_pd(best[1], e[1]);
  }
  alignas(32) double out[kLanes];
  _mm256_store_pd(out, best[0]);
  _mm256_store_pd(out + 4, best[1]);
  std::copy_n(out, count, d2);
}

// Appends each atom to the list of every point (≤ kLanes) it lies within √limit2 of, in one pass.
void split_within(const Candidates& atoms, const Point* points, const double* limit2, int count,
                  Candidates* lists) {
  alignas(32) double lim[kLanes];
  for (int l = 0; l < kLanes; ++l) lim[l] = l < count ? limit2[l] : -1.0;  // spare lanes keep nothing
  const PointLanes lanes(points, count);
  const __m256d limit[2] = {_mm256_load_pd(lim), _mm256_load_pd(lim + 4)};
  for (std::size_t a = 0; a < atoms.size; ++a) {
    __m256d e[2];
    lanes.distance2_to(atoms, a, e);
    const int bits = _mm256_movemask_pd(_mm256_cmp_pd(e[0], limit[0], _CMP_LE_OQ)) |
                     _mm256_movemask_pd(_mm256_cmp_pd(e[1], limit[1], _CMP_LE_OQ)) << 4;
    for (int b = bits; b; b &= b - 1) lists[std::countr_zero(unsigned(b))].append(atoms, a);
  }
}

// A box of grid points, [lo, hi) along each axis.
struct PointBox {
  std::array<std::int64_t, 3> lo{}, hi{};
  std::size_t points() const { return std::size_t(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
};

// The grid, the shells' thresholds and the output, shared by every part.
struct ShellSearch {
  GridSpec grid;
  std::vector<double> d2_threshold;  // shell s: squared distances in [d2_threshold[s], d2_threshold[s+1])
  std::vector<double> r_threshold;   // their square roots, for the parts' distance bounds
  double margin = 0;                 // Å, far above every rounding in a part's bounds
  std::uint8_t* shell = nullptr;     // per point, x fastest

  // A few edges: counted in a row, cheaper than a binary search.
  std::uint8_t shell_of_d2(double d2) const {
    std::size_t s = 0;
    while (s + 1 < d2_threshold.size() && d2 >= d2_threshold[s + 1]) ++s;
    return std::uint8_t(s);
  }
  std::size_t shell_of_distance(double r) const {
    std::size_t s = 0;
    while (s + 1 < r_threshold.size() && r >= r_threshold[s + 1]) ++s;
    return s;
  }
  // The box's centre and radius (the farthest of its points from the centre; on a skewed grid the
  // box of points is a parallelepiped).
  std::array<double, 3> centre(const PointBox& b) const {
    const Mat3 steps = grid.steps();
    std::array<double, 3> c = grid.origin;
    for (int a = 0; a < 3; ++a)
      for (int d = 0; d < 3; ++d) c[d] += 0.5 * double(b.lo[a] + b.hi[a] - 1) * steps[a][d];
    return c;
  }
  // Parts are at most kBlockPoints along each axis: their radii by shape, looked up.
  std::vector<double> radii;  // [(nz·(B+1) + ny)·(B+1) + nx]
  double radius(const PointBox& b) const {
    const std::int64_t side = kBlockPoints + 1;
    return radii[std::size_t(((b.hi[2] - b.lo[2]) * side + b.hi[1] - b.lo[1]) * side + b.hi[0] - b.lo[0])];
  }
  // Fills b with its shell when its centre's nearest-atom distance d ± its radius lies in one.
  bool settle_whole(const PointBox& b, double d) const {
    const double rho = radius(b);
    const std::size_t lowest = shell_of_distance(d - rho - margin);
    if (lowest != shell_of_distance(d + rho + margin)) return false;
    fill(b, std::uint8_t(lowest));
    return true;
  }
  void fill(const PointBox& b, std::uint8_t s) const {
    for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
      for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
        std::fill_n(shell + grid.index(b.lo[0], j, k), b.hi[0] - b.lo[0], s);
  }
};

// The smallest squared distance d2 with double(float(√d2)) ≥ edge: the float rounding of the
// distance, compared with the edge, is monotone in d2, so bisect over the bit patterns of the
// non-negative doubles (ordered as integers).
double first_d2_at_or_beyond(double edge) {
  std::uint64_t lo = 0, hi = std::bit_cast<std::uint64_t>(kInf);  // false at lo (edge > 0), true at hi
  const auto reaches = [edge](std::uint64_t bits) {
    return double(float(std::sqrt(std::bit_cast<double>(bits)))) >= edge;
  };
  if (reaches(lo)) return 0.0;
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (reaches(mid) ? hi : lo) = mid;
  }
  return std::bit_cast<double>(hi);
}

ShellSearch make_search(const GridSpec& grid, const std::vector<double>& edges, std::uint8_t* out) {
  ShellSearch s;
  s.grid = grid;
  s.shell = out;
  // The last shell also holds every point with d2 ≥ the last edge squared (the nearest-atom
  // distance counted as beyond reach).
  const double reach2 = edges.back() * edges.back();
  for (const double e : edges) {
    s.d2_threshold.push_back(std::min(first_d2_at_or_beyond(e), reach2));
    s.r_threshold.push_back(std::sqrt(s.d2_threshold.back()));
  }
  double extent = edges.back();
  const Box box = grid.bounds();
  for (int a = 0; a < 3; ++a) extent = std::max({extent, std::abs(box.lo[a]), std::abs(box.hi[a])});
  s.margin = 1e-6 * (1 + extent);
  const std::int64_t side = kBlockPoints + 1;
  s.radii.resize(std::size_t(side * side * side));
  // A part of n points along each axis: its corners lie at ±h_i along each step from the centre,
  // h_i = (n_i − 1)/2; the farthest is the longest of the four diagonals ±h_x a ± h_y b + h_z c
  // (one diagonal on an orthogonal grid).
  const Mat3 steps = grid.steps();
  const auto half = [](std::int64_t n) { return 0.5 * double(std::max<std::int64_t>(n - 1, 0)); };
  for (std::int64_t nz = 0; nz < side; ++nz)
    for (std::int64_t ny = 0; ny < side; ++ny)
      for (std::int64_t nx = 0; nx < side; ++nx) {
        double farthest = 0;
        for (const double sx : {-1.0, 1.0})
          for (const double sy : {-1.0, 1.0}) {
            double v[3];
            for (int d = 0; d < 3; ++d)
              v[d] = sx * half(nx) * steps[0][d] + sy * half(ny) * steps[1][d] + half(nz) * steps[2][d];
            farthest = std::max(farthest, std::hypot(v[0], v[1], v[2]));
          }
        s.radii[std::size_t((nz * side + ny) * side + nx)] = farthest;
      }
  return s;
}

// The point-by-point search of a part of at most kLanes points.
void settle_points(const ShellSearch& s, const PointBox& b, const Candidates& atoms) {
  std::array<Point, kLanes> points{};
  std::array<double, kLanes> d2{};
  int n = 0;
  for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) points[n++] = s.grid.position(i, j, k);
  nearest_d2(atoms, points.data(), n, d2.data());
  n = 0;
  for (std::int64_t k = b.lo[2]; k < b.hi[2]; ++k)
    for (std::int64_t j = b.lo[1]; j < b.hi[1]; ++j)
      for (std::int64_t i = b.lo[0]; i < b.hi[0]; ++i) s.shell[s.grid.index(i, j, k)] = s.shell_of_d2(d2[n++]);
}

// The part b, d its centre's nearest-atom distance, `atoms` every atom that can be nearest to one
// of its points: settled whole when its bounds lie in one shell, point by point when small, else
// halved along each axis, each half that is neither given only the atoms that can still be
// nearest to its points (within d + 2ρ of its centre).
void settle(const ShellSearch& s, const PointBox& b, double d, const Candidates& atoms,
            std::deque<std::array<Candidates, kLanes>>& scratch, std::size_t depth) {
  if (s.settle_whole(b, d)) return;
  if (b.points() <= kLanes) return settle_points(s, b, atoms);
  std::array<std::int64_t, 3> mid{};
  for (int a = 0; a < 3; ++a) mid[a] = b.hi[a] - b.lo[a] > 1 ? (b.lo[a] + b.hi[a] + 1) / 2 : b.hi[a];
  std::array<PointBox, 8> children;
  std::array<Point, kLanes> centres{};
  int n = 0;
  for (int part = 0; part < 8; ++part) {
    PointBox& child = children[n];
    bool empty = false;
    for (int a = 0; a < 3; ++a) {
      const bool upper = (part >> a) & 1;
      child.lo[a] = upper ? mid[a] : b.lo[a];
      child.hi[a] = upper ? b.hi[a] : mid[a];
      empty = empty || child.lo[a] >= child.hi[a];
    }
    if (!empty) centres[n++] = s.centre(child);
  }
  std::array<double, kLanes> d2{};
  nearest_d2(atoms, centres.data(), n, d2.data());
  // The halves neither settled whole nor small get their own candidates, split off in one pass.
  std::array<int, kLanes> open{};
  std::array<Point, kLanes> open_centres{};
  std::array<double, kLanes> keep2{};
  int opened = 0;
  for (int k = 0; k < n; ++k) {
    const double dk = std::sqrt(d2[k]);
    if (s.settle_whole(children[k], dk)) continue;
    if (children[k].points() <= kLanes) {
      settle_points(s, children[k], atoms);
      continue;
    }
    const double keep = dk + 2 * s.radius(children[k]) + s.margin;
    open[opened] = k;
    open_centres[opened] = centres[k];
    keep2[opened++] = keep * keep;
  }
  if (opened == 0) return;
  if (scratch.size() <= depth) scratch.resize(depth + 1);
  std::array<Candidates, kLanes>& lists = scratch[depth];
  for (int k = 0; k < opened; ++k) {
    lists[k].reserve(atoms.size);
    lists[k].size = 0;
  }
  split_within(atoms, open_centres.data(), keep2.data(), opened, lists.data());
  for (int k = 0; k < opened; ++k)
    settle(s, children[open[k]], std::sqrt(d2[open[k]]), lists[k], scratch, depth + 1);
}

// The atoms within r of p: the rows of cells that a cube around p crosses (out grown to hold them
// all), then the sphere.
void gather(const CellList& cells, const Point& p, double r, Candidates& out) {
  std::array<int, 3> lo{}, hi{};
  for (int a = 0; a < 3; ++a) {
    lo[a] = cells.coord(p[a] - r, a);
    hi[a] = cells.coord(p[a] + r, a);
  }
  // Cells along x hold one run of atoms: [row_begin, row_end) of the row at (y, z).
  const auto row_begin = [&](int y, int z) { return std::size_t(cells.start[cells.cell(lo[0], y, z)]); };
  const auto row_end = [&](int y, int z) { return std::size_t(cells.start[cells.cell(hi[0], y, z) + 1]); };
  std::size_t most = 0;
  for (int z = lo[2]; z <= hi[2]; ++z)
    for (int y = lo[1]; y <= hi[1]; ++y) most += row_end(y, z) - row_begin(y, z);
  out.reserve(most);
  out.size = 0;
  for (int z = lo[2]; z <= hi[2]; ++z)
    for (int y = lo[1]; y <= hi[1]; ++y) append_within(cells.atoms, row_begin(y, z), row_end(y, z), p, r * r, out);
}

}  // namespace

void validate_shell_edges(const std::vector<double>& e) {
  if (e.empty() || e.front() != 0 || !std::is_sorted(e.begin(), e.end()) ||
      std::adjacent_find(e.begin(), e.end()) != e.end() || !std::isfinite(e.back()))
    throw Error("compare: shell edges must rise strictly from 0, in Å (for example 0,2,4,8,12,20)");
  if (e.size() > kMaxShells)
    throw Error(fmt::format("compare: at most {} shell edges, got {}", kMaxShells, e.size()));
}

AtomShells atom_shells(const AtomSet& atoms, const GridSpec& grid, const std::vector<double>& edges) {
  validate(grid);
  validate_shell_edges(edges);
  AtomShells result{grid, edges, std::vector<std::uint8_t>(grid.point_count())};
  const ShellSearch search = make_search(grid, edges, result.shell.data());
  const double cell_edge = std::max({3.0, 8 * grid.spacing[0], 8 * grid.spacing[1], 8 * grid.spacing[2]});
  const CellList cells = make_cells(atoms, grid, edges.back(), cell_edge);
  std::array<std::int64_t, 3> blocks{};
  for (int a = 0; a < 3; ++a) blocks[a] = (grid.dims[a] + kBlockPoints - 1) / kBlockPoints;
  const std::int64_t block_count = blocks[0] * blocks[1] * blocks[2];
  const std::uint8_t last = std::uint8_t(edges.size() - 1);
#pragma omp parallel num_threads(team_size())
  {
    Candidates near;
    std::deque<std::array<Candidates, kLanes>> scratch;  // lists a depth; growing keeps the others in place
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t n = 0; n < block_count; ++n) {
      const std::array<std::int64_t, 3> at{n % blocks[0], n / blocks[0] % blocks[1], n / (blocks[0] * blocks[1])};
      PointBox b;
      for (int a = 0; a < 3; ++a) {
        b.lo[a] = at[a] * kBlockPoints;
        b.hi[a] = std::min(b.lo[a] + kBlockPoints, grid.dims[a]);
      }
      const std::array<double, 3> c = search.centre(b);
      const double rho = search.radius(b);
      // No atom within the last edge of any point: the block is beyond every edge.
      const double reach = edges.back() + rho + search.margin;
      const double d2 = nearest_squared(cells, c, reach);
      if (d2 >= reach * reach) {
        search.fill(b, last);
        continue;
      }
      gather(cells, c, std::sqrt(d2) + 2 * rho + search.margin, near);
      settle(search, b, std::sqrt(d2), near, scratch, 0);
    }
  }
  return result;
}

}  // namespace dcsgrid::analysis
