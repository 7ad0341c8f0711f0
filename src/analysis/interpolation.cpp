// Trilinear interpolation as a CSR matrix, applied with prims' SpMV/SpMM.
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/analysis/interpolation.hpp"

#include <array>
#include <cmath>
#include <limits>

#include "dcsgrid/core/error.hpp"
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
  a.row_offsets.reserve(n + 1);
  a.row_offsets.push_back(0);
  a.columns.reserve(8 * n);
  a.values.reserve(8 * n);
  const std::array<const std::vector<float>*, 3> coords = {&points.x, &points.y, &points.z};
  for (std::size_t p = 0; p < n; ++p) {
    std::array<std::int64_t, 3> lower{};
    std::array<double, 3> t{};
    // Grid coordinates: on a skewed grid (a cell's lattice) the cell's fractional ones, scaled.
    const std::array<double, 3> u = grid.coordinates({(*coords[0])[p], (*coords[1])[p], (*coords[2])[p]});
    bool inside = true;
    for (int d = 0; d < 3 && inside; ++d) inside = locate(u[d], grid.dims[d], lower[d], t[d]);
    if (inside) {
      // Corner (dx, dy, dz) in x-fastest order: columns ascend when the corners are distinct.
      for (int corner = 0; corner < 8; ++corner) {
        const int dx = corner & 1, dy = (corner >> 1) & 1, dz = corner >> 2;
        const auto step = [&](int d, int delta) {
          return grid.dims[d] > 1 ? lower[d] + delta : lower[d];
        };
        const double w = (dx ? t[0] : 1 - t[0]) * (dy ? t[1] : 1 - t[1]) * (dz ? t[2] : 1 - t[2]);
        a.columns.push_back(std::int32_t(grid.index(step(0, dx), step(1, dy), step(2, dz))));
        a.values.push_back(float(w));
      }
    } else {
      m.outside.push_back(p);
    }
    a.row_offsets.push_back(std::int64_t(a.values.size()));
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
