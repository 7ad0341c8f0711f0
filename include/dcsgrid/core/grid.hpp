// GridSpec: a regular 3D grid, x fastest. Point (i,j,k) lies at origin + i·a + j·b + k·c with the
// steps a = (sx, 0, 0), b = (bx, sy, 0), c = (cx, cy, sz): spacing holds sx, sy, sz and skew bx, cx,
// cy. Most grids are orthogonal (skew zero); a skewed grid is a unit cell's own lattice (--grid
// cell), lower triangular like UnitCell::vectors, so its rows still run along x and its planes lie
// at constant z.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/cell.hpp"

namespace dcsgrid {

struct GridSpec {
  std::array<double, 3> origin{};          // Å, position of point (0,0,0)
  std::array<double, 3> spacing{1, 1, 1};  // Å
  std::array<std::int64_t, 3> dims{};      // nx, ny, nz
  std::array<double, 3> skew{};            // Å: bx, cx, cy (the steps' parts off the diagonal)

  std::int64_t nx() const { return dims[0]; }
  std::int64_t ny() const { return dims[1]; }
  std::int64_t nz() const { return dims[2]; }
  std::size_t point_count() const { return std::size_t(dims[0]) * dims[1] * dims[2]; }
  std::size_t plane_size() const { return std::size_t(dims[0]) * dims[1]; }
  std::size_t index(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return (std::size_t(k) * dims[1] + j) * dims[0] + i;
  }
  std::array<std::int64_t, 3> ijk(std::size_t index) const;
  std::array<double, 3> position(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return {origin[0] + i * spacing[0] + j * skew[0] + k * skew[1],
            origin[1] + j * spacing[1] + k * skew[2], origin[2] + k * spacing[2]};
  }
  bool orthogonal() const { return skew[0] == 0 && skew[1] == 0 && skew[2] == 0; }
  // Rows: the steps a, b, c between neighbouring points along i, j and k.
  Mat3 steps() const {
    return {Vec3{spacing[0], 0, 0}, Vec3{skew[0], spacing[1], 0}, Vec3{skew[1], skew[2], spacing[2]}};
  }
  // The distance between neighbouring points along axis 0 (i), 1 (j) or 2 (k), Å.
  double step_length(int axis) const;
  // The point's grid coordinates (i, j, k as reals) of a position: the inverse of position().
  std::array<double, 3> coordinates(const std::array<double, 3>& p) const;
  // Position of the last point along each axis (an orthogonal grid's far corner).
  std::array<double, 3> far_corner() const { return position(dims[0] - 1, dims[1] - 1, dims[2] - 1); }
  // The box holding every point (for a skewed grid, the box of its eight corners).
  Box bounds() const;
  bool same_as(const GridSpec& other, double tolerance = 1e-6) const;
  std::string describe() const;  // "129x129x129 points, 0.5 Å, origin (x, y, z)"
};

// The most points along one axis.
inline constexpr std::int64_t kMaxAxisPoints = std::int64_t(1) << 30;
// The most points a grid may have: 2^60 (4 EiB of float32, beyond any memory or disk), far
// enough below 2^64 that point and byte counts never wrap.
inline constexpr std::uint64_t kMaxGridPoints = std::uint64_t(1) << 60;

// Throws Error unless dims are positive (at most kMaxAxisPoints each, kMaxGridPoints in all) and
// spacing is positive and finite.
void validate(const GridSpec& grid);

// A grid covering box grown by padding on every side, at the given spacing, its points on
// multiples of the spacing (origin = floor((lo − padding)/spacing)·spacing, the last point at
// ceil((hi + padding)/spacing)·spacing), so every map format places it exactly.
GridSpec grid_around(const Box& box, double spacing, double padding);
// An AutoGrid-style box: centre and edge lengths, Å.
GridSpec grid_centered(const std::array<double, 3>& center, const std::array<double, 3>& size,
                       double spacing);
// Origin plus point counts.
GridSpec grid_from_origin(const std::array<double, 3>& origin, const std::array<std::int64_t, 3>& dims,
                          double spacing);

// The default grid of a periodic map. An orthorhombic cell is tiled exactly: along each edge L,
// n = ⌈L/spacing⌉ points at spacing L/n from the cell's origin, so the grid holds one period and no
// point twice. A triclinic cell gets its bounding box at the spacing (points outside the cell take
// their periodic values).
GridSpec grid_over_cell(const UnitCell& cell, double spacing);

// The cell's own lattice: along each lattice vector n = ⌈|a_i|/spacing⌉ points, step a_i/n, from
// the cell's origin, so the grid holds one period and no point twice (--grid cell). Skewed unless
// the cell is orthorhombic.
GridSpec grid_on_cell(const UnitCell& cell, double spacing);
// The lattice of `cell` with the dims of `grid` (a frame's own cell under NPT).
GridSpec grid_on_cell(const UnitCell& cell, const std::array<std::int64_t, 3>& dims);
// The unit cell a skewed or orthogonal grid tiles: its steps times its dims.
UnitCell cell_of_grid(const GridSpec& grid);
// Throws Error naming `what` when the grid is skewed: for the code that places points by
// origin + index·spacing alone.
void require_orthogonal(const GridSpec& grid, const std::string& what);

// Bytes the float32 potential of this grid takes.
std::size_t grid_bytes(const GridSpec& grid);
// Throws Error, saying how much is needed and how much there is, when the grid's float32 data
// would not fit in the memory available (MemAvailable from /proc/meminfo, less a margin).
void require_host_memory(const GridSpec& grid, std::size_t copies = 1);
// Whether `copies` of the grid's float32 data fit in the memory for maps held only to save work
// (kept in memory rather than read back from a file, never needed for a result):
// $DCSGRID_HELD_MAPS_BYTES (0 holds none), by default a quarter of the memory available.
bool held_maps_fit(const GridSpec& grid, std::size_t copies = 1);

}  // namespace dcsgrid
