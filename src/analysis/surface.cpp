// Marching tetrahedra over the surface field (surface_field.hpp): each grid cube split into the six
// tetrahedra around its main diagonal (Kuhn's triangulation, whose faces match between
// neighbouring cubes), one vertex per crossed tetrahedron edge shared by every face on it, so the
// mesh is closed and manifold by construction; faces oriented from the tetrahedra's handedness,
// not from vertex positions, so that tiny faces keep a consistent orientation.
#include "dcsgrid/analysis/surface.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include <spdlog/spdlog.h>

#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "parallel_concatenate.hpp"
#include "surface_creases.hpp"
#include "surface_field.hpp"
#include "surface_mesh_point.hpp"

namespace dcsgrid::analysis {
namespace {

using detail::FieldGrid;
using detail::SurfaceEvaluator;
using detail::SurfaceField;
using detail::Vec3;

// Per node, which of its 7 edges cross the surface and the number of its first vertex.
struct CrossedEdges {
  std::vector<std::uint8_t> mask;
  std::vector<std::uint32_t> first;
  std::size_t vertices = 0;
  std::uint32_t vertex(std::size_t node, int direction_mask) const {
    return detail::edge_vertex(mask.data(), first.data(), node, direction_mask);
  }
};

// The vertex numbers are a prefix sum over the nodes in grid order, taken plane by plane in
// parallel from each plane's total (a 10^6-atom assembly's grid has some 10^8 nodes).
CrossedEdges crossed_edges(const FieldGrid& g, const std::vector<float>& f) {
  CrossedEdges e;
  e.mask.assign(g.count(), 0);
  e.first.assign(g.count(), 0);
  std::vector<std::size_t> plane_first(std::size_t(g.n[2]) + 1, 0);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t k = 0; k < g.n[2]; ++k) {
    std::size_t plane_total = 0;
    for (std::int64_t j = 0; j < g.n[1]; ++j)
      for (std::int64_t i = 0; i < g.n[0]; ++i) {
        const std::size_t n = g.at(i, j, k);
        const std::uint8_t m = detail::crossed_mask(g, f.data(), i, j, k);
        e.mask[n] = m;
        plane_total += std::size_t(std::popcount(m));
      }
    plane_first[std::size_t(k) + 1] = plane_total;
  }
  for (std::size_t k = 0; k < std::size_t(g.n[2]); ++k) plane_first[k + 1] += plane_first[k];
  e.vertices = plane_first.back();
  if (e.vertices > std::numeric_limits<std::uint32_t>::max())
    throw Error("the surface has more than 2^32 vertices: raise --mesh-spacing");
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t k = 0; k < g.n[2]; ++k) {
    std::size_t next = plane_first[std::size_t(k)];
    for (std::size_t n = g.at(0, 0, k), end = n + std::size_t(g.n[0]) * std::size_t(g.n[1]); n < end; ++n) {
      e.first[n] = std::uint32_t(next);
      next += std::size_t(std::popcount(e.mask[n]));
    }
  }
  return e;
}

// edge_root (surface_mesh_point.hpp) with the evaluator's exact field.
double edge_root(const SurfaceEvaluator& ev, const SurfaceEvaluator::Local& local, const Vec3& a,
                 const Vec3& b, float fa, float fb, SurfaceEvaluator::Sphere& sphere) {
  return detail::edge_root([&](const Vec3& x, SurfaceEvaluator::Sphere& at) { return ev.value(x, local, &at); }, a, b,
                           fa, fb, sphere);
}

// The SES's grid values come from boundary samples, a little inside where the exact field is
// just outside: nodes this close to zero take the exact value, so that the grid's signs (the
// mesh's topology) and the vertices' places agree.
void refine_near_zero(const SurfaceEvaluator& ev, SurfaceField& field) {
  const float close = float(0.25 * field.grid.h);
#pragma omp parallel num_threads(team_size())
  {
    SurfaceEvaluator::Local local;
    const FieldGrid& g = field.grid;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t k = 0; k < g.n[2]; ++k)
      for (std::size_t n = g.at(0, 0, k), end = g.at(0, 0, k + 1); n < end; ++n)
        if (std::abs(field.value[n]) < close) {
          ev.gather(n, local);
          ev.set_edge(n, n, local);
          const std::array<std::int64_t, 3> node = g.ijk(n);
          field.value[n] = float(ev.value(g.position(node[0], node[1], node[2]), local));
        }
  }
}

void place_vertices(const SurfaceEvaluator& ev, const SurfaceField& field, const CrossedEdges& edges,
                    TriangleMesh& mesh) {
  const FieldGrid& g = field.grid;
  mesh.vertices.resize(edges.vertices);
  mesh.normals.resize(edges.vertices);
  mesh.atom.resize(edges.vertices);
#pragma omp parallel num_threads(team_size())
  {
    SurfaceEvaluator::Local local;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t k = 0; k < g.n[2]; ++k)
      for (std::int64_t j = 0; j < g.n[1]; ++j)
        for (std::int64_t i = 0; i < g.n[0]; ++i) {
          const std::size_t n = g.at(i, j, k);
          if (edges.mask[n]) ev.gather(n, local);
          for (int d = 1; d <= detail::kDirections; ++d) {
            if (!(edges.mask[n] & (1u << (d - 1)))) continue;
            const std::size_t m = n + detail::node_step(g, d);
            const Vec3 a = g.position(i, j, k);
            const Vec3 b = g.position(i + (d & 1), j + (d >> 1 & 1), k + (d >> 2 & 1));
            ev.set_edge(n, m, local);
            SurfaceEvaluator::Sphere sphere;
            const double t = edge_root(ev, local, a, b, field.value[n], field.value[m], sphere);
            const Vec3 x = detail::along(a, b, t);
            const std::uint32_t v = edges.vertex(n, d);
            mesh.vertices[v] = {float(x[0]), float(x[1]), float(x[2])};
            ev.describe(x, local, sphere, mesh.normals[v], mesh.atom[v]);
          }
        }
  }
}

void build_faces(const SurfaceField& field, const CrossedEdges& edges, TriangleMesh& mesh) {
  const FieldGrid& g = field.grid;
  std::vector<std::vector<std::array<std::uint32_t, 3>>> per_plane(std::size_t(g.n[2]));
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
  for (std::int64_t k = 0; k < g.n[2] - 1; ++k)
    for (std::int64_t j = 0; j < g.n[1] - 1; ++j)
      for (std::int64_t i = 0; i < g.n[0] - 1; ++i)
        detail::cube_faces(g, field.value.data(), edges.mask.data(), edges.first.data(), g.at(i, j, k),
                           [&](std::uint32_t a, std::uint32_t b, std::uint32_t c) {
                             per_plane[std::size_t(k)].push_back({a, b, c});
                           });
  detail::concatenate_in_parallel(per_plane, mesh.faces);
}

void check(const AtomSet& atoms, const SurfaceOptions& o) {
  if (atoms.empty()) throw Error("no atoms to make a surface of");
  if (!atoms.has_radii())
    throw Error("the atoms have no radii: a surface needs them (a PQR file, or a PDB/mmCIF file with a "
                "force-field table, gives them)");
  for (std::size_t a = 0; a < atoms.size(); ++a)
    if (!(atoms.r[a] >= 0) || !std::isfinite(atoms.r[a]))
      throw Error("atom " + std::to_string(a + 1) + " has radius " + std::to_string(atoms.r[a]) +
                  ": a surface needs radii of 0 Å or more");
  if (!(o.probe_radius >= 0) || !std::isfinite(o.probe_radius))
    throw Error("the probe radius must be 0 Å or more, not " + std::to_string(o.probe_radius));
  if (!(o.spacing > 0) || !std::isfinite(o.spacing))
    throw Error("the mesh spacing must be above 0 Å, not " + std::to_string(o.spacing));
}

double triangle_area(const TriangleMesh& m, const std::array<std::uint32_t, 3>& f) {
  Vec3 u, v;
  for (int d = 0; d < 3; ++d) {
    u[d] = double(m.vertices[f[1]][d]) - m.vertices[f[0]][d];
    v[d] = double(m.vertices[f[2]][d]) - m.vertices[f[0]][d];
  }
  const double cx = u[1] * v[2] - u[2] * v[1], cy = u[2] * v[0] - u[0] * v[2], cz = u[0] * v[1] - u[1] * v[0];
  return 0.5 * std::sqrt(cx * cx + cy * cy + cz * cz);
}

}  // namespace

std::string surface_kind_name(SurfaceKind kind) { return kind == SurfaceKind::ses ? "ses" : "sas"; }

SurfaceKind parse_surface_kind(const std::string& name) {
  for (const SurfaceKind kind : {SurfaceKind::ses, SurfaceKind::sas})
    if (name == surface_kind_name(kind)) return kind;
  throw Error("surface kind '" + name + "': use ses (solvent-excluded) or sas (solvent-accessible)");
}

TriangleMesh molecular_surface(const AtomSet& atoms, const SurfaceOptions& options, const std::string& device) {
  check(atoms, options);
  LapTimer timer;
  if (engine::use_gpu(device)) {
#ifdef DCSGRID_HAVE_CUDA
    SurfaceField field;  // the grid alone: the creases need no values
    field.grid = detail::field_grid(atoms, options);
    std::size_t samples = 0;
    std::vector<engine::StageTime> stages;
    TriangleMesh mesh = detail::surface_mesh_cuda(atoms, options, field.grid, samples, stages);
    for (const engine::StageTime& s : stages) spdlog::debug("surface: {} (GPU) {:.3f} s", s.stage, s.seconds);
    spdlog::debug("surface: fields and mesh on the GPU {:.3f} s", timer.lap());
    if (samples == 0) {
      detail::add_creases(SurfaceEvaluator(atoms, options, field), options.spacing, mesh);
      spdlog::debug("surface: creases {:.3f} s", timer.lap());
    }
    return mesh;
#endif
  }
  SurfaceField field = detail::surface_field(atoms, options, "cpu");
  spdlog::debug("surface: field {:.3f} s", timer.lap());
  const SurfaceEvaluator evaluator(atoms, options, field);
  spdlog::debug("surface: neighbour lists {:.3f} s", timer.lap());
  if (!field.samples.empty()) refine_near_zero(evaluator, field);
  spdlog::debug("surface: exact values near zero {:.3f} s", timer.lap());
  const CrossedEdges edges = crossed_edges(field.grid, field.value);
  spdlog::debug("surface: crossed edges {:.3f} s", timer.lap());
  TriangleMesh mesh;
  place_vertices(evaluator, field, edges, mesh);
  spdlog::debug("surface: vertices {:.3f} s", timer.lap());
  build_faces(field, edges, mesh);
  spdlog::debug("surface: faces {:.3f} s", timer.lap());
  if (evaluator.union_of_spheres()) {
    detail::add_creases(evaluator, options.spacing, mesh);
    spdlog::debug("surface: creases {:.3f} s", timer.lap());
  }
  return mesh;
}

namespace {

// Each face's area, the faces in parallel (each thread the first to touch its part: a 10^6-atom
// mesh has 7·10^7 faces); callers sum them in face order, so that the sums are the same for any
// number of threads.
std::unique_ptr<double[]> face_areas(const TriangleMesh& mesh) {
  std::unique_ptr<double[]> area(new double[mesh.faces.size()]);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t f = 0; f < std::int64_t(mesh.faces.size()); ++f) area[std::size_t(f)] = triangle_area(mesh, mesh.faces[std::size_t(f)]);
  return area;
}

}  // namespace

SurfaceAreas surface_areas(const TriangleMesh& mesh) {
  const std::unique_ptr<double[]> faces = face_areas(mesh);
  SurfaceAreas areas;
  areas.vertex.assign(mesh.vertices.size(), 0.0);
  for (std::size_t f = 0; f < mesh.faces.size(); ++f) {
    areas.total += faces[f];
    const double third = faces[f] / 3;
    for (const std::uint32_t v : mesh.faces[f]) areas.vertex[v] += third;
  }
  return areas;
}

double mesh_area(const TriangleMesh& mesh) {
  const std::unique_ptr<double[]> faces = face_areas(mesh);
  double total = 0;
  for (std::size_t f = 0; f < mesh.faces.size(); ++f) total += faces[f];
  return total;
}

MeshTopology mesh_topology(const TriangleMesh& mesh) {
  // Per undirected edge: how often it is traversed low → high and high → low.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::array<int, 2>> uses;
  for (const auto& f : mesh.faces)
    for (int e = 0; e < 3; ++e) {
      const std::uint32_t a = f[e], b = f[(e + 1) % 3];
      ++uses[{std::min(a, b), std::max(a, b)}][a < b ? 0 : 1];
    }
  MeshTopology t;
  for (const auto& [edge, count] : uses) {
    const int total = count[0] + count[1];
    if (total == 1) ++t.boundary_edges;
    else if (total > 2) ++t.nonmanifold_edges;
    else if (count[0] != 1) ++t.misoriented_edges;
  }
  t.euler_characteristic =
      (long long)mesh.vertices.size() - (long long)uses.size() + (long long)mesh.faces.size();
  return t;
}

}  // namespace dcsgrid::analysis
