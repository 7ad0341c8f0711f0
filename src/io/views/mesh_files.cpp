#include "dcsgrid/io/views/mesh_files.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"

namespace dcsgrid::io {
namespace {

static_assert(std::endian::native == std::endian::little, "the mesh writers write native little-endian data");

template <class T>
void append(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void check(const std::filesystem::path& path, const TriangleMesh& mesh, const VertexColours& colours) {
  if (mesh.normals.size() != mesh.vertices.size() || colours.size() != mesh.vertices.size() ||
      (!mesh.value.empty() && mesh.value.size() != mesh.vertices.size()))
    throw Error(path.string() + ": the mesh needs a normal, a colour and (if any) a value per vertex");
}

void pad_to_4(std::string& s, char with) {
  while (s.size() % 4) s.push_back(with);
}

}  // namespace

void write_ply(const std::filesystem::path& path, const TriangleMesh& mesh, const VertexColours& colours) {
  check(path, mesh, colours);
  std::string out = "ply\nformat binary_little_endian 1.0\ncomment dcsgrid surface; potential in kT/e\n"
                    "element vertex " + std::to_string(mesh.vertices.size()) +
                    "\nproperty float x\nproperty float y\nproperty float z\nproperty float nx\n"
                    "property float ny\nproperty float nz\nproperty float potential\n"
                    "property uchar red\nproperty uchar green\nproperty uchar blue\nelement face " +
                    std::to_string(mesh.faces.size()) + "\nproperty list uchar uint vertex_indices\nend_header\n";
  out.reserve(out.size() + mesh.vertices.size() * 31 + mesh.faces.size() * 13);
  for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
    for (const float c : mesh.vertices[v]) append(out, c);
    for (const float c : mesh.normals[v]) append(out, c);
    append(out, mesh.value.empty() ? std::numeric_limits<float>::quiet_NaN() : mesh.value[v]);
    for (const std::uint8_t c : colours[v]) append(out, c);
  }
  for (const auto& f : mesh.faces) {
    append(out, std::uint8_t(3));
    for (const std::uint32_t i : f) append(out, i);
  }
  write_file_atomically(path, out);
}

void write_glb(const std::filesystem::path& path, const TriangleMesh& mesh, const VertexColours& colours) {
  check(path, mesh, colours);
  const std::size_t n = mesh.vertices.size();
  // One buffer: positions, normals, colours (4 bytes a vertex: RGB and a pad, the stride glTF
  // requires to be a multiple of 4), indices.
  std::string bin;
  for (const auto& p : mesh.vertices) for (const float c : p) append(bin, c);
  const std::size_t normals_at = bin.size();
  for (const auto& p : mesh.normals) for (const float c : p) append(bin, c);
  const std::size_t colours_at = bin.size();
  for (const auto& c : colours) bin.append({char(c[0]), char(c[1]), char(c[2]), char(255)});
  const std::size_t indices_at = bin.size();
  for (const auto& f : mesh.faces) for (const std::uint32_t i : f) append(bin, i);
  const std::size_t indices_bytes = bin.size() - indices_at;
  pad_to_4(bin, '\0');
  std::array<float, 3> lo{}, hi{};
  if (n) lo = hi = mesh.vertices[0];
  for (const auto& p : mesh.vertices)
    for (int d = 0; d < 3; ++d) lo[d] = std::min(lo[d], p[d]), hi[d] = std::max(hi[d], p[d]);
  using nlohmann::json;
  const auto view = [&](std::size_t offset, std::size_t length, int target, int stride) {
    json v = {{"buffer", 0}, {"byteOffset", offset}, {"byteLength", length}, {"target", target}};
    if (stride) v["byteStride"] = stride;
    return v;
  };
  json gltf = {
      {"asset", {{"version", "2.0"}, {"generator", "dcsgrid surface"}}},
      {"scene", 0},
      {"scenes", json::array({{{"nodes", {0}}}})},
      {"nodes", json::array({{{"mesh", 0}}})},
      {"meshes", json::array({{{"primitives", json::array({{{"attributes", {{"POSITION", 0}, {"NORMAL", 1}, {"COLOR_0", 2}}},
                                                             {"indices", 3}, {"mode", 4}}})}}})},
      {"buffers", json::array({{{"byteLength", bin.size()}}})},
      {"bufferViews", json::array({view(0, normals_at, 34962, 12), view(normals_at, colours_at - normals_at, 34962, 12),
                                   view(colours_at, indices_at - colours_at, 34962, 4),
                                   view(indices_at, indices_bytes, 34963, 0)})},
      {"accessors", json::array({{{"bufferView", 0}, {"componentType", 5126}, {"count", n}, {"type", "VEC3"},
                                  {"min", lo}, {"max", hi}},
                                 {{"bufferView", 1}, {"componentType", 5126}, {"count", n}, {"type", "VEC3"}},
                                 {{"bufferView", 2}, {"componentType", 5121}, {"normalized", true}, {"count", n},
                                  {"type", "VEC3"}},
                                 {{"bufferView", 3}, {"componentType", 5125}, {"count", 3 * mesh.faces.size()},
                                  {"type", "SCALAR"}}})}};
  std::string text = gltf.dump();
  pad_to_4(text, ' ');
  std::string out;
  append(out, std::uint32_t(0x46546C67));  // "glTF"
  append(out, std::uint32_t(2));
  append(out, std::uint32_t(12 + 8 + text.size() + 8 + bin.size()));
  append(out, std::uint32_t(text.size()));
  append(out, std::uint32_t(0x4E4F534A));  // "JSON"
  out += text;
  append(out, std::uint32_t(bin.size()));
  append(out, std::uint32_t(0x004E4942));  // "BIN"
  out += bin;
  write_file_atomically(path, out);
}

}  // namespace dcsgrid::io
