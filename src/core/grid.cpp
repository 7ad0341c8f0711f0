#include "dcsgrid/core/grid.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/environment.hpp"
#include "dcsgrid/core/error.hpp"

namespace dcsgrid {

std::array<std::int64_t, 3> GridSpec::ijk(std::size_t index) const {
  const std::int64_t i = std::int64_t(index % dims[0]);
  const std::size_t rest = index / dims[0];
  return {i, std::int64_t(rest % dims[1]), std::int64_t(rest / dims[1])};
}

std::array<double, 3> GridSpec::coordinates(const std::array<double, 3>& p) const {
  const double k = (p[2] - origin[2]) / spacing[2];
  const double j = (p[1] - origin[1] - k * skew[2]) / spacing[1];
  return {(p[0] - origin[0] - j * skew[0] - k * skew[1]) / spacing[0], j, k};
}

double GridSpec::step_length(int axis) const {
  const Vec3 s = steps()[std::size_t(axis)];
  return std::hypot(s[0], s[1], s[2]);
}

Box GridSpec::bounds() const {
  Box box{position(0, 0, 0), position(0, 0, 0)};
  for (int corner = 1; corner < 8; ++corner) {
    const auto p = position(corner & 1 ? dims[0] - 1 : 0, corner & 2 ? dims[1] - 1 : 0,
                            corner & 4 ? dims[2] - 1 : 0);
    for (int d = 0; d < 3; ++d) {
      box.lo[d] = std::min(box.lo[d], p[d]);
      box.hi[d] = std::max(box.hi[d], p[d]);
    }
  }
  return box;
}

bool GridSpec::same_as(const GridSpec& other, double tolerance) const {
  for (int a = 0; a < 3; ++a) {
    if (dims[a] != other.dims[a]) return false;
    if (std::abs(origin[a] - other.origin[a]) > tolerance) return false;
    if (std::abs(spacing[a] - other.spacing[a]) > tolerance) return false;
    if (std::abs(skew[a] - other.skew[a]) > tolerance) return false;
  }
  return true;
}

std::string GridSpec::describe() const {
  std::string space = spacing[0] == spacing[1] && spacing[1] == spacing[2]
                          ? fmt::format("{:g} Å", spacing[0])
                          : fmt::format("{:g}x{:g}x{:g} Å", spacing[0], spacing[1], spacing[2]);
  if (!orthogonal()) {
    const Mat3 s = steps();
    space = fmt::format("steps a ({:.4g}, 0, 0) b ({:.4g}, {:.4g}, 0) c ({:.4g}, {:.4g}, {:.4g}) Å",
                        s[0][0], s[1][0], s[1][1], s[2][0], s[2][1], s[2][2]);
  }
  return fmt::format("{}x{}x{} points ({:.3g} M), {}, origin ({:.3f}, {:.3f}, {:.3f})", dims[0],
                     dims[1], dims[2], point_count() / 1e6, space, origin[0], origin[1], origin[2]);
}

void validate(const GridSpec& grid) {
  for (int a = 0; a < 3; ++a) {
    if (grid.dims[a] < 1)
      throw Error(fmt::format("grid dimension {} is {}: every axis needs at least one point",
                              "xyz"[a], grid.dims[a]));
    if (!(grid.spacing[a] > 0) || !std::isfinite(grid.spacing[a]))
      throw Error(fmt::format("grid spacing must be positive and finite, got {}", grid.spacing[a]));
    if (!std::isfinite(grid.origin[a])) throw Error("grid origin is not finite");
    if (!std::isfinite(grid.skew[a])) throw Error("grid skew is not finite");
  }
  for (int a = 0; a < 3; ++a)
    if (grid.dims[a] > kMaxAxisPoints)
      throw Error(fmt::format("grid dimension {} is {}: more than 2^30 points", "xyz"[a],
                              grid.dims[a]));
  // The point count must not wrap a 64-bit count (2^30 along each axis would).
  const double points = double(grid.dims[0]) * double(grid.dims[1]) * double(grid.dims[2]);
  if (points > double(kMaxGridPoints))
    throw Error(fmt::format("a grid of {}x{}x{} points ({:.3g} points, {:.3g} GiB of float32) is "
                            "beyond any memory or disk: the limit is 2^60 points",
                            grid.dims[0], grid.dims[1], grid.dims[2], points,
                            points * sizeof(float) / 0x1p30));
}

// The point count of an axis spanning `steps` spacings (steps + 1), checked while still a double:
// converting a double beyond the integer's range is undefined (--size 1e30 had printed a grid
// dimension of -9223372036854775807). `request` says what was asked for, for the message.
static std::int64_t axis_points(double steps, double spacing, const std::string& request) {
  if (!(steps >= 0 && steps < double(kMaxAxisPoints)))  // NaN too
    throw Error(fmt::format("{}: {:.3g} points at spacing {:g} Å, more than 2^30 points", request,
                            steps + 1, spacing));
  return std::int64_t(steps) + 1;
}

static void require_spacing(double spacing) {
  if (!(spacing > 0) || !std::isfinite(spacing))
    throw Error(fmt::format("--spacing must be a positive number of Å, got {}", spacing));
}

GridSpec grid_around(const Box& box, double spacing, double padding) {
  require_spacing(spacing);
  if (!(padding >= 0) || !std::isfinite(padding))
    throw Error(fmt::format("--padding must be zero or a positive number of Å, got {}", padding));
  GridSpec grid;
  for (int a = 0; a < 3; ++a) {
    // Points on multiples of the spacing (the lattice through 0): CCP4/MRC readers place a map
    // by whole-step offsets (NXSTART), and gemmi and PyMOL ignore an origin off that lattice.
    // The tolerance keeps a bound that is a multiple up to rounding from adding a point.
    const double first = std::floor((box.lo[a] - padding) / spacing + 1e-9);
    const double last = std::ceil((box.hi[a] + padding) / spacing - 1e-9);
    grid.dims[a] = axis_points(last - first, spacing,
                               fmt::format("the box with padding spans {:g} Å along {}",
                                           box.hi[a] - box.lo[a] + 2 * padding, "xyz"[a]));
    grid.spacing[a] = spacing;
    grid.origin[a] = first * spacing;
  }
  validate(grid);
  return grid;
}

GridSpec grid_centered(const std::array<double, 3>& center, const std::array<double, 3>& size,
                       double spacing) {
  require_spacing(spacing);
  GridSpec grid;
  for (int a = 0; a < 3; ++a) {
    if (!(size[a] >= 0) || !std::isfinite(size[a]))
      throw Error(fmt::format("--size must be non-negative edge lengths in Å, got {}", size[a]));
    grid.dims[a] = axis_points(std::ceil(size[a] / spacing - 1e-9), spacing,
                               fmt::format("--size {:g} Å along {}", size[a], "xyz"[a]));
    grid.spacing[a] = spacing;
    grid.origin[a] = center[a] - spacing * double(grid.dims[a] - 1) / 2;
  }
  validate(grid);
  return grid;
}

GridSpec grid_from_origin(const std::array<double, 3>& origin,
                          const std::array<std::int64_t, 3>& dims, double spacing) {
  require_spacing(spacing);
  GridSpec grid;
  grid.origin = origin;
  grid.dims = dims;
  grid.spacing = {spacing, spacing, spacing};
  validate(grid);
  return grid;
}

GridSpec grid_over_cell(const UnitCell& cell, double spacing) {
  if (!(std::isfinite(spacing) && spacing > 0)) throw Error("the grid spacing must be a positive number of Å");
  if (!cell.orthorhombic()) {
    Box box{{0, 0, 0}, {0, 0, 0}};
    for (int corner = 1; corner < 8; ++corner) {
      const Vec3 p = cell.cartesian({double(corner & 1), double((corner >> 1) & 1), double((corner >> 2) & 1)});
      for (int d = 0; d < 3; ++d) {
        box.lo[d] = std::min(box.lo[d], p[d]);
        box.hi[d] = std::max(box.hi[d], p[d]);
      }
    }
    return grid_around(box, spacing, 0.0);
  }
  return grid_on_cell(cell, spacing);
}

GridSpec grid_on_cell(const UnitCell& cell, const std::array<std::int64_t, 3>& dims) {
  GridSpec g;
  g.dims = dims;
  const Mat3& v = cell.vectors;
  const auto step = [&](int row, int column) { return v[row][column] / double(dims[row]); };
  g.spacing = {step(0, 0), step(1, 1), step(2, 2)};
  g.skew = {step(1, 0), step(2, 0), step(2, 1)};
  // An orthorhombic cell's vectors hold cos 90° = 6e-17, not 0, off the diagonal.
  if (cell.orthorhombic()) {
    g.skew = {};
    for (int d = 0; d < 3; ++d) g.spacing[d] = cell.lengths[d] / double(dims[d]);
  }
  validate(g);
  return g;
}

GridSpec grid_on_cell(const UnitCell& cell, double spacing) {
  if (!(std::isfinite(spacing) && spacing > 0)) throw Error("the grid spacing must be a positive number of Å");
  std::array<std::int64_t, 3> dims{};
  for (int d = 0; d < 3; ++d) {
    const double points = std::ceil(cell.lengths[d] / spacing - 1e-9);
    if (!(points <= double(kMaxAxisPoints)))
      throw Error(fmt::format("the cell's edge of {:g} Å at spacing {:g} Å would take {:g} points", cell.lengths[d],
                              spacing, points));
    dims[d] = std::max<std::int64_t>(1, std::int64_t(points));
  }
  return grid_on_cell(cell, dims);
}

UnitCell cell_of_grid(const GridSpec& grid) {
  Mat3 vectors = grid.steps();
  for (int row = 0; row < 3; ++row)
    for (double& v : vectors[row]) v *= double(grid.dims[row]);
  const std::optional<UnitCell> cell = cell_from_vectors(vectors);
  if (!cell) throw Error("the grid " + grid.describe() + " spans no volume");
  return *cell;
}

void require_orthogonal(const GridSpec& grid, const std::string& what) {
  if (!grid.orthogonal())
    throw Error(what + " needs a grid of orthogonal axes; this one is a cell's skewed lattice (" +
                grid.describe() + ")");
}

std::size_t grid_bytes(const GridSpec& grid) { return grid.point_count() * sizeof(float); }

static std::size_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;  // unknown: do not refuse
}

void require_host_memory(const GridSpec& grid, std::size_t copies) {
  const std::size_t need = grid_bytes(grid) * copies;
  const std::size_t have = available_host_memory();
  // Leave a tenth of what is free for everything else.
  if (have && need > have / 10 * 9)
    throw Error(fmt::format(
        "the grid {} needs {} bytes ({:.2f} GiB: {} cop{} of its {} points in float32) of memory "
        "but only {:.2f} GiB is available; use a coarser --spacing or a smaller --padding/--size",
        grid.describe(), need, need / 1073741824.0, copies, copies == 1 ? "y" : "ies",
        grid.point_count(), have / 1073741824.0));
}

bool held_maps_fit(const GridSpec& grid, std::size_t copies) {
  const std::uint64_t budget = size_from_environment("DCSGRID_HELD_MAPS_BYTES", available_host_memory() / 4, true);
  return grid_bytes(grid) * copies <= budget;
}

}  // namespace dcsgrid
