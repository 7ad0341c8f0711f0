// Surface meshes as files, each written under a temporary name and renamed when complete
// (AtomicFile): PLY (binary little-endian: x y z nx ny nz, float potential, uchar red green blue;
// faces as uchar-counted uint lists) and glTF 2.0 binary (.glb: POSITION, NORMAL, COLOR_0 as
// normalized unsigned bytes, uint32 indices; one mesh, one node). colours: one per vertex.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "dcsgrid/core/mesh.hpp"

namespace dcsgrid::io {

using VertexColours = std::vector<std::array<std::uint8_t, 3>>;

// The vertex property `potential` is mesh.value (NaN where it is empty). Throws Error naming the file.
void write_ply(const std::filesystem::path& path, const TriangleMesh& mesh, const VertexColours& colours);
void write_glb(const std::filesystem::path& path, const TriangleMesh& mesh, const VertexColours& colours);

}  // namespace dcsgrid::io
