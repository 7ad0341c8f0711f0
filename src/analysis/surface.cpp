// Marching tetrahedra over the surface field (surface_field.hpp): each grid cube split into the six
// tetrahedra around its main diagonal (Kuhn's triangulation, whose faces match between
// neighbouring cubes), one vertex per crossed tetrahedron edge shared by every face on it, so the
// mesh is closed and manifold by construction; faces oriented from the tetrahedra's handedness,
// not from vertex positions, so that tiny faces keep a consistent orientation.
#include "dcsgrid/analysis/surface.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>

#include <spdlog/spdlog.h>

#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "surface_creases.hpp"
#include "surface_field.hpp"

namespace dcsgrid::analysis {
namespace {

using detail::FieldGrid;
using detail::SurfaceEvaluator;
using detail::SurfaceField;
using detail::Vec3;

// Edge directions as bit masks (x 1, y 2, z 4): every edge of Kuhn's tetrahedra runs from a node
// to the node at one of these offsets.
constexpr int kDirections = 7;
std::size_t offset(const FieldGrid& g, int mask) {
  return (mask & 1 ? 1 : 0) + (mask & 2 ? std::size_t(g.n[0]) : 0) +
         (mask & 4 ? std::size_t(g.n[0]) * g.n[1] : 0);
}

bool inside(float v) { return v < 0; }

// Per node, which of its 7 edges cross the surface and the number of its first vertex.
struct CrossedEdges {
  std::vector<std::uint8_t> mask;
  std::vector<std::uint32_t> first;
  std::size_t vertices = 0;
  std::uint32_t vertex(std::size_t node, int direction_mask) const {
    const unsigned below = mask[node] & ((1u << (direction_mask - 1)) - 1);
    return first[node] + std::uint32_t(std::popcount(below));
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
        std::uint8_t m = 0;
        for (int d = 1; d <= kDirections; ++d) {
          if ((d & 1 && i + 1 >= g.n[0]) || (d & 2 && j + 1 >= g.n[1]) || (d & 4 && k + 1 >= g.n[2])) continue;
          if (inside(f[n]) != inside(f[n + offset(g, d)])) m |= std::uint8_t(1u << (d - 1));
        }
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

// Where the segment a + t (b − a), t in (t0, t1), crosses the sphere's surface: the crossing
// nearest t, or NaN where there is none.
double sphere_crossing(const Vec3& a, const Vec3& b, const SurfaceEvaluator::Sphere& sphere, double t0,
                       double t1, double t) {
  if (sphere.radius < 0) return std::numeric_limits<double>::quiet_NaN();
  Vec3 u, w;  // |w + s u|² = radius²
  for (int d = 0; d < 3; ++d) u[d] = b[d] - a[d], w[d] = a[d] - sphere.centre[d];
  const double uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2], uw = u[0] * w[0] + u[1] * w[1] + u[2] * w[2];
  const double ww = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
  const double disc = uw * uw - uu * (ww - sphere.radius * sphere.radius);
  double best = std::numeric_limits<double>::quiet_NaN();
  if (disc < 0 || uu == 0) return best;
  for (const double root : {(-uw - std::sqrt(disc)) / uu, (-uw + std::sqrt(disc)) / uu})
    if (root > t0 && root < t1 && !(std::abs(root - t) >= std::abs(best - t))) best = root;
  return best;
}

// Where the exact field is zero on the edge from node a (grid value fa) to node b (fb, of the
// other sign): from the grid's linear estimate, each step onto the surface of the sphere that
// gives the field at the last point (the field is that sphere's distance nearby, so one or two
// steps find the root), else by regula falsi (Illinois) within the bracket, the nodes' grid values
// standing for their exact ones (exact near zero: refine_near_zero). Where the exact field keeps
// one sign along the edge, the grid's linear estimate; where it jumps over zero (an exposure
// changes), the last step. Kept off the nodes, so that no two vertices coincide. sphere: the one
// giving the field at the vertex.
double edge_root(const SurfaceEvaluator& ev, const SurfaceEvaluator::Local& local, const Vec3& a,
                 const Vec3& b, float fa, float fb, SurfaceEvaluator::Sphere& sphere) {
  const auto at = [&](double t) { return Vec3{a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])}; };
  double t0 = 0, t1 = 1, g0 = fa, g1 = fb;
  const double linear = g0 / (g0 - g1);
  double t = linear;
  int side = 0;
  std::array<bool, 2> seen{};  // values of a's sign, of b's sign
  for (int iteration = 0; iteration < 9; ++iteration) {
    const double gt = ev.value(at(t), local, &sphere);
    if (std::abs(gt) < 1e-5) return std::clamp(t, 1e-4, 1 - 1e-4);
    if ((gt < 0) == (g0 < 0)) {
      t0 = t, g0 = gt;
      if (side == -1) g1 /= 2;
      side = -1;
    } else {
      t1 = t, g1 = gt;
      if (side == 1) g0 /= 2;
      side = 1;
    }
    seen[side == 1] = true;
    const double crossing = sphere_crossing(a, b, sphere, t0, t1, t);
    t = std::isnan(crossing) ? (t0 * g1 - t1 * g0) / (g1 - g0) : crossing;
  }
  if (!(seen[0] && seen[1])) t = linear;
  ev.value(at(t), local, &sphere);
  return std::clamp(t, 1e-4, 1 - 1e-4);
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
          const std::size_t plane = std::size_t(g.n[0]) * g.n[1];
          field.value[n] = float(ev.value(g.position(std::int64_t(n % g.n[0]), std::int64_t(n / g.n[0] % g.n[1]),
                                                     std::int64_t(n / plane)), local));
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
          for (int d = 1; d <= kDirections; ++d) {
            if (!(edges.mask[n] & (1u << (d - 1)))) continue;
            const std::size_t m = n + offset(g, d);
            const Vec3 a = g.position(i, j, k);
            const Vec3 b = g.position(i + (d & 1), j + (d >> 1 & 1), k + (d >> 2 & 1));
            ev.set_edge(n, m, local);
            SurfaceEvaluator::Sphere sphere;
            const double t = edge_root(ev, local, a, b, field.value[n], field.value[m], sphere);
            const Vec3 x = {a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])};
            const std::uint32_t v = edges.vertex(n, d);
            mesh.vertices[v] = {float(x[0]), float(x[1]), float(x[2])};
            ev.describe(x, local, sphere, mesh.normals[v], mesh.atom[v]);
          }
        }
  }
}

// Kuhn's six tetrahedra of a cube: corners as offset masks, 0 → axis a → axes a and b → 7, one per
// order (a, b, c) of the axes; odd orders are left-handed.
struct Tetrahedron {
  std::array<int, 4> corner;
  bool right_handed;
};
constexpr std::array<Tetrahedron, 6> kTetrahedra = {{{{0, 1, 3, 7}, true},
                                                     {{0, 1, 5, 7}, false},
                                                     {{0, 2, 3, 7}, false},
                                                     {{0, 2, 6, 7}, true},
                                                     {{0, 4, 5, 7}, true},
                                                     {{0, 4, 6, 7}, false}}};

// Even permutations of (0 1 2 3) starting with each corner: the lone corner's triangle.
constexpr std::array<std::array<int, 3>, 4> kOthers = {{{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}}};

bool even_permutation(const std::array<int, 4>& p) {
  int inversions = 0;
  for (int x = 0; x < 4; ++x)
    for (int y = x + 1; y < 4; ++y) inversions += p[x] > p[y];
  return inversions % 2 == 0;
}

// The faces of one tetrahedron (corner offsets c, node numbers of the cube's corner 0 = base).
void tetrahedron_faces(const FieldGrid& g, const std::vector<float>& f, const CrossedEdges& edges,
                       std::size_t base, const Tetrahedron& tet,
                       std::vector<std::array<std::uint32_t, 3>>& out) {
  std::array<bool, 4> in;
  int count = 0;
  for (int c = 0; c < 4; ++c) count += in[c] = inside(f[base + offset(g, tet.corner[c])]);
  if (count == 0 || count == 4) return;
  // The vertex on the edge between corners x and y: corner masks nest, so the lower one is x & y.
  const auto vertex = [&](int x, int y) {
    const int lo = tet.corner[x] & tet.corner[y], hi = tet.corner[x] | tet.corner[y];
    return edges.vertex(base + offset(g, lo), hi ^ lo);
  };
  if (count == 1 || count == 3) {
    const int lone = int(std::find(in.begin(), in.end(), count == 1) - in.begin());
    const auto& o = kOthers[std::size_t(lone)];
    std::array<std::uint32_t, 3> face = {vertex(lone, o[0]), vertex(lone, o[1]), vertex(lone, o[2])};
    // Right-handed with the lone corner inside: the face's normal points away from it.
    if (tet.right_handed != (count == 1)) std::swap(face[1], face[2]);
    out.push_back(face);
    return;
  }
  std::array<int, 4> order;  // inside a, b then outside c, d
  int front = 0, back = 2;
  for (int c = 0; c < 4; ++c) order[std::size_t(in[c] ? front++ : back++)] = c;
  const auto [a, b, c, d] = order;
  // The quad ac, ad, bd, bc faces outwards when (a b c d) has the tetrahedron's handedness.
  std::array<std::uint32_t, 4> quad = {vertex(a, c), vertex(a, d), vertex(b, d), vertex(b, c)};
  if (even_permutation(order) != tet.right_handed) std::swap(quad[1], quad[3]);
  out.push_back({quad[0], quad[1], quad[2]});
  out.push_back({quad[0], quad[2], quad[3]});
}

void build_faces(const SurfaceField& field, const CrossedEdges& edges, TriangleMesh& mesh) {
  const FieldGrid& g = field.grid;
  std::vector<std::vector<std::array<std::uint32_t, 3>>> per_plane(std::size_t(g.n[2]));
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
  for (std::int64_t k = 0; k < g.n[2] - 1; ++k)
    for (std::int64_t j = 0; j < g.n[1] - 1; ++j)
      for (std::int64_t i = 0; i < g.n[0] - 1; ++i) {
        const std::size_t base = g.at(i, j, k);
        bool mixed = false;  // most cubes lie wholly inside or outside
        for (int c = 1; c < 8 && !mixed; ++c) mixed = inside(field.value[base]) != inside(field.value[base + offset(g, c)]);
        if (!mixed) continue;
        for (const Tetrahedron& tet : kTetrahedra)
          tetrahedron_faces(g, field.value, edges, base, tet, per_plane[std::size_t(k)]);
      }
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

TriangleMesh molecular_surface(const AtomSet& atoms, const SurfaceOptions& options) {
  check(atoms, options);
  LapTimer timer;
  SurfaceField field = detail::surface_field(atoms, options);
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

// Each face's area, the faces in parallel; callers sum them in face order, so that the sums are
// the same for any number of threads.
std::vector<double> face_areas(const TriangleMesh& mesh) {
  std::vector<double> area(mesh.faces.size());
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t f = 0; f < std::int64_t(area.size()); ++f) area[std::size_t(f)] = triangle_area(mesh, mesh.faces[std::size_t(f)]);
  return area;
}

}  // namespace

std::vector<double> vertex_areas(const TriangleMesh& mesh) {
  const std::vector<double> faces = face_areas(mesh);
  std::vector<double> area(mesh.vertices.size(), 0.0);
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const double third = faces[f] / 3;
    for (const std::uint32_t v : mesh.faces[f]) area[v] += third;
  }
  return area;
}

double mesh_area(const TriangleMesh& mesh) {
  double total = 0;
  for (const double a : face_areas(mesh)) total += a;
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
