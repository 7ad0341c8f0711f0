#include "surface_creases.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::analysis::detail {
namespace {

using Sphere = SurfaceEvaluator::Sphere;
using Face = std::array<std::uint32_t, 3>;

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
// Faces a task rewrites: each block's new faces are kept apart and joined in block order.
constexpr std::size_t kFaceBlock = 8192;

Vec3 operator-(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 operator+(const Vec3& a, const Vec3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
Vec3 operator*(double s, const Vec3& a) { return {s * a[0], s * a[1], s * a[2]}; }
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec3 position(const TriangleMesh& mesh, std::uint32_t v) {
  return {mesh.vertices[v][0], mesh.vertices[v][1], mesh.vertices[v][2]};
}

// The circle where two spheres' surfaces meet; normal: unit, from a's centre towards b's.
struct Circle {
  Vec3 centre{}, normal{};
  double radius = -1;  // < 0: the spheres do not meet
};

Circle meeting_circle(const Sphere& a, const Sphere& b) {
  const Vec3 axis = b.centre - a.centre;
  const double d = norm(axis);
  if (!(d > std::abs(a.radius - b.radius)) || d >= a.radius + b.radius) return {};
  const double along = (d * d + a.radius * a.radius - b.radius * b.radius) / (2 * d);
  const Vec3 normal = (1 / d) * axis;
  return {a.centre + along * normal, normal, std::sqrt(a.radius * a.radius - along * along)};
}

// Where the edge from v0 (on a's sphere, outside b's: so on a's side of the circle's plane) to v1
// crosses the plane, moved within the plane onto the circle: the circle's point nearest the edge
// there. None where the edge does not cross the plane, or the point is farther from the crossing
// than the edge is long (a circle that passes elsewhere).
std::optional<Vec3> crease_point(const Circle& c, const Vec3& v0, const Vec3& v1) {
  const double s0 = dot(v0 - c.centre, c.normal), s1 = dot(v1 - c.centre, c.normal);
  if (c.radius < 0 || !(s0 <= 0 && s1 >= 0 && s1 > s0)) return std::nullopt;
  const Vec3 crossing = v0 + (s0 / (s0 - s1)) * (v1 - v0);
  const Vec3 radial = crossing - c.centre - dot(crossing - c.centre, c.normal) * c.normal;
  const double len = norm(radial);
  if (!(len > 0)) return std::nullopt;
  const Vec3 point = c.centre + (c.radius / len) * radial;
  if (norm(point - crossing) > norm(v1 - v0)) return std::nullopt;
  return point;
}

// The point where three spheres meet (the circle of two with the third) nearest to `near`.
std::optional<Vec3> triple_point(const Circle& ab, const Sphere& c, const Vec3& near) {
  if (ab.radius < 0) return std::nullopt;
  const double height = dot(c.centre - ab.centre, ab.normal);
  const double in_plane2 = c.radius * c.radius - height * height;  // c's circle in ab's plane
  if (!(in_plane2 > 0)) return std::nullopt;
  const Vec3 towards = c.centre - height * ab.normal - ab.centre;
  const double d = norm(towards), rc = std::sqrt(in_plane2);
  if (!(d > std::abs(ab.radius - rc)) || d >= ab.radius + rc) return std::nullopt;
  const double along = (d * d + ab.radius * ab.radius - rc * rc) / (2 * d);
  const Vec3 u = (1 / d) * towards, side = std::sqrt(ab.radius * ab.radius - along * along) * cross(ab.normal, u);
  const Vec3 p = ab.centre + along * u + side, q = ab.centre + along * u - side;
  return norm(p - near) <= norm(q - near) ? p : q;
}

// Far enough from every point of `others` that no two vertices coincide in float positions.
bool apart(const Vec3& x, std::initializer_list<Vec3> others, double gap) {
  for (const Vec3& o : others)
    if (norm(x - o) < gap) return false;
  return true;
}

// The spheres of `atoms` other than those of `on`.
std::vector<Sphere> other_spheres(const SurfaceEvaluator& ev, const std::vector<std::size_t>& atoms,
                                  const std::array<std::uint32_t, 3>& on) {
  std::vector<Sphere> out;
  for (const std::size_t a : atoms)
    if (std::find(on.begin(), on.end(), std::uint32_t(a)) == on.end()) out.push_back(ev.atom_sphere(a));
  return out;
}

// Whether the sphere holds a point of the circle.
bool cuts(const Sphere& s, const Circle& c) {
  const Vec3 to = s.centre - c.centre;
  const double height = dot(to, c.normal), across = norm(to - height * c.normal) - c.radius;
  return height * height + across * across < s.radius * s.radius;
}

// Inside one of the spheres by more than rounding: not on the union's surface.
bool buried(const Vec3& x, const std::vector<Sphere>& spheres) {
  for (const Sphere& s : spheres)
    if (const double inner = s.radius - 1e-6; inner > 0 && dot(x - s.centre, x - s.centre) < inner * inner) return true;
  return false;
}

std::uint64_t edge_key(std::uint32_t a, std::uint32_t b) {
  return std::uint64_t(std::min(a, b)) << 32 | std::max(a, b);
}

// New vertices at the points that have one, in order, each on the spheres of the atoms on(k) gives
// (kNone for none): normal, the mean of theirs; atom, the lowest. Each point's vertex (kNone: none).
template <class OnSpheres>
std::vector<std::uint32_t> append_vertices(const SurfaceEvaluator& ev, const std::vector<std::optional<Vec3>>& point,
                                           OnSpheres on, TriangleMesh& mesh) {
  std::vector<std::uint32_t> vertex(point.size(), kNone);
  std::size_t next = mesh.vertices.size();
  for (std::size_t k = 0; k < point.size(); ++k)
    if (point[k]) vertex[k] = std::uint32_t(next++);
  if (next > kNone) throw Error("the surface has more than 2^32 vertices: raise --mesh-spacing");
  mesh.vertices.resize(next);
  mesh.normals.resize(next);
  mesh.atom.resize(next);
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t k = 0; k < std::int64_t(point.size()); ++k) {
    if (!point[std::size_t(k)]) continue;
    const Vec3& x = *point[std::size_t(k)];
    Vec3 normal{};
    std::uint32_t lowest = kNone;
    for (const std::uint32_t a : on(std::size_t(k)))
      if (a != kNone) {
        const Sphere s = ev.atom_sphere(a);
        normal = normal + (1 / s.radius) * (x - s.centre);
        lowest = std::min(lowest, a);
      }
    const double len = norm(normal);
    const std::uint32_t v = vertex[std::size_t(k)];
    mesh.vertices[v] = {float(x[0]), float(x[1]), float(x[2])};
    mesh.normals[v] = {float(normal[0] / len), float(normal[1] / len), float(normal[2] / len)};
    mesh.atom[v] = lowest;
  }
  return vertex;
}

// The edges whose ends lie on different atoms' spheres (edge_key, ascending: rows by their lower
// vertex) and the vertex each was split at (kNone: not split), appended to the mesh.
struct EdgeSplits {
  std::vector<std::size_t> row;  // per vertex v, the first key whose lower vertex is v or above
  std::vector<std::uint64_t> key;
  std::vector<std::uint32_t> vertex;
  std::uint32_t find(const TriangleMesh& mesh, std::uint32_t a, std::uint32_t b) const {
    if (mesh.atom[a] == mesh.atom[b]) return kNone;
    const std::uint32_t lo = std::min(a, b), hi = std::max(a, b);
    for (std::size_t k = row[lo]; k < row[lo + 1]; ++k)
      if (std::uint32_t(key[k]) == hi) return vertex[k];
    return kNone;
  }
};

EdgeSplits crease_edges(const TriangleMesh& mesh) {
  EdgeSplits s;
  for (const Face& f : mesh.faces)  // each edge once: closed and oriented, it runs low to high once
    for (int e = 0; e < 3; ++e)
      if (const std::uint32_t a = f[e], b = f[(e + 1) % 3]; a < b && mesh.atom[a] != mesh.atom[b])
        s.key.push_back(edge_key(a, b));
  std::sort(s.key.begin(), s.key.end());
  s.row.assign(mesh.vertices.size() + 1, 0);
  for (std::size_t v = 0, k = 0; v <= mesh.vertices.size(); ++v) {
    while (k < s.key.size() && (s.key[k] >> 32) < v) ++k;
    s.row[v] = k;
  }
  return s;
}

// The crease point of each edge (none: not split), a pair of spheres at a time: the spheres that
// may cover a point of their circle are found once a pair.
std::vector<std::optional<Vec3>> crease_points(const SurfaceEvaluator& ev, double gap, const TriangleMesh& mesh,
                                               const std::vector<std::uint64_t>& key) {
  std::vector<std::pair<std::uint64_t, std::size_t>> by_pair(key.size());
  for (std::size_t k = 0; k < key.size(); ++k)
    by_pair[k] = {edge_key(mesh.atom[key[k] >> 32], mesh.atom[std::uint32_t(key[k])]), k};
  std::sort(by_pair.begin(), by_pair.end());
  std::vector<std::size_t> group;  // where each pair's edges start in by_pair
  for (std::size_t k = 0; k < by_pair.size(); ++k)
    if (k == 0 || by_pair[k].first != by_pair[k - 1].first) group.push_back(k);
  group.push_back(by_pair.size());
  std::vector<std::optional<Vec3>> point(key.size());
#pragma omp parallel num_threads(team_size())
  {
    std::vector<std::size_t> near;
#pragma omp for schedule(dynamic, 16)
    for (std::int64_t g = 0; g < std::int64_t(group.size()) - 1; ++g) {
      const std::uint64_t pair = by_pair[group[std::size_t(g)]].first;
      const std::array<std::uint32_t, 3> on = {std::uint32_t(pair >> 32), std::uint32_t(pair), kNone};
      const Circle circle = meeting_circle(ev.atom_sphere(on[0]), ev.atom_sphere(on[1]));
      if (circle.radius < 0) continue;
      ev.spheres_near(circle.centre, circle.radius, near);
      std::vector<Sphere> others = other_spheres(ev, near, on);
      std::erase_if(others, [&](const Sphere& s) { return !cuts(s, circle); });
      for (std::size_t m = group[std::size_t(g)]; m < group[std::size_t(g) + 1]; ++m) {
        const std::size_t k = by_pair[m].second;
        Vec3 va = position(mesh, std::uint32_t(key[k] >> 32)), vb = position(mesh, std::uint32_t(key[k]));
        if (mesh.atom[key[k] >> 32] != on[0]) std::swap(va, vb);  // va on the circle's first sphere
        const std::optional<Vec3> x = crease_point(circle, va, vb);
        if (x && apart(*x, {va, vb}, gap) && !buried(*x, others)) point[k] = x;
      }
    }
  }
  return point;
}

EdgeSplits split_edges(const SurfaceEvaluator& ev, double gap, TriangleMesh& mesh) {
  EdgeSplits s = crease_edges(mesh);
  const std::vector<std::optional<Vec3>> point = crease_points(ev, gap, mesh, s.key);
  s.vertex = append_vertices(ev, point, [&](std::size_t k) {
    return std::array<std::uint32_t, 3>{mesh.atom[s.key[k] >> 32], mesh.atom[std::uint32_t(s.key[k])], kNone};
  }, mesh);
  return s;
}

// Per face whose three edges were split (on three different spheres, then), the vertex where the
// three spheres meet (kNone: none on the surface near the face); faces in ascending order.
struct TriplePoints {
  std::vector<std::size_t> face;
  std::vector<std::uint32_t> vertex;
  std::uint32_t find(std::size_t f) const {
    const auto it = std::lower_bound(face.begin(), face.end(), f);
    return it != face.end() && *it == f ? vertex[std::size_t(it - face.begin())] : kNone;
  }
};

TriplePoints split_corners(const SurfaceEvaluator& ev, double gap, const EdgeSplits& splits, TriangleMesh& mesh) {
  TriplePoints t;
  for (std::size_t f = 0; f < mesh.faces.size(); ++f) {
    const auto [a, b, c] = mesh.faces[f];
    if (splits.find(mesh, a, b) != kNone && splits.find(mesh, b, c) != kNone && splits.find(mesh, c, a) != kNone)
      t.face.push_back(f);
  }
  std::vector<std::optional<Vec3>> point(t.face.size());
#pragma omp parallel num_threads(team_size())
  {
    std::vector<std::size_t> near;
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t k = 0; k < std::int64_t(t.face.size()); ++k) {
      const Face& f = mesh.faces[t.face[std::size_t(k)]];
      const Vec3 p = position(mesh, splits.find(mesh, f[0], f[1])), q = position(mesh, splits.find(mesh, f[1], f[2])),
                 r = position(mesh, splits.find(mesh, f[2], f[0]));
      const Vec3 middle = (1.0 / 3) * (p + q + r);
      const std::array<std::uint32_t, 3> on = {mesh.atom[f[0]], mesh.atom[f[1]], mesh.atom[f[2]]};
      const std::optional<Vec3> x =
          triple_point(meeting_circle(ev.atom_sphere(on[0]), ev.atom_sphere(on[1])), ev.atom_sphere(on[2]), middle);
      if (!x || norm(*x - middle) > std::max({norm(p - q), norm(q - r), norm(r - p)}) || !apart(*x, {p, q, r}, gap))
        continue;
      ev.spheres_near(*x, 0, near);
      if (!buried(*x, other_spheres(ev, near, on))) point[std::size_t(k)] = x;
    }
  }
  t.vertex = append_vertices(ev, point, [&](std::size_t k) {
    const Face& f = mesh.faces[t.face[k]];
    return std::array<std::uint32_t, 3>{mesh.atom[f[0]], mesh.atom[f[1]], mesh.atom[f[2]]};
  }, mesh);
  return t;
}

// The triangles of face (v0 v1 v2) with split vertices s[e] on its edges (v_e, v_e+1) and `corner`
// where three creases meet, in the face's winding: the polygon v0 s0 v1 s1 v2 s2 fanned so that
// the crease segments between split vertices are edges.
void split_face(const TriangleMesh& mesh, const Face& v, const Face& s, std::uint32_t corner, std::vector<Face>& out) {
  const int count = (s[0] != kNone) + (s[1] != kNone) + (s[2] != kNone);
  if (count == 0) return out.push_back(v);
  if (count == 3) {
    for (int e = 0; e < 3; ++e) out.push_back({v[e], s[e], s[(e + 2) % 3]});
    if (corner == kNone) return out.push_back(s);
    for (int e = 0; e < 3; ++e) out.push_back({s[e], s[(e + 1) % 3], corner});
    return;
  }
  if (count == 1) {
    const int e = s[0] != kNone ? 0 : s[1] != kNone ? 1 : 2;
    out.push_back({v[e], s[e], v[(e + 2) % 3]});
    out.push_back({s[e], v[(e + 1) % 3], v[(e + 2) % 3]});
    return;
  }
  const int e = s[0] == kNone ? 1 : s[1] == kNone ? 2 : 0;  // split: (a b) at p, (b c) at q
  const std::uint32_t a = v[e], b = v[(e + 1) % 3], c = v[(e + 2) % 3], p = s[e], q = s[(e + 1) % 3];
  out.push_back({p, b, q});
  // The quad a p q c by its shorter diagonal.
  if (norm(position(mesh, a) - position(mesh, q)) <= norm(position(mesh, p) - position(mesh, c)))
    out.push_back({a, p, q}), out.push_back({a, q, c});
  else
    out.push_back({a, p, c}), out.push_back({p, q, c});
}

}  // namespace

void add_creases(const SurfaceEvaluator& evaluator, double spacing, TriangleMesh& mesh) {
  const double gap = 1e-3 * spacing;
  const EdgeSplits splits = split_edges(evaluator, gap, mesh);
  const TriplePoints corners = split_corners(evaluator, gap, splits, mesh);
  // A split face keeps its place for its first triangle; the others follow the faces, in order.
  const std::size_t blocks = (mesh.faces.size() + kFaceBlock - 1) / kFaceBlock;
  std::vector<std::vector<Face>> added(blocks);
#pragma omp parallel num_threads(team_size())
  {
    std::vector<Face> pieces;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t b = 0; b < std::int64_t(blocks); ++b) {
      const std::size_t end = std::min(mesh.faces.size(), (std::size_t(b) + 1) * kFaceBlock);
      for (std::size_t f = std::size_t(b) * kFaceBlock; f < end; ++f) {
        const Face v = mesh.faces[f];
        const Face s = {splits.find(mesh, v[0], v[1]), splits.find(mesh, v[1], v[2]), splits.find(mesh, v[2], v[0])};
        if (s == Face{kNone, kNone, kNone}) continue;
        pieces.clear();
        split_face(mesh, v, s, corners.find(f), pieces);
        mesh.faces[f] = pieces[0];
        added[std::size_t(b)].insert(added[std::size_t(b)].end(), pieces.begin() + 1, pieces.end());
      }
    }
  }
  for (const auto& block : added) mesh.faces.insert(mesh.faces.end(), block.begin(), block.end());
}

}  // namespace dcsgrid::analysis::detail
