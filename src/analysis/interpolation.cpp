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

void fill_nan_outside(const InterpolationMatrix& m, float* values) {
  for (std::size_t row : m.outside) values[row] = std::numeric_limits<float>::quiet_NaN();
}

}  // namespace

InterpolationMatrix trilinear_matrix(const GridSpec& grid, const AtomSet& points) {
  validate(grid);
  if (grid.point_count() >= (std::size_t(1) << 31))
    throw Error("interpolation needs a grid of fewer than 2^31 points, got " + grid.describe());
  const std::size_t n = points.size();
  if (n >= (std::size_t(1) << 31))
    throw Error("interpolation takes fewer than 2^31 points at a time, got " + std::to_string(n));
  InterpolationMatrix m;
  prims::CsrMatrix& a = m.matrix;
  a.rows = std::int64_t(n);
  a.cols = std::int64_t(grid.point_count());
  // Each point's 8 entries in slots of its own, the points in parallel (a 10^6-atom surface has
  // some 3·10^7 vertices); the rows of points outside the grid are then left out, in order.
  std::vector<std::int32_t> columns(8 * n);
  std::vector<float> values(8 * n);
  std::vector<char> inside(n);
  const std::array<const std::vector<float>*, 3> coords = {&points.x, &points.y, &points.z};
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t p = 0; p < std::int64_t(n); ++p) {
    std::array<std::int64_t, 3> lower{};
    std::array<double, 3> t{};
    // Grid coordinates: on a skewed grid (a cell's lattice) the cell's fractional ones, scaled.
    const std::array<double, 3> u = grid.coordinates({(*coords[0])[p], (*coords[1])[p], (*coords[2])[p]});
    bool in = true;
    for (int d = 0; d < 3 && in; ++d) in = locate(u[d], grid.dims[d], lower[d], t[d]);
    inside[std::size_t(p)] = in;
    if (!in) continue;
    // Corner (dx, dy, dz) in x-fastest order: columns ascend when the corners are distinct.
    for (int corner = 0; corner < 8; ++corner) {
      const int dx = corner & 1, dy = (corner >> 1) & 1, dz = corner >> 2;
      const auto step = [&](int d, int delta) {
        return grid.dims[d] > 1 ? lower[d] + delta : lower[d];
      };
      const double w = (dx ? t[0] : 1 - t[0]) * (dy ? t[1] : 1 - t[1]) * (dz ? t[2] : 1 - t[2]);
      columns[8 * std::size_t(p) + std::size_t(corner)] = std::int32_t(grid.index(step(0, dx), step(1, dy), step(2, dz)));
      values[8 * std::size_t(p) + std::size_t(corner)] = float(w);
    }
  }
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
