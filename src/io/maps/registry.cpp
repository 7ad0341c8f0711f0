// The map format registry: file names to formats, and writing and reading by format.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "dcsgrid/core/text.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/map_io.hpp"

namespace dcsgrid::io {

namespace fs = std::filesystem;

namespace {

constexpr std::array<MapFormatInfo, 5> kFormats = {{
    {MapFormat::hdf5, "HDF5 + XDMF", ".h5/.hdf5", true, true},
    {MapFormat::dx, "OpenDX", ".dx", false, false},
    {MapFormat::dx_gz, "OpenDX, gzipped", ".dx.gz", false, false},
    {MapFormat::ccp4, "CCP4/MRC", ".ccp4/.mrc/.map", false, false},
    {MapFormat::cube, "Gaussian cube", ".cube", false, false},
}};

// Name endings, longest first so that ".dx.gz" is not taken for something ending ".gz".
struct Suffix {
  const char* text;
  MapFormat format;
};
constexpr std::array<Suffix, 8> kSuffixes = {{
    {".dx.gz", MapFormat::dx_gz},
    {".hdf5", MapFormat::hdf5},
    {".ccp4", MapFormat::ccp4},
    {".cube", MapFormat::cube},
    {".h5", MapFormat::hdf5},
    {".dx", MapFormat::dx},
    {".mrc", MapFormat::ccp4},
    {".map", MapFormat::ccp4},
}};

}  // namespace

std::span<const MapFormatInfo> map_formats() { return kFormats; }

const MapFormatInfo& map_format_info(MapFormat format) {
  for (const MapFormatInfo& f : kFormats)
    if (f.format == format) return f;
  throw Error("unknown map format");
}

std::string map_format_list() {
  std::string text;
  for (const MapFormatInfo& f : kFormats)
    text += (text.empty() ? "" : ", ") + std::string(f.extensions) + " (" + f.name + ")";
  return text;
}

MapFormat map_format_from_path(const fs::path& path) {
  const std::string name = ascii_lower(path.filename().string());
  for (const Suffix& s : kSuffixes)
    if (name.size() > std::string_view(s.text).size() && name.ends_with(s.text)) return s.format;
  throw Error(path.string() + ": unknown map format '" + path.extension().string() + "'; use " +
              map_format_list());
}

std::string write_map(const fs::path& path, MapFormat format, const GridSpec& grid,
                      const float* data, const MapMetadata& meta, const WriteOptions& options) {
  switch (format) {
    case MapFormat::hdf5: write_hdf5(path, grid, data, meta, options); return {};
    case MapFormat::dx: write_dx(path, grid, data, meta); return {};
    case MapFormat::dx_gz: write_dx_gz(path, grid, data, meta); return {};
    case MapFormat::ccp4: return write_ccp4(path, grid, data, meta);
    case MapFormat::cube: write_cube(path, grid, data, meta, options); return {};
  }
  throw Error(path.string() + ": unknown map format");
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
  if (format == MapFormat::hdf5) {
    if (!selector.frame) return read_hdf5(path, selector.dataset);
    if (selector.dataset != MapSelector{}.dataset)
      throw InputError(path.string(), 0, "a frame is chosen from /potential, not /" + selector.dataset);
    return read_hdf5_frame(path, *selector.frame);
  }
  if (selector.frame || selector.dataset != MapSelector{}.dataset)
    throw InputError(path.string(), 0,
                     std::string("a ") + map_format_info(format).name +
                         " file holds one map: only HDF5 files have datasets and frames to choose");
  switch (format) {
    case MapFormat::dx:
    case MapFormat::dx_gz: return read_dx(path);
    case MapFormat::ccp4: return read_ccp4(path);
    case MapFormat::cube: return read_cube(path);
    case MapFormat::hdf5: break;
  }
  throw Error(path.string() + ": unknown map format");
}

MapFile read_map(const fs::path& path, const MapSelector& selector) {
  return read_map(path, map_format_from_path(path), selector);
}

MapFile read_map(const MapArgument& argument) { return read_map(argument.path, argument.selector); }

}  // namespace dcsgrid::io
