// The per-node and per-edge steps of marching tetrahedra over the surface field (surface.cpp),
// shared by the CPU and the device (surface_mesh.cu) so that both make the same mesh: which edges
// a node's vertices lie on, their numbers, the root of the exact field along an edge, and a cube's
// faces. Private to src/analysis.
#pragma once
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "dcsgrid/core/scalar_math.hpp"  // DCSGRID_HD
#include "surface_field_point.hpp"

namespace dcsgrid::analysis::detail {

// Edge directions as bit masks (x 1, y 2, z 4): every edge of Kuhn's tetrahedra runs from a node
// to the node at one of these offsets.
inline constexpr int kDirections = 7;
DCSGRID_HD std::size_t node_step(const FieldGrid& g, int mask) {
  return (mask & 1 ? 1 : 0) + (mask & 2 ? std::size_t(g.n[0]) : 0) +
         (mask & 4 ? std::size_t(g.n[0]) * std::size_t(g.n[1]) : 0);
}

DCSGRID_HD bool inside(float v) { return v < 0; }

// Which of node (i, j, k)'s 7 edges cross the surface: bit d − 1 for direction d.
DCSGRID_HD std::uint8_t crossed_mask(const FieldGrid& g, const float* f, std::int64_t i, std::int64_t j, std::int64_t k) {
  const std::size_t n = g.at(i, j, k);
  std::uint8_t m = 0;
  for (int d = 1; d <= kDirections; ++d) {
    if ((d & 1 && i + 1 >= g.n[0]) || (d & 2 && j + 1 >= g.n[1]) || (d & 4 && k + 1 >= g.n[2])) continue;
    if (inside(f[n]) != inside(f[n + node_step(g, d)])) m |= std::uint8_t(1u << (d - 1));
  }
  return m;
}

DCSGRID_HD int bit_count(unsigned x) {
  int c = 0;
  for (; x; x &= x - 1) ++c;
  return c;
}

// The number of the vertex on node's edge in direction d: the node's first, plus its crossed
// edges of lower directions.
DCSGRID_HD std::uint32_t edge_vertex(const std::uint8_t* mask, const std::uint32_t* first, std::size_t node, int d) {
  return first[node] + std::uint32_t(bit_count(mask[node] & ((1u << (d - 1)) - 1)));
}

// A sphere whose surface gives the field near a point, where the field is zero on it: an atom's
// SAS sphere (SAS), the atom's own sphere or the probe's at a sample (SES). radius < 0: none (a
// point deep inside). inside_out: the field is positive inside it (a probe's).
struct FieldSphere {
  Vec3 centre{};
  double radius = -1;
  bool inside_out = false;
};

// Where the segment a + t (b − a), t in (t0, t1), crosses the sphere's surface: the crossing
// nearest t, or NaN where there is none.
DCSGRID_HD double sphere_crossing(const Vec3& a, const Vec3& b, const FieldSphere& sphere, double t0, double t1,
                                  double t) {
  const double none = NAN;
  if (sphere.radius < 0) return none;
  Vec3 u, w;  // |w + s u|² = radius²
  for (int d = 0; d < 3; ++d) u[d] = b[d] - a[d], w[d] = a[d] - sphere.centre[d];
  const double uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2], uw = u[0] * w[0] + u[1] * w[1] + u[2] * w[2];
  const double ww = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
  const double disc = uw * uw - uu * (ww - sphere.radius * sphere.radius);
  double best = none;
  if (disc < 0 || uu == 0) return best;
  const double roots[2] = {(-uw - sqrt(disc)) / uu, (-uw + sqrt(disc)) / uu};
  for (const double root : roots)
    if (root > t0 && root < t1 && !(fabs(root - t) >= fabs(best - t))) best = root;
  return best;
}

DCSGRID_HD Vec3 along(const Vec3& a, const Vec3& b, double t) {
  return {a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])};
}

// Where the exact field is zero on the edge from node a (grid value fa) to node b (fb, of the
// other sign): from the grid's linear estimate, each step onto the surface of the sphere that
// gives the field at the last point (the field is that sphere's distance nearby, so one or two
// steps find the root), else by regula falsi (Illinois) within the bracket, the nodes' grid values
// standing for their exact ones (exact near zero: refine_near_zero). Where the exact field keeps
// one sign along the edge, the grid's linear estimate; where it jumps over zero (an exposure
// changes), the last step. Kept off the nodes, so that no two vertices coincide.
// value(x, sphere): the exact field at x and the sphere that gives it there; sphere receives the
// one at the vertex.
template <typename Value>
DCSGRID_HD double edge_root(const Value& value, const Vec3& a, const Vec3& b, float fa, float fb, FieldSphere& sphere) {
  const auto clamp = [](double t) { return t < 1e-4 ? 1e-4 : t > 1 - 1e-4 ? 1 - 1e-4 : t; };
  double t0 = 0, t1 = 1, g0 = fa, g1 = fb;
  const double linear = g0 / (g0 - g1);
  double t = linear;
  int side = 0;
  bool seen[2] = {false, false};  // values of a's sign, of b's sign
  for (int iteration = 0; iteration < 9; ++iteration) {
    const double gt = value(along(a, b, t), sphere);
    if (fabs(gt) < 1e-5) return clamp(t);
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
    t = crossing != crossing ? (t0 * g1 - t1 * g0) / (g1 - g0) : crossing;  // NaN: no crossing
  }
  if (!(seen[0] && seen[1])) t = linear;
  value(along(a, b, t), sphere);
  return clamp(t);
}

// The unit outward normal at x on the surface of sphere (from the nearest atom's centre when there
// is none).
DCSGRID_HD void outward_normal(const Vec3& x, const Vec3& nearest_atom, const FieldSphere& sphere, float normal[3]) {
  Vec3 from = nearest_atom, to = x;
  if (sphere.radius >= 0) {
    from = sphere.centre;
    if (sphere.inside_out) from = x, to = sphere.centre;  // towards the probe
  }
  const double len = point_distance(from, to);
  for (int d = 0; d < 3; ++d) normal[d] = len > 0 ? float((to[d] - from[d]) / len) : (d == 2 ? 1.f : 0.f);
}

// Kuhn's six tetrahedra of a cube: corners as offset masks, 0 → axis a → axes a and b → 7, one per
// order (a, b, c) of the axes; odd orders are left-handed.
struct Tetrahedron {
  int corner[4];
  bool right_handed;
};
DCSGRID_HD Tetrahedron kuhn_tetrahedron(int t) {
  constexpr Tetrahedron all[6] = {{{0, 1, 3, 7}, true},  {{0, 1, 5, 7}, false}, {{0, 2, 3, 7}, false},
                                  {{0, 2, 6, 7}, true},  {{0, 4, 5, 7}, true},  {{0, 4, 6, 7}, false}};
  return all[t];
}

DCSGRID_HD bool even_permutation(const int p[4]) {
  int inversions = 0;
  for (int x = 0; x < 4; ++x)
    for (int y = x + 1; y < 4; ++y) inversions += p[x] > p[y];
  return inversions % 2 == 0;
}

// The faces of the cube whose corner 0 is node `base`, tetrahedron by tetrahedron: emit(a, b, c),
// counter-clockwise seen from outside. Faces are oriented from the tetrahedra's handedness, not
// from vertex positions, so that tiny faces keep a consistent orientation.
template <typename Emit>
DCSGRID_HD void cube_faces(const FieldGrid& g, const float* f, const std::uint8_t* mask, const std::uint32_t* first,
                           std::size_t base, Emit&& emit) {
  bool mixed = false;  // most cubes lie wholly inside or outside
  for (int c = 1; c < 8 && !mixed; ++c) mixed = inside(f[base]) != inside(f[base + node_step(g, c)]);
  if (!mixed) return;
  // Even permutations of (0 1 2 3) starting with each corner: the lone corner's triangle.
  constexpr int others[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
  for (int tt = 0; tt < 6; ++tt) {
    const Tetrahedron tet = kuhn_tetrahedron(tt);
    bool in[4];
    int count = 0;
    for (int c = 0; c < 4; ++c) count += in[c] = inside(f[base + node_step(g, tet.corner[c])]);
    if (count == 0 || count == 4) continue;
    // The vertex on the edge between corners x and y: corner masks nest, so the lower one is x & y.
    const auto vertex = [&](int x, int y) {
      const int lo = tet.corner[x] & tet.corner[y], hi = tet.corner[x] | tet.corner[y];
      return edge_vertex(mask, first, base + node_step(g, lo), hi ^ lo);
    };
    if (count == 1 || count == 3) {
      int lone = 0;
      while (in[lone] != (count == 1)) ++lone;
      const int* o = others[lone];
      std::uint32_t face[3] = {vertex(lone, o[0]), vertex(lone, o[1]), vertex(lone, o[2])};
      // Right-handed with the lone corner inside: the face's normal points away from it.
      if (tet.right_handed != (count == 1)) {
        const std::uint32_t swap = face[1];
        face[1] = face[2], face[2] = swap;
      }
      emit(face[0], face[1], face[2]);
      continue;
    }
    int order[4];  // inside a, b then outside c, d
    int front = 0, back = 2;
    for (int c = 0; c < 4; ++c) order[in[c] ? front++ : back++] = c;
    const int a = order[0], b = order[1], c = order[2], d = order[3];
    // The quad ac, ad, bd, bc faces outwards when (a b c d) has the tetrahedron's handedness.
    std::uint32_t quad[4] = {vertex(a, c), vertex(a, d), vertex(b, d), vertex(b, c)};
    if (even_permutation(order) != tet.right_handed) {
      const std::uint32_t swap = quad[1];
      quad[1] = quad[3], quad[3] = swap;
    }
    emit(quad[0], quad[1], quad[2]);
    emit(quad[0], quad[2], quad[3]);
  }
}

// The faces cube_faces gives the cube at `base` (counting only).
DCSGRID_HD std::uint32_t cube_face_count(const FieldGrid& g, const float* f, const std::uint8_t* mask,
                                         const std::uint32_t* first, std::size_t base) {
  std::uint32_t count = 0;
  cube_faces(g, f, mask, first, base, [&](std::uint32_t, std::uint32_t, std::uint32_t) { ++count; });
  return count;
}

}  // namespace dcsgrid::analysis::detail
