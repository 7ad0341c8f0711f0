// TriangleMesh: a surface as vertices, normals and triangles, with a value per vertex.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

namespace dcsgrid {

// Positions in Å; normals of unit length pointing out of the enclosed volume; faces list three
// vertex indices counter-clockwise seen from outside (so a face's winding gives its normal).
// value is empty or holds one number per vertex (the potential there, kT/e); atom is empty or
// holds, per vertex, the index of the atom whose patch the vertex lies on.
struct TriangleMesh {
  std::vector<std::array<float, 3>> vertices;
  std::vector<std::array<float, 3>> normals;
  std::vector<std::array<std::uint32_t, 3>> faces;
  std::vector<float> value;
  std::vector<std::uint32_t> atom;
};

}  // namespace dcsgrid
