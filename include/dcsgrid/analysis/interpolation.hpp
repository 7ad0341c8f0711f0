// Trilinear interpolation of grid maps at arbitrary points, expressed as a sparse matrix
// (one row per point, eight nonzeros: the weights of its cell's corners; columns are grid point
// indices) and applied with the in-house SpMV/SpMM. One matrix serves any number of maps on the
// same grid. Points outside the grid get no weights and the value NaN: never extrapolated.
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/prims/sparse.hpp"

namespace dcsgrid::analysis {

struct InterpolationMatrix {
  prims::CsrMatrix matrix;           // points × grid points
  std::vector<std::size_t> outside;  // rows (points) outside the grid, ascending; their rows are empty
};

// Weights at the positions of `points` (charges ignored). A point is inside when it lies in the
// grid's box, with a tolerance of 1e-6 spacing at the faces; on a face or node the weights
// reproduce the node values exactly. Along an axis with one point, only points on its plane are
// inside. Throws Error for grids or point sets of 2^31 or more (32-bit indices).
InterpolationMatrix trilinear_matrix(const GridSpec& grid, const AtomSet& points);

// What interpolate(trilinear_matrix(grid, points), map, "cpu") gives (the same weights, summed in
// the same order, to float rounding), without the matrix: each point interpolated in turn, in parallel. outside receives the points
// outside the grid (NaN), ascending. For many points (a surface's vertices) and one map.
std::vector<float> interpolate_at(const GridSpec& grid, const float* map, const std::vector<std::array<float, 3>>& points,
                                  std::vector<std::size_t>& outside);

// values[i] = map interpolated at point i (NaN outside). device: "cpu", "gpu" or "auto".
std::vector<float> interpolate(const InterpolationMatrix& m, const float* map,
                               const std::string& device = "auto");
// Many maps at once: maps holds count maps of m.matrix.cols floats one after another, out
// receives count rows of m.matrix.rows values (map-major), NaN outside. SpMM on the chosen device.
void interpolate_many(const InterpolationMatrix& m, const float* maps, std::size_t count, float* out,
                      const std::string& device = "auto");

}  // namespace dcsgrid::analysis
