// Topology dispatch by extension and frame coordinates into an AtomSet.
#include <algorithm>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/topology/topology.hpp"

namespace dcsgrid::io {
namespace {

// The extension before any ".gz" (load_text gunzips by content).
std::string lower_extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  if (ext == ".gz" || ext == ".GZ") ext = path.stem().extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

}  // namespace

bool is_topology_path(const std::filesystem::path& path) {
  const std::string ext = lower_extension(path);
  return ext == ".psf" || ext == ".prmtop" || ext == ".parm7" || ext == ".top";
}

Topology read_topology(const std::filesystem::path& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".psf") return read_psf(path);
  if (ext == ".prmtop" || ext == ".parm7" || ext == ".top") return read_prmtop(path);
  throw InputError(path.string(), 0,
                   "unknown topology format '" + ext + "' (known: .psf .prmtop .parm7 .top)");
}

void set_coordinates(AtomSet& atoms, const float* xyz) {
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    atoms.x[i] = xyz[3 * i];
    atoms.y[i] = xyz[3 * i + 1];
    atoms.z[i] = xyz[3 * i + 2];
  }
}

}  // namespace dcsgrid::io
