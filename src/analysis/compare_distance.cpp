// Distance from grid points to the nearest atom (compare.hpp): a cell list searched ring by ring.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>

#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::analysis {
namespace {

constexpr double kCellEdge = 3.0;  // Å
constexpr int kUnreached = std::numeric_limits<int>::max();

// Atoms sorted into cubic cells covering the grid's box grown by the search distance (atoms
// farther out cannot be the nearest within it and are left out).
struct CellList {
  std::array<double, 3> lo{};
  std::array<int, 3> dims{};
  std::vector<std::uint32_t> start;  // cells + 1
  std::vector<std::array<double, 3>> atoms;  // by cell
  std::vector<int> ring;  // per cell: Chebyshev distance (in cells) to the nearest occupied cell

  std::size_t cell(int i, int j, int k) const { return (std::size_t(k) * dims[1] + j) * dims[0] + i; }
  int coord(double x, int axis) const {
    return std::clamp(int(std::floor((x - lo[axis]) / kCellEdge)), 0, dims[axis] - 1);
  }
};

CellList make_cells(const AtomSet& atoms, const GridSpec& grid, double reach) {
  CellList c;
  const auto far = grid.far_corner();
  std::array<double, 3> hi{};
  for (int a = 0; a < 3; ++a) {
    c.lo[a] = std::min(grid.origin[a], far[a]) - reach;
    hi[a] = std::max(grid.origin[a], far[a]) + reach;
    c.dims[a] = std::max(1, int(std::ceil((hi[a] - c.lo[a]) / kCellEdge)));
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
  c.atoms.resize(c.start[cells]);
  std::vector<std::uint32_t> next(c.start.begin(), c.start.end() - 1);
  for (std::size_t i = 0; i < atoms.size(); ++i)
    if (cell_of[i] < cells) c.atoms[next[cell_of[i]]++] = {atoms.x[i], atoms.y[i], atoms.z[i]};

  // Multi-source breadth-first search over the 26 neighbours: the Chebyshev ring distance.
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
          const int x = i + dx, y = j + dy, z = l + dz;
          if (x < 0 || y < 0 || z < 0 || x >= c.dims[0] || y >= c.dims[1] || z >= c.dims[2]) continue;
          const std::size_t n = c.cell(x, y, z);
          if (c.ring[n] != kUnreached) continue;
          c.ring[n] = c.ring[k] + 1;
          queue.push_back(n);
        }
  }
  return c;
}

// Squared distance from p to the nearest atom within reach, or reach² when none is closer.
double nearest_squared(const CellList& c, const std::array<double, 3>& p, double reach) {
  const int ci = c.coord(p[0], 0), cj = c.coord(p[1], 1), ck = c.coord(p[2], 2);
  const int first_ring = c.ring[c.cell(ci, cj, ck)];
  double best = reach * reach;
  if (first_ring == kUnreached) return best;
  const auto scan = [&](int x, int y, int z) {
    if (x < 0 || y < 0 || z < 0 || x >= c.dims[0] || y >= c.dims[1] || z >= c.dims[2]) return;
    const std::size_t k = c.cell(x, y, z);
    for (std::uint32_t a = c.start[k]; a < c.start[k + 1]; ++a) {
      const double dx = p[0] - c.atoms[a][0], dy = p[1] - c.atoms[a][1], dz = p[2] - c.atoms[a][2];
      best = std::min(best, dx * dx + dy * dy + dz * dz);
    }
  };
  // A cell r rings away is at least (r − 1) cells' edges from p.
  for (int r = first_ring; r == 0 || (r - 1) * kCellEdge * ((r - 1) * kCellEdge) < best; ++r) {
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

}  // namespace

std::vector<float> nearest_atom_distance(const AtomSet& atoms, const GridSpec& grid,
                                         double max_distance) {
  validate(grid);
  if (!(max_distance > 0) || !std::isfinite(max_distance))
    throw Error("nearest-atom distance: the search distance must be a positive number of Å");
  const CellList cells = make_cells(atoms, grid, max_distance);
  std::vector<float> out(grid.point_count());
  const double reach2 = max_distance * max_distance;
#pragma omp parallel for num_threads(team_size()) collapse(2) schedule(dynamic, 4)
  for (std::int64_t k = 0; k < grid.nz(); ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i) {
        const double d2 = nearest_squared(cells, grid.position(i, j, k), max_distance);
        out[grid.index(i, j, k)] =
            d2 < reach2 ? float(std::sqrt(d2)) : std::numeric_limits<float>::infinity();
      }
  return out;
}

}  // namespace dcsgrid::analysis
