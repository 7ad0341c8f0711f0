// The molecular surface coloured by a potential (app/surface.hpp).
#include "dcsgrid/app/surface.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "dcsgrid/analysis/interpolation.hpp"
#include "dcsgrid/app/compute.hpp"
#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"

namespace dcsgrid::app {
namespace {

// The grid points the vertices' trilinear interpolation reads: the corners of each cell holding a
// vertex (1TII at 1 Å: 61,272 points, against 144,288 in the bricks below).
std::vector<char> points_under_mesh(const GridSpec& grid, const TriangleMesh& mesh) {
  std::vector<char> needed(grid.point_count(), 0);
  for (const auto& v : mesh.vertices) {
    std::array<std::int64_t, 2> at[3];
    for (int d = 0; d < 3; ++d) {
      const auto cell = std::clamp<std::int64_t>(std::int64_t(std::floor((v[d] - grid.origin[d]) / grid.spacing[d])),
                                                 0, grid.dims[d] - 1);
      at[d] = {cell, std::min(cell + 1, grid.dims[d] - 1)};
    }
    for (const auto k : at[2])
      for (const auto j : at[1])
        for (const auto i : at[0]) needed[grid.index(i, j, k)] = 1;
  }
  return needed;
}

// Direct summation at those points alone (engine::direct_sum_points_cpu, 8 points a vector in grid
// order), the rest NaN: the whole grid's values to float rounding.
void direct_under_mesh(const engine::PotentialRequest& request, const TriangleMesh& mesh, io::MapFile& map) {
  const GridSpec& grid = map.grid;
  const std::vector<char> needed = points_under_mesh(grid, mesh);
  std::vector<std::size_t> index;
  std::vector<std::array<double, 3>> points;
  for (std::size_t n = 0; n < needed.size(); ++n)
    if (needed[n]) {
      const auto ijk = grid.ijk(n);
      index.push_back(n);
      points.push_back(grid.position(ijk[0], ijk[1], ijk[2]));
    }
  spdlog::debug("surface: the potential at the {} of {} grid points that the vertices read", points.size(),
                grid.point_count());
  std::vector<float> values(points.size());
  engine::direct_sum_points_cpu(*request.atoms, points, make_pair_kernel(request.physics), values.data());
  std::fill(map.data.begin(), map.data.end(), std::numeric_limits<float>::quiet_NaN());
  for (std::size_t p = 0; p < points.size(); ++p) {
    if (!std::isfinite(values[p]) && !request.allow_non_finite) {
      const auto ijk = grid.ijk(index[p]);
      throw Error(fmt::format("the potential: the value at grid point (x {}, y {}, z {}) is {}: the map is not "
                              "finite (--allow-non-finite keeps such values)",
                              ijk[0], ijk[1], ijk[2], values[p]));
    }
    map.data[index[p]] = values[p];
  }
}

// The map computed on a grid around the mesh: on the CPU with direct (the default), only where the
// vertices read it, unless the whole map is asked for (the viewers' scripts show it); otherwise
// the whole grid (a run over parts of it pays a pass over the atoms a part: docs/surface.md).
io::MapFile potential_map(const SurfaceRequest& r, const AtomSet& atoms, const TriangleMesh& mesh) {
  Box box{{mesh.vertices[0][0], mesh.vertices[0][1], mesh.vertices[0][2]}, {}};
  box.hi = box.lo;
  for (const auto& v : mesh.vertices)
    for (int d = 0; d < 3; ++d) box.lo[d] = std::min(box.lo[d], double(v[d])), box.hi[d] = std::max(box.hi[d], double(v[d]));
  io::MapFile map;
  map.grid = grid_around(box, r.grid_spacing, r.grid_spacing);
  require_host_memory(map.grid);
  map.data.resize(map.grid.point_count());
  const ComputeSettings& settings = r.compute;
  const auto backend = start_backend(settings);
  if (!r.whole_map && backend->name() == "cpu" && settings.methods.front() == engine::Method::direct) {
    const engine::PotentialRequest request = make_request(settings, engine::Method::direct, atoms, map.grid);
    return direct_under_mesh(request, mesh, map), map;
  }
  Observer quiet;
  compute_map(*backend, atoms, map.grid, settings, settings.methods.front(), map.data.data(), quiet);
  return map;
}

// The potential at every vertex; refuses a map that misses any, saying by how much.
std::vector<float> vertex_values(const io::MapFile& map, const TriangleMesh& mesh, const std::string& map_name) {
  std::vector<std::size_t> outside;
  std::vector<float> values = analysis::interpolate_at(map.grid, map.data.data(), mesh.vertices, outside);
  if (!outside.empty()) {
    // How far beyond, along the grid's axes (a skewed map's too): grid coordinates times the steps.
    double worst = 0;
    for (const std::size_t p : outside) {
      const auto& v = mesh.vertices[p];
      const auto c = map.grid.coordinates({double(v[0]), double(v[1]), double(v[2])});
      for (int d = 0; d < 3; ++d) {
        const double beyond = std::max(-c[d], c[d] - double(map.grid.dims[d] - 1));
        worst = std::max(worst, beyond * map.grid.step_length(d));
      }
    }
    throw Error(map_name + " does not cover the surface: " + std::to_string(outside.size()) + " of " +
                std::to_string(mesh.vertices.size()) + " vertices lie outside its grid, up to " +
                fmt::format("{:.3g}", worst) + " Å beyond it; compute a map on a larger box (--padding) or omit MAP");
  }
  return values;
}

}  // namespace

SurfaceResult compute_surface(const io::Structure& structure, const std::vector<io::AtomLabel>& labels,
                              const SurfaceRequest& request, const io::MapFile* map, const std::string& map_name) {
  SurfaceResult result;
  LapTimer timer;
  result.mesh = analysis::molecular_surface(structure.atoms, request.surface, request.compute.device);
  spdlog::debug("surface: mesh {:.3f} s ({} vertices, {} faces)", timer.lap(), result.mesh.vertices.size(),
                result.mesh.faces.size());
  if (!map) {
    result.map = potential_map(request, structure.atoms, result.mesh);
    spdlog::debug("surface: potential {:.3f} s", timer.lap());
  }
  result.mesh.value = vertex_values(map ? *map : result.map, result.mesh, map_name);
  spdlog::debug("surface: values at the vertices {:.3f} s", timer.lap());
  result.table = analysis::surface_table(result.mesh, structure.atoms.size(), labels);
  spdlog::debug("surface: table {:.3f} s", timer.lap());
  return result;
}

}  // namespace dcsgrid::app
