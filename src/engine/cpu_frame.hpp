// What the CPU direct and cutoff kernels share (private to src/engine): precise coordinate
// differences, the x positions of a row's points, the slab check and a row's output.
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

// Precision of the differences the kernels take. y and z differences are taken in double, once
// per (row, atom), and rounded once. x differences are taken in float, once per pair, between
// an atom's x and a point's, both measured from the first point of the block of vectors being
// computed: then both are small where it matters (near the atom) and the difference is exact to
// float rounding of the difference itself, wherever the grid lies. To form an atom's x relative
// to any block cheaply and exactly, its x relative to the grid origin is kept as a float and the
// float of its remainder.
struct Split {
  float hi, lo;
};
inline Split split(double v) {
  const float hi = float(v);
  return {hi, float(v - hi)};
}

// Atoms' coordinates along one axis relative to origin, split.
struct SplitX {
  std::vector<float> hi, lo;
};
inline SplitX split_axis(const std::vector<float>& coordinate, double origin) {
  SplitX x{std::vector<float>(coordinate.size()), std::vector<float>(coordinate.size())};
  for (std::size_t a = 0; a < coordinate.size(); ++a) {
    const Split s = split(double(coordinate[a]) - origin);
    x.hi[a] = s.hi;
    x.lo[a] = s.lo;
  }
  return x;
}
// Atoms' x relative to the grid origin, split.
inline SplitX split_x(const AtomSet& atoms, const GridSpec& grid) { return split_axis(atoms.x, grid.origin[0]); }

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

// x of the points of the row's k-th vector relative to the row's first point, (8k + lane)·hx,
// for k < row_vectors: the point positions relative to any vector, k vectors ahead.
inline std::vector<simd::v8f> lane_offsets(const GridSpec& grid) {
  std::vector<simd::v8f> px(row_vectors(grid));
  for (std::size_t k = 0; k < px.size(); ++k)
    for (int lane = 0; lane < simd::kLanes; ++lane)
      px[k][lane] = float(double(k * simd::kLanes + lane) * grid.spacing[0]);
  return px;
}

// x of the first point of vector v relative to the grid origin, split.
inline Split vector_origin(std::size_t v, const GridSpec& grid) {
  return split(double(v * simd::kLanes) * grid.spacing[0]);
}

// y and z of row (j, k), as the float64 reference computes them.
inline std::array<double, 2> row_yz(const GridSpec& grid, std::int64_t j, std::int64_t k) {
  const auto p = grid.position(0, j, k);
  return {p[1], p[2]};
}

// How far row (j, k)'s first point lies along x from the grid's origin: 0 on an orthogonal grid,
// j·bx + k·cx on a skewed one.
inline double row_shift(const GridSpec& grid, std::int64_t j, std::int64_t k) {
  return grid.position(0, j, k)[0] - grid.origin[0];
}

// Writes (or adds, when add is set) scale·sum[i] into the row's n output points.
inline void finish_row(const std::vector<double>& sum, std::size_t n, double scale, bool add,
                       float* out) {
  for (std::size_t i = 0; i < n; ++i)
    out[i] = float(scale * sum[i]) + (add ? out[i] : 0.0f);
}

}  // namespace dcsgrid::engine
