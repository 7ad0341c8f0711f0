// What the CPU direct and cutoff kernels share (private to src/engine): the row frame, the x
// positions of a row's points, the slab check and the output of a row's float64 sums.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "cpu_simd.hpp"

namespace dcsgrid::engine {

// The kernels take y and z differences in double, once per (row, atom), and x differences in
// float, once per pair. To keep those exact to float rounding, x is measured from the row's
// middle point: float coordinates stay within about half the grid's width, and the points sit at
// exact multiples of the spacing.
inline std::int64_t middle_index(const GridSpec& grid) { return grid.nx() / 2; }
inline double middle_x(const GridSpec& grid) {
  return grid.origin[0] + double(middle_index(grid)) * grid.spacing[0];
}

// x of each atom in the row frame.
inline std::vector<float> row_frame_x(const AtomSet& atoms, const GridSpec& grid) {
  const double x0 = middle_x(grid);
  std::vector<float> x(atoms.size());
  for (std::size_t a = 0; a < atoms.size(); ++a) x[a] = float(double(atoms.x[a]) - x0);
  return x;
}

inline void check_slab(const GridSpec& grid, Slab slab, const char* who) {
  validate(grid);
  if (slab.z_begin < 0 || slab.z_begin > slab.z_end || slab.z_end > grid.nz())
    throw Error(std::string(who) + ": slab [" + std::to_string(slab.z_begin) + ", " +
                std::to_string(slab.z_end) + ") lies outside the grid's " +
                std::to_string(grid.nz()) + " planes");
}

// Number of 8-point vectors covering a row; the lanes past nx are computed and dropped.
inline std::size_t row_vectors(const GridSpec& grid) {
  return std::size_t(grid.nx() + simd::kLanes - 1) / simd::kLanes;
}

// x of each point of a row in the row frame, one vector per 8 points.
inline std::vector<simd::v8f> row_positions(const GridSpec& grid) {
  std::vector<simd::v8f> px(row_vectors(grid));
  const float first = float(-middle_index(grid));
  for (std::size_t v = 0; v < px.size(); ++v)
    px[v] = (simd::lane_index() + (first + float(v * simd::kLanes))) *
            simd::splat(float(grid.spacing[0]));
  return px;
}

// y and z of row (j, k), as the float64 reference computes them.
inline std::array<double, 2> row_yz(const GridSpec& grid, std::int64_t j, std::int64_t k) {
  const auto p = grid.position(0, j, k);
  return {p[1], p[2]};
}

// Writes (or adds, when add is set) scale·sum[i] into the row's n output points.
inline void finish_row(const std::vector<double>& sum, std::size_t n, double scale, bool add,
                       float* out) {
  for (std::size_t i = 0; i < n; ++i)
    out[i] = float(scale * sum[i]) + (add ? out[i] : 0.0f);
}

}  // namespace dcsgrid::engine
