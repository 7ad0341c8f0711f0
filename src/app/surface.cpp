// The molecular surface coloured by a potential (app/surface.hpp).
#include "dcsgrid/app/surface.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "dcsgrid/analysis/interpolation.hpp"
#include "dcsgrid/app/compute.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/method.hpp"

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

// The potential's bricks, in points (x fastest: the CPU's direct sum takes 8 points along x a vector;
// thin in y and z, so that fewer points off the surface are computed, but not single rows, each of
// which pays a pass over the atoms for its 8 points: docs/surface.md).
constexpr std::array<std::int64_t, 3> kBrick = {8, 2, 2};

// Marks the bricks of grid that hold a point the vertices read (points_under_mesh).
std::vector<bool> bricks_under_mesh(const GridSpec& grid, const TriangleMesh& mesh,
                                    const std::array<std::int64_t, 3>& bricks) {
  const std::vector<char> needed = points_under_mesh(grid, mesh);
  std::vector<bool> used(std::size_t(bricks[0] * bricks[1] * bricks[2]), false);
  for (std::size_t n = 0; n < needed.size(); ++n)
    if (needed[n]) {
      const auto ijk = grid.ijk(n);
      used[std::size_t(((ijk[2] / kBrick[2]) * bricks[1] + ijk[1] / kBrick[1]) * bricks[0] + ijk[0] / kBrick[0])] = true;
    }
  return used;
}

// The potential at the grid's points that the vertices' interpolation reads (the rest NaN): the
// bricks holding them, each computed as a grid of its own, bricks shared among the threads (each
// with a CPU backend of its own, one thread a brick: a team a brick spent its time waiting), each
// brick straight through Backend::compute (compute_map checked the atoms three times a brick). A
// slab method without a run's set-up sums each point on its own, so these are the whole grid's
// values (to float rounding) at a fraction of the cost (1TII: 27% of the points).
void compute_under_mesh(const AtomSet& atoms, const ComputeSettings& settings, const TriangleMesh& mesh,
                        io::MapFile& map) {
  const GridSpec& grid = map.grid;
  std::array<std::int64_t, 3> bricks;
  for (int d = 0; d < 3; ++d) bricks[d] = (grid.dims[d] + kBrick[d] - 1) / kBrick[d];
  const std::vector<bool> used = bricks_under_mesh(grid, mesh, bricks);
  std::vector<std::array<std::int64_t, 3>> firsts;
  for (std::int64_t k = 0; k < bricks[2]; ++k)
    for (std::int64_t j = 0; j < bricks[1]; ++j)
      for (std::int64_t i = 0; i < bricks[0]; ++i)
        if (used[std::size_t((k * bricks[1] + j) * bricks[0] + i)])
          firsts.push_back({i * kBrick[0], j * kBrick[1], k * kBrick[2]});
  spdlog::debug("surface: the potential in {} of {} bricks of {}x{}x{} points", firsts.size(), used.size(), kBrick[0],
                kBrick[1], kBrick[2]);
  std::fill(map.data.begin(), map.data.end(), std::numeric_limits<float>::quiet_NaN());
  const engine::PotentialRequest whole = make_request(settings, settings.methods.front(), atoms, grid);
  std::exception_ptr error;
#pragma omp parallel num_threads(team_size())
  {
    const auto backend = engine::make_cpu_backend();
    engine::PotentialRequest request = whole;
    std::vector<float> values;
#pragma omp for schedule(dynamic, 4)
    for (std::size_t b = 0; b < firsts.size(); ++b) try {
        const auto& first = firsts[b];
        GridSpec& part = request.grid;
        part.origin = grid.position(first[0], first[1], first[2]);
        for (int d = 0; d < 3; ++d) part.dims[d] = std::min(kBrick[d], grid.dims[d] - first[d]);
        values.resize(part.point_count());
        backend->compute(request, {0, part.nz()}, values.data());
        finite_slabs(request.allow_non_finite, part, "the potential's brick at grid point (" +
                              std::to_string(first[0]) + ", " + std::to_string(first[1]) + ", " +
                              std::to_string(first[2]) + ")",
                          [&](engine::Slab, const float* data) {
                            for (std::int64_t c = 0; c < part.nz(); ++c)
                              for (std::int64_t r = 0; r < part.ny(); ++r)
                                std::copy_n(data + part.index(0, r, c), part.nx(),
                                            map.data.data() + grid.index(first[0], first[1] + r, first[2] + c));
                          })({0, part.nz()}, values.data());
      } catch (...) {
#pragma omp critical(surface_bricks)
        if (!error) error = std::current_exception();
      }
  }
  if (error) std::rethrow_exception(error);
}

// The map computed on a grid around the mesh: whole when asked (the viewers' scripts show it) or where only a run over the whole grid pays (a GPU; methods with a run's
// set-up, such as msm's long-range grids or pb's solve), else where the vertices need it.
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
  const engine::MethodDescription& method = engine::describe(settings.methods.front());
  if (!r.whole_map && backend->name() == "cpu" && settings.methods.front() == engine::Method::direct) {
    const engine::PotentialRequest request = make_request(settings, engine::Method::direct, atoms, map.grid);
    return direct_under_mesh(request, mesh, map), map;
  }
  if (!r.whole_map && backend->name() == "cpu" && method.shape == engine::MethodShape::slab && !method.run_setup)
    return compute_under_mesh(atoms, settings, mesh, map), map;
  Observer quiet;
  compute_map(*backend, atoms, map.grid, settings, settings.methods.front(), map.data.data(), quiet);
  return map;
}

// The potential at every vertex; refuses a map that misses any, saying by how much.
std::vector<float> vertex_values(const io::MapFile& map, const TriangleMesh& mesh, const std::string& map_name) {
  AtomSet points;
  points.reserve(mesh.vertices.size());
  for (const auto& v : mesh.vertices) points.push_back(v[0], v[1], v[2], 0.0);
  const auto matrix = analysis::trilinear_matrix(map.grid, points);
  if (!matrix.outside.empty()) {
    // How far beyond, along the grid's axes (a skewed map's too): grid coordinates times the steps.
    double worst = 0;
    for (const std::size_t p : matrix.outside) {
      const auto& v = mesh.vertices[p];
      const auto c = map.grid.coordinates({double(v[0]), double(v[1]), double(v[2])});
      for (int d = 0; d < 3; ++d) {
        const double beyond = std::max(-c[d], c[d] - double(map.grid.dims[d] - 1));
        worst = std::max(worst, beyond * map.grid.step_length(d));
      }
    }
    throw Error(map_name + " does not cover the surface: " + std::to_string(matrix.outside.size()) + " of " +
                std::to_string(mesh.vertices.size()) + " vertices lie outside its grid, up to " +
                fmt::format("{:.3g}", worst) + " Å beyond it; compute a map on a larger box (--padding) or omit MAP");
  }
  return analysis::interpolate(matrix, map.data.data(), "cpu");
}

}  // namespace

SurfaceResult compute_surface(const io::Structure& structure, const std::vector<io::AtomLabel>& labels,
                              const SurfaceRequest& request, const io::MapFile* map, const std::string& map_name) {
  SurfaceResult result;
  result.mesh = analysis::molecular_surface(structure.atoms, request.surface);
  if (!map) result.map = potential_map(request, structure.atoms, result.mesh);
  result.mesh.value = vertex_values(map ? *map : result.map, result.mesh, map_name);
  result.table = analysis::surface_table(result.mesh, structure.atoms.size(), labels);
  return result;
}

}  // namespace dcsgrid::app
