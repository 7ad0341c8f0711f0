// Trilinear interpolation as a CSR matrix, applied with prims' SpMV/SpMM.
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/analysis/interpolation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "interpolation_cuda.hpp"

namespace dcsgrid::analysis {

namespace {

constexpr double kTolerance = 1e-6;  // in spacings: points this close outside a face count as on it

// Lower corner index and fractional offset of grid coordinate u (in points) along an axis of n
// points; false when outside.
bool locate(double u, std::int64_t n, std::int64_t& lower, double& t) {
  if (!(u >= -kTolerance && u <= double(n - 1) + kTolerance)) return false;  // NaN too
  u = std::clamp(u, 0.0, double(n - 1));
  if (n == 1) {
    lower = 0;
    t = 0;
    return true;
  }
  lower = std::min(std::int64_t(std::floor(u)), n - 2);
  t = u - double(lower);
  return true;
}

// The cell holding p (its lower corner) and p's offsets in it; false when p lies outside the grid.
bool locate_point(const GridSpec& grid, const std::array<double, 3>& p, std::array<std::int64_t, 3>& lower,
                  std::array<double, 3>& t) {
  // Grid coordinates: on a skewed grid (a cell's lattice) the cell's fractional ones, scaled.
  const std::array<double, 3> u = grid.coordinates(p);
  for (int d = 0; d < 3; ++d)
    if (!locate(u[d], grid.dims[d], lower[d], t[d])) return false;
  return true;
}

// The 8 corners (grid point indices, x fastest: ascending when distinct) and weights of the point
// at p; false when it lies outside the grid.
bool trilinear_weights(const GridSpec& grid, const std::array<double, 3>& p, std::int32_t* columns, float* weights) {
  std::array<std::int64_t, 3> lower{};
  std::array<double, 3> t{};
  if (!locate_point(grid, p, lower, t)) return false;
  for (int corner = 0; corner < 8; ++corner) {
    const int dx = corner & 1, dy = (corner >> 1) & 1, dz = corner >> 2;
    const auto step = [&](int d, int delta) { return grid.dims[d] > 1 ? lower[d] + delta : lower[d]; };
    const double w = (dx ? t[0] : 1 - t[0]) * (dy ? t[1] : 1 - t[1]) * (dz ? t[2] : 1 - t[2]);
    columns[corner] = std::int32_t(grid.index(step(0, dx), step(1, dy), step(2, dz)));
    weights[corner] = float(w);
  }
  return true;
}

void check_sizes(const GridSpec& grid, std::size_t points) {
  validate(grid);
  if (grid.point_count() >= (std::size_t(1) << 31))
    throw Error("interpolation needs a grid of fewer than 2^31 points, got " + grid.describe());
  if (points >= (std::size_t(1) << 31))
    throw Error("interpolation takes fewer than 2^31 points at a time, got " + std::to_string(points));
}

void fill_nan_outside(const InterpolationMatrix& m, float* values) {
  for (std::size_t row : m.outside) values[row] = std::numeric_limits<float>::quiet_NaN();
}

}  // namespace

InterpolationMatrix trilinear_matrix(const GridSpec& grid, const AtomSet& points) {
  const std::size_t n = points.size();
  check_sizes(grid, n);
  InterpolationMatrix m;
  prims::CsrMatrix& a = m.matrix;
  a.rows = std::int64_t(n);
  a.cols = std::int64_t(grid.point_count());
  // Each point's 8 entries in slots of its own, the points in parallel (a 10^6-atom surface has
  // some 3·10^7 vertices); the rows of points outside the grid are then left out, in order.
  std::vector<std::int32_t> columns(8 * n);
  std::vector<float> values(8 * n);
  std::vector<char> inside(n);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t p = 0; p < std::int64_t(n); ++p)
    inside[std::size_t(p)] = trilinear_weights(grid, {points.x[std::size_t(p)], points.y[std::size_t(p)], points.z[std::size_t(p)]},
                                               &columns[8 * std::size_t(p)], &values[8 * std::size_t(p)]);
  a.row_offsets.resize(n + 1);
  std::int64_t entries = 0;
  for (std::size_t p = 0; p < n; ++p) {
    a.row_offsets[p] = entries;
    if (inside[p]) entries += 8;
    else m.outside.push_back(p);
  }
  a.row_offsets[n] = entries;
  if (m.outside.empty()) {
    a.columns = std::move(columns);
    a.values = std::move(values);
    return m;
  }
  a.columns.resize(std::size_t(entries));
  a.values.resize(std::size_t(entries));
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t p = 0; p < std::int64_t(n); ++p)
    if (inside[std::size_t(p)]) {
      const std::size_t from = 8 * std::size_t(p), to = std::size_t(a.row_offsets[std::size_t(p)]);
      std::copy_n(columns.begin() + std::ptrdiff_t(from), 8, a.columns.begin() + std::ptrdiff_t(to));
      std::copy_n(values.begin() + std::ptrdiff_t(from), 8, a.values.begin() + std::ptrdiff_t(to));
    }
  return m;
}

std::vector<float> interpolate_at(const GridSpec& grid, const float* map, const std::vector<std::array<float, 3>>& points,
                                  std::vector<std::size_t>& outside) {
  check_sizes(grid, points.size());
  std::vector<float> out(points.size());
  std::vector<char> off_grid(points.size(), 0);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t p = 0; p < std::int64_t(points.size()); ++p) {
    const auto& x = points[std::size_t(p)];
    std::int32_t columns[8];
    float weights[8];
    if (!trilinear_weights(grid, {x[0], x[1], x[2]}, columns, weights)) {
      out[std::size_t(p)] = std::numeric_limits<float>::quiet_NaN();
      off_grid[std::size_t(p)] = 1;
      continue;
    }
    float sum = 0.0f;  // spmv_cpu's sum of the row
    for (int c = 0; c < 8; ++c) sum += weights[c] * map[columns[c]];
    out[std::size_t(p)] = sum;
  }
  outside.clear();
  for (std::size_t p = 0; p < points.size(); ++p)
    if (off_grid[p]) outside.push_back(p);
  return out;
}

std::vector<float> interpolate(const InterpolationMatrix& m, const float* map,
                               const std::string& device) {
  std::vector<float> out(std::size_t(m.matrix.rows));
  interpolate_many(m, map, 1, out.data(), device);
  return out;
}

void interpolate_many(const InterpolationMatrix& m, const float* maps, std::size_t count, float* out,
                      const std::string& device) {
  const std::int64_t rows = m.matrix.rows, cols = m.matrix.cols;
  if (count == 0 || rows == 0) return;
  if (engine::use_gpu(device)) {
#ifdef DCSGRID_HAVE_CUDA
    spmm_on_gpu(m.matrix, maps, count, out);
#endif
  } else if (count == 1) {
    prims::spmv_cpu(m.matrix, maps, out);
  } else {
    prims::spmm_cpu(m.matrix, maps, cols, std::int64_t(count), out, rows);
  }
  for (std::size_t c = 0; c < count; ++c) fill_nan_outside(m, out + c * std::size_t(rows));
}

}  // namespace dcsgrid::analysis
