// Choosing the map format from the file name.
#include <algorithm>
#include <cctype>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/map_io.hpp"

namespace dcsgrid::io {

MapFormat map_format_from_path(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".h5" || ext == ".hdf5") return MapFormat::hdf5;
  if (ext == ".dx") return MapFormat::dx;
  if (ext == ".ccp4" || ext == ".map" || ext == ".mrc") return MapFormat::ccp4;
  throw Error(path.string() + ": unknown map format '" + ext +
              "'; use .h5 or .hdf5 (HDF5 + XDMF), .dx (OpenDX), .ccp4, .map or .mrc (CCP4/MRC)");
}

void write_map(const std::filesystem::path& path, const GridSpec& grid, const float* data,
               const MapMetadata& meta, const WriteOptions& options) {
  switch (map_format_from_path(path)) {
    case MapFormat::hdf5: return write_hdf5(path, grid, data, meta, options);
    case MapFormat::dx: return write_dx(path, grid, data, meta);
    case MapFormat::ccp4: return write_ccp4(path, grid, data, meta);
  }
}

}  // namespace dcsgrid::io
