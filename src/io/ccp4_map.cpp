// CCP4/MRC maps: the header laid out by gemmi, mode 2 (float32), the data written straight from the
// caller's array (x fastest is the CCP4 column order with MAPC,MAPR,MAPS = 1,2,3).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <gemmi/ccp4.hpp>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/atomic_file.hpp"
#include "dcsgrid/io/map_io.hpp"
#include "map_output_file.hpp"

namespace dcsgrid::io {

namespace fs = std::filesystem;

namespace {

// CCP4 header words (1-based, as in the format's description and gemmi's accessors).
constexpr int kWordStart = 5;    // NXSTART, NYSTART, NZSTART
constexpr int kWordOrigin = 50;  // ORIGIN x, y, z (MRC-2014), Å
constexpr int kWordLabelCount = 56;
constexpr int kWordLabels = 57;  // ten labels of 80 characters (20 words) each
constexpr std::size_t kLabelLength = 80;

gemmi::DataStats statistics(const float* data, std::size_t count) {
  double sum = 0, sum_sq = 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t i = 0; i < count; ++i) {
    const double v = data[i];
    sum += v;
    sum_sq += v * v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  gemmi::DataStats stats;
  stats.dmin = lo;
  stats.dmax = hi;
  stats.dmean = sum / double(count);
  stats.rms = std::sqrt(std::max(0.0, sum_sq / double(count) - stats.dmean * stats.dmean));
  return stats;
}

// The grid point index of origin along one axis when the origin lies on the lattice of points
// spaced spacing apart through 0, else none (nxstart then stays 0 and only ORIGIN places the map).
std::optional<int> lattice_start(double origin, double spacing) {
  const double steps = origin / spacing;
  const double nearest = std::round(steps);
  if (std::abs(steps - nearest) > 1e-4 || std::abs(nearest) > std::numeric_limits<int>::max())
    return std::nullopt;
  return int(nearest);
}

void set_label(gemmi::Ccp4<float>& map, int index, std::string text) {
  text.resize(kLabelLength, ' ');
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\0') c = ' ';
  map.set_header_str(kWordLabels + 20 * index, text);
}

gemmi::Ccp4<float> make_header(const GridSpec& grid, const float* data, const MapMetadata& meta) {
  gemmi::Ccp4<float> map;
  map.grid.nu = int(grid.nx());
  map.grid.nv = int(grid.ny());
  map.grid.nw = int(grid.nz());
  map.grid.axis_order = gemmi::AxisOrder::XYZ;
  // The "unit cell" of a non-periodic map: the sampling MX,MY,MZ = nx,ny,nz over dims*spacing,
  // so point i along x lies at (nxstart + i) * spacing.
  map.grid.unit_cell.set(grid.nx() * grid.spacing[0], grid.ny() * grid.spacing[1],
                         grid.nz() * grid.spacing[2], 90, 90, 90);
  map.hstats = statistics(data, grid.point_count());
  map.update_ccp4_header(2, false);

  // Readers that place maps by NXSTART (CCP4 programs, gemmi, PyMOL) and those that use ORIGIN
  // (MRC-2014, ChimeraX) agree when both are set; an origin off the lattice has only ORIGIN.
  std::array<int, 3> start{0, 0, 0};
  bool on_lattice = true;
  for (int a = 0; a < 3; ++a) {
    const auto s = lattice_start(grid.origin[a], grid.spacing[a]);
    on_lattice = on_lattice && s.has_value();
    if (s) start[a] = *s;
  }
  if (on_lattice) map.set_header_3i32(kWordStart, start[0], start[1], start[2]);
  for (int a = 0; a < 3; ++a) map.set_header_float(kWordOrigin + a, float(grid.origin[a]));

  map.set_header_i32(kWordLabelCount, 2);
  set_label(map, 0, "dcsgrid " + meta.program_version + ": electrostatic potential, " + meta.units);
  set_label(map, 1, "method " + meta.method + ", input " + meta.input_file);
  return map;
}

}  // namespace

void write_ccp4(const fs::path& path, const GridSpec& grid, const float* data, const MapMetadata& meta) {
  validate(grid);
  for (auto n : grid.dims)
    if (n > std::numeric_limits<std::int32_t>::max())
      throw Error(path.string() + ": CCP4 maps hold at most 2^31-1 points along an axis");
  gemmi::Ccp4<float> map;
  try {
    map = make_header(grid, data, meta);
  } catch (const std::runtime_error& e) {  // gemmi::fail
    throw Error(path.string() + ": cannot prepare the CCP4 header: " + e.what());
  }
  AtomicFile target(path);
  OutputFile out(target.temp_path(), path);
  out.write(map.ccp4_header.data(), map.ccp4_header.size() * sizeof(std::int32_t));
  out.write(data, grid.point_count() * sizeof(float));
  out.close();
  target.commit();
}

}  // namespace dcsgrid::io
