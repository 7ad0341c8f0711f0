// CCP4/MRC maps: the header laid out by gemmi, mode 2 (float32), the data written straight from the
// caller's array (x fastest is the CCP4 column order with MAPC,MAPR,MAPS = 1,2,3).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include <gemmi/ccp4.hpp>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "io/maps/output_file.hpp"

namespace dcsgrid::io {

namespace fs = std::filesystem;

namespace {

// CCP4 header words (1-based, as in the format's description and gemmi's accessors).
constexpr int kWordStart = 5;    // NXSTART, NYSTART, NZSTART
constexpr int kWordOrigin = 50;  // ORIGIN x, y, z (MRC-2014), Å
constexpr int kWordLabelCount = 56;
constexpr int kWordLabels = 57;  // ten labels of 80 characters (20 words) each
constexpr std::size_t kLabelLength = 80;
constexpr const char* kPotentialLabel = ": electrostatic potential, ";  // then the units

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

// The grid point index of the origin along each axis when it lies on the lattice of the grid's
// points through 0 (within a relative 1e-6), else none.
std::optional<std::array<int, 3>> lattice_start(const GridSpec& grid) {
  GridSpec through_zero = grid;
  through_zero.origin = {0, 0, 0};
  const std::array<double, 3> steps = through_zero.coordinates(grid.origin);
  std::array<int, 3> start{};
  for (int a = 0; a < 3; ++a) {
    const double nearest = std::round(steps[a]);
    if (std::abs(steps[a] - nearest) > 1e-6 * std::max(1.0, std::abs(nearest)) ||
        std::abs(nearest) > std::numeric_limits<int>::max())
      return std::nullopt;
    start[a] = int(nearest);
  }
  return start;
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
  // so point i along x lies at (nxstart + i) * spacing. A skewed grid (--grid cell) is its cell's
  // lattice: that cell's lengths and angles, in the convention CCP4 shares with ours (a along x,
  // b in the xy plane).
  const UnitCell cell = cell_of_grid(grid);
  map.grid.unit_cell.set(cell.lengths[0], cell.lengths[1], cell.lengths[2], cell.angles[0], cell.angles[1],
                         cell.angles[2]);
  map.hstats = statistics(data, grid.point_count());
  map.update_ccp4_header(2, false);

  // On the lattice, NXSTART.. alone (gemmi, PyMOL, CCP4 programs read it; GridDataFormats adds
  // ORIGIN to it, so ORIGIN must stay zero); off it, ORIGIN alone (see write_ccp4 in map_io.hpp).
  if (const auto start = lattice_start(grid)) map.set_header_3i32(kWordStart, (*start)[0], (*start)[1], (*start)[2]);
  else
    for (int a = 0; a < 3; ++a) map.set_header_float(kWordOrigin + a, float(grid.origin[a]));
  map.set_header_i32(kWordLabelCount, 2);
  set_label(map, 0, "dcsgrid " + meta.program_version + kPotentialLabel + meta.units);
  set_label(map, 1, "method " + meta.method + ", input " + meta.input_file);
  return map;
}

}  // namespace

std::string write_ccp4(const fs::path& path, const GridSpec& grid, const float* data,
                       const MapMetadata& meta) {
  validate(grid);
  for (auto n : grid.dims)
    if (n > std::numeric_limits<std::int32_t>::max())
      throw Error(output_name(path).string() + ": CCP4 maps hold at most 2^31-1 points along an axis");
  gemmi::Ccp4<float> map;
  try {
    map = make_header(grid, data, meta);
  } catch (const std::runtime_error& e) {  // gemmi::fail
    throw Error(output_name(path).string() + ": cannot prepare the CCP4 header: " + e.what());
  }
  AtomicFile target(path);
  OutputFile out(target.temp_path(), path);
  out.write(map.ccp4_header.data(), map.ccp4_header.size() * sizeof(std::int32_t));
  out.write(data, grid.point_count() * sizeof(float));
  out.close();
  target.commit();
  if (map.header_i32(kWordOrigin) == 0 && map.header_i32(kWordOrigin + 1) == 0 &&
      map.header_i32(kWordOrigin + 2) == 0)
    return {};
  return path.string() + ": the origin " + shortest(grid.origin) +
         " Å is not a multiple of the spacing, so it is written in the MRC-2014 ORIGIN words "
         "only; ChimeraX, VMD and mrcfile place the map right, gemmi and PyMOL's ccp4 loader "
         "ignore ORIGIN and place it at a whole number of steps from (0, 0, 0). Use an origin on "
         "the lattice (the default grid is) or write .dx for them";
}

namespace {

// Bytes per value of the CCP4 modes we read.
std::size_t mode_bytes(int mode) {
  switch (mode) {
    case 0: return 1;
    case 1: case 6: return 2;
    case 2: return 4;
    default: return 0;
  }
}

// The header alone, to check the file's size before anything is allocated for its data.
void check_size(const fs::path& path) {
  std::array<std::int32_t, 256> header{};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(path.string(), 0, "cannot open the file");
  const std::size_t got = std::fread(header.data(), 4, header.size(), f);
  std::fclose(f);
  auto fail = [&](const std::string& problem) { throw InputError(path.string(), 0, problem); };
  if (got != header.size()) fail("shorter than a CCP4/MRC header (1024 bytes)");
  const auto word = [&](int w) { return header[std::size_t(w - 1)]; };
  if (std::memcmp(&header[52], "MAP ", 4) != 0) fail("not a CCP4/MRC map (no 'MAP ' at byte 208)");
  if ((std::uint8_t(header[53] & 0xff) != 0x44))
    fail("big-endian CCP4/MRC maps are not supported (machine stamp)");
  const std::size_t bytes = mode_bytes(word(4));
  if (!bytes) fail("mode " + std::to_string(word(4)) + " is not supported (0, 1, 2 and 6 are)");
  const std::uintmax_t size = fs::file_size(path);
  std::uintmax_t points = 1;
  for (int w = 1; w <= 3; ++w) {
    if (word(w) < 1) fail("a point count (header word " + std::to_string(w) + ") is below 1");
    points *= std::uintmax_t(word(w));
    if (points > size)  // also keeps the product from overflowing
      fail("the header describes more points than the file has bytes (" + std::to_string(size) + ")");
  }
  if (word(24) < 0) fail("negative extended header size (NSYMBT)");
  const std::uintmax_t expected = 1024 + std::uintmax_t(word(24)) + points * bytes;
  if (size != expected)
    fail("the file has " + std::to_string(size) + " bytes, its header describes " +
         std::to_string(expected));
}

}  // namespace

MapFile read_ccp4(const fs::path& path) {
  auto fail = [&](const std::string& problem) { throw InputError(path.string(), 0, problem); };
  check_size(path);
  gemmi::Ccp4<float> map;
  try {
    map.read_ccp4_file(path.string());
    // gemmi's reordering adds NXSTART.. and NX.. as int: refuse a sum beyond int's range first.
    const std::array<int, 3> first = map.header_3i32(kWordStart), count = map.header_3i32(1);
    for (int a = 0; a < 3; ++a)
      if (std::int64_t(first[a]) + count[a] > std::numeric_limits<std::int32_t>::max())
        throw std::runtime_error("NXSTART + NX (or NY, NZ) beyond the 32-bit range: " +
                                 std::to_string(first[a]) + " + " + std::to_string(count[a]));
    map.setup(0.0f, gemmi::MapSetup::ReorderOnly);  // axes to x, y, z; nothing else changes
  } catch (const std::runtime_error& e) {
    fail(e.what());
  }
  MapFile out;
  const std::array<int, 3> start = map.header_3i32(kWordStart);
  const std::array<int, 3> sampling = map.header_3i32(8);
  bool has_origin = false;
  Vec3 lengths{}, angles{};
  for (int a = 0; a < 3; ++a) {
    if (sampling[a] < 1) fail("a cell sampling (MX, MY, MZ) is below 1");
    lengths[a] = double(map.header_float(11 + a));
    // Right angles as written in float (90.0f exactly), else the cell's own.
    angles[a] = std::abs(map.header_float(14 + a) - 90.0f) <= 1e-3f ? 90.0 : double(map.header_float(14 + a));
    has_origin = has_origin || map.header_float(kWordOrigin + a) != 0.0f;
  }
  try {
    // Point (i, j, k) at fractional ((NXSTART + i)/MX, ...) of the cell: the cell's lattice.
    out.grid = grid_on_cell(make_cell(lengths, angles), {sampling[0], sampling[1], sampling[2]});
    out.grid.dims = {map.grid.nu, map.grid.nv, map.grid.nw};
    out.grid.origin = has_origin ? std::array<double, 3>{double(map.header_float(kWordOrigin)),
                                                         double(map.header_float(kWordOrigin + 1)),
                                                         double(map.header_float(kWordOrigin + 2))}
                                 : out.grid.position(start[0], start[1], start[2]);
    validate(out.grid);
  } catch (const Error& e) {
    fail(std::string("the header describes an invalid grid: ") + e.what());
  }
  // Units from our own first label ("dcsgrid <version>: electrostatic potential, <units>").
  out.meta = MapMetadata{};
  std::string label = map.header_i32(kWordLabelCount) > 0 ? map.header_str(kWordLabels, kLabelLength) : "";
  label.erase(label.find_last_not_of(' ') + 1);  // before the search: the units follow it
  const std::size_t at = label.find(kPotentialLabel);
  out.meta.units = label.starts_with("dcsgrid ") && at != std::string::npos
                       ? label.substr(at + std::string_view(kPotentialLabel).size())
                       : std::string();
  out.data = std::move(map.grid.data);
  return out;
}

}  // namespace dcsgrid::io
