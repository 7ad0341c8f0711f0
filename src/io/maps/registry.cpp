// The map format registry: file names to formats, and writing and reading by format.
#include <algorithm>
#include <string_view>
#include <charconv>

#include "dcsgrid/core/text.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/maps/io.hpp"

namespace dcsgrid::io {

namespace fs = std::filesystem;

namespace {

using Path = std::filesystem::path;

// The whole-grid writers whose own signatures take no options or return no warning.
std::string write_hdf5_map(const Path& path, const GridSpec& grid, const float* data,
                           const MapMetadata& meta, const WriteOptions& options) {
  write_hdf5(path, grid, data, meta, options);
  return {};
}

std::unique_ptr<MapStreamWriter> open_hdf5_stream(const Path& path, const GridSpec& grid,
                                                  const MapMetadata& meta, const WriteOptions& options,
                                                  bool every_rank) {
  return std::make_unique<Hdf5MapWriter>(path, grid, meta, options, every_rank);
}

// The formats, in the order help texts list them; one row each.
const MapFormatInfo kFormats[] = {
    {.name = "HDF5 + XDMF", .extensions = ".h5/.hdf5", .several_maps = true, .compression = true,
     .pymol_opens = false, .chimerax_opens = false, .least_value_bytes = sizeof(float),
     .read = read_hdf5, .write = write_hdf5_map, .open_stream = open_hdf5_stream,
     .sidecar = xdmf_sidecar, .require_replaceable_sidecar = require_replaceable_sidecar},
    {.name = "OpenDX", .extensions = ".dx", .several_maps = false, .compression = false,
     .pymol_opens = true, .chimerax_opens = true, .least_value_bytes = 2,  // a digit and a separator
     .read = [](const Path& path, const MapSelector&) { return read_dx(path); },
     .write = [](const Path& path, const GridSpec& grid, const float* data, const MapMetadata& meta,
                 const WriteOptions&) { write_dx(path, grid, data, meta); return std::string(); },
     .open_stream = nullptr, .sidecar = nullptr, .require_replaceable_sidecar = nullptr},
    {.name = "OpenDX, gzipped", .extensions = ".dx.gz", .several_maps = false, .compression = false,
     .pymol_opens = true, .chimerax_opens = false, .least_value_bytes = 0,
     .read = [](const Path& path, const MapSelector&) { return read_dx(path); },
     .write = [](const Path& path, const GridSpec& grid, const float* data, const MapMetadata& meta,
                 const WriteOptions&) { write_dx_gz(path, grid, data, meta); return std::string(); },
     .open_stream = nullptr, .sidecar = nullptr, .require_replaceable_sidecar = nullptr},
    {.name = "CCP4/MRC", .extensions = ".ccp4/.mrc/.map", .several_maps = false, .compression = false,
     .pymol_opens = true, .chimerax_opens = true, .least_value_bytes = sizeof(float),
     .read = [](const Path& path, const MapSelector&) { return read_ccp4(path); },
     .write = [](const Path& path, const GridSpec& grid, const float* data, const MapMetadata& meta,
                 const WriteOptions&) { return write_ccp4(path, grid, data, meta); },
     .open_stream = nullptr, .sidecar = nullptr, .require_replaceable_sidecar = nullptr},
    {.name = "Gaussian cube", .extensions = ".cube", .several_maps = false, .compression = false,
     .pymol_opens = true, .chimerax_opens = true, .least_value_bytes = 2,
     .read = [](const Path& path, const MapSelector&) { return read_cube(path); },
     .write = [](const Path& path, const GridSpec& grid, const float* data, const MapMetadata& meta,
                 const WriteOptions& options) { write_cube(path, grid, data, meta, options); return std::string(); },
     .open_stream = nullptr, .sidecar = nullptr, .require_replaceable_sidecar = nullptr},
};

// The length of the longest of the format's extensions that `name` (lower case) ends with and is
// longer than, 0 for none.
std::size_t matching_extension(const MapFormatInfo& format, std::string_view name) {
  std::size_t longest = 0;
  std::string_view rest = format.extensions;
  while (!rest.empty()) {
    const std::size_t slash = rest.find('/');
    const std::string_view extension = rest.substr(0, slash);
    if (name.size() > extension.size() && name.ends_with(extension))
      longest = std::max(longest, extension.size());
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  }
  return longest;
}

}  // namespace

std::span<const MapFormatInfo> map_formats() { return kFormats; }

std::string map_format_list() {
  std::string text;
  for (const MapFormatInfo& f : kFormats)
    text += (text.empty() ? "" : ", ") + std::string(f.extensions) + " (" + f.name + ")";
  return text;
}

// The longest extension wins, so that ".dx.gz" is not taken for ".dx" or something ending ".gz".
MapFormat map_format_from_path(const fs::path& path) {
  const std::string name = ascii_lower(path.filename().string());
  MapFormat best = nullptr;
  std::size_t best_length = 0;
  for (const MapFormatInfo& f : kFormats)
    if (const std::size_t length = matching_extension(f, name); length > best_length) {
      best = &f;
      best_length = length;
    }
  if (!best)
    throw Error(path.string() + ": unknown map format '" + path.extension().string() + "'; use " +
                map_format_list());
  return best;
}

std::string write_map(const fs::path& path, MapFormat format, const GridSpec& grid,
                      const float* data, const MapMetadata& meta, const WriteOptions& options) {
  return format->write(path, grid, data, meta, options);
}

std::string write_map(const fs::path& path, const GridSpec& grid, const float* data,
                      const MapMetadata& meta, const WriteOptions& options) {
  return write_map(path, map_format_from_path(path), grid, data, meta, options);
}

MapArgument parse_map_argument(const std::string& text) {
  MapArgument argument{text, {}};
  if (fs::exists(text)) return argument;
  const std::size_t hash = text.rfind('#');
  if (hash != std::string::npos && hash + 1 < text.size()) {
    std::size_t frame = 0;
    const char* end = text.data() + text.size();
    const auto result = std::from_chars(text.data() + hash + 1, end, frame);
    if (result.ec == std::errc() && result.ptr == end && fs::exists(text.substr(0, hash))) {
      argument.path = text.substr(0, hash);
      argument.selector.frame = frame;
      return argument;
    }
  }
  const std::size_t colon = text.rfind(':');
  if (colon != std::string::npos && colon + 1 < text.size() && fs::exists(text.substr(0, colon))) {
    argument.path = text.substr(0, colon);
    argument.selector.dataset = text.substr(colon + 1);
  }
  return argument;
}

MapFile read_map(const fs::path& path, MapFormat format, const MapSelector& selector) {
  if (!fs::exists(path)) throw InputError(path.string(), 0, "no such file");
  if (!format->several_maps && (selector.frame || selector.dataset != MapSelector{}.dataset))
    throw InputError(path.string(), 0,
                     std::string("a ") + format->name +
                         " file holds one map: only HDF5 files have datasets and frames to choose");
  return format->read(path, selector);
}

MapFile read_map(const fs::path& path, const MapSelector& selector) {
  return read_map(path, map_format_from_path(path), selector);
}

MapFile read_map(const MapArgument& argument) { return read_map(argument.path, argument.selector); }

}  // namespace dcsgrid::io
