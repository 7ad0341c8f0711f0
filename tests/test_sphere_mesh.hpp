// Spheres as triangle meshes for the picture tests: a latitude–longitude sphere, faces
// counter-clockwise seen from outside, unit normals pointing out, no values.
#pragma once
#include <cmath>
#include <numbers>

#include "dcsgrid/core/mesh.hpp"

namespace dcsgrid::test {

// Appends a sphere of `rings` latitude bands and `segments` longitudes to mesh.
inline void append_sphere(TriangleMesh& mesh, const std::array<double, 3>& centre, double radius,
                          int rings = 24, int segments = 48) {
  const auto first = std::uint32_t(mesh.vertices.size());
  for (int i = 0; i <= rings; ++i) {
    const double theta = std::numbers::pi * i / rings;  // from +z down
    for (int j = 0; j < segments; ++j) {
      const double phi = 2 * std::numbers::pi * j / segments;
      const std::array<float, 3> n{float(std::sin(theta) * std::cos(phi)),
                                   float(std::sin(theta) * std::sin(phi)), float(std::cos(theta))};
      mesh.normals.push_back(n);
      mesh.vertices.push_back({float(centre[0] + radius * n[0]), float(centre[1] + radius * n[1]),
                               float(centre[2] + radius * n[2])});
    }
  }
  const auto at = [&](int i, int j) { return first + std::uint32_t(i * segments + j % segments); };
  for (int i = 0; i < rings; ++i)
    for (int j = 0; j < segments; ++j) {
      // Seen from outside, going down in theta then east in phi is counter-clockwise.
      mesh.faces.push_back({at(i, j), at(i + 1, j), at(i + 1, j + 1)});
      mesh.faces.push_back({at(i, j), at(i + 1, j + 1), at(i, j + 1)});
    }
}

}  // namespace dcsgrid::test
