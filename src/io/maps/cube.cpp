// Gaussian cube maps: lengths in Bohr, values with x slowest and z fastest, each z-row starting a
// new line of at most six values (as Gaussian's cubegen writes them and VMD, Jmol, 3Dmol.js and
// ASE read them).
#include <array>
#include <charconv>
#include <cmath>
#include <string_view>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "io/maps/output_file.hpp"
#include "io/text/text.hpp"

namespace dcsgrid::io {

namespace fs = std::filesystem;

namespace {

constexpr double kBohr = 0.529177210903;  // Å, CODATA 2018
constexpr const char* kUnitsLabel = ", units ";
constexpr std::size_t kValuesPerLine = 6;

std::string bohr(double angstrom) { return shortest(angstrom / kBohr); }

std::string cube_header(const GridSpec& grid, const MapMetadata& meta, const AtomSet* atoms) {
  const std::size_t atom_count = atoms ? atoms->size() : 0;
  std::string text = "dcsgrid " + one_line(meta.program_version) + " electrostatic potential" +
                     kUnitsLabel + one_line(meta.units) + "\n";
  text += "method " + one_line(meta.method) + ", input " + one_line(meta.input_file) +
          "; lengths in Bohr, x slowest, z fastest\n";
  text += std::to_string(atom_count) + " " + bohr(grid.origin[0]) + " " + bohr(grid.origin[1]) +
          " " + bohr(grid.origin[2]) + "\n";
  const Mat3 steps = grid.steps();
  for (int axis = 0; axis < 3; ++axis) {
    text += std::to_string(grid.dims[axis]);
    for (const double c : steps[axis]) text += " " + (c == 0 ? std::string("0") : bohr(c));
    text += "\n";
  }
  for (std::size_t a = 0; a < atom_count; ++a)
    text += "0 " + shortest(atoms->q[a]) + " " + bohr(atoms->x[a]) + " " + bohr(atoms->y[a]) + " " +
            bohr(atoms->z[a]) + "\n";
  return text;
}

class CubeReader {
 public:
  explicit CubeReader(const fs::path& path) : text_(path) {}
  MapFile read();

 private:
  [[noreturn]] void fail(const std::string& problem) const { text_.fail(problem); }
  std::string_view line(const char* what) {
    if (!text_.next()) fail(std::string("the file ends before ") + what);
    return text_.line();
  }
  std::vector<double> numbers(std::string_view text, std::size_t at_least, const char* what) const;
  void read_values(const GridSpec& grid, std::vector<float>& data);

  detail::NumberedText text_;
};

std::vector<double> CubeReader::numbers(std::string_view text, std::size_t at_least,
                                        const char* what) const {
  std::array<std::string_view, 8> fields;
  const std::size_t n = detail::split_fields(text, fields.data(), fields.size());
  if (n < at_least || n > fields.size())
    fail(std::string("expected ") + what);
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i)
    if (detail::parse_number(fields[i], values[i]) != detail::NumberStatus::ok)
      fail(std::string("expected ") + what + ", found '" + std::string(fields[i]) + "'");
  return values;
}

void CubeReader::read_values(const GridSpec& grid, std::vector<float>& data) {
  const std::size_t total = grid.point_count();
  const std::size_t nz = grid.nz(), nyz = std::size_t(grid.ny()) * nz;
  data.assign(total, 0.0f);
  std::size_t n = 0;  // values read so far: n = (i*ny + j)*nz + k
  while (text_.next()) {
    std::string_view rest = text_.line();
    std::array<std::string_view, kValuesPerLine + 1> fields;
    const std::size_t count = detail::split_fields(rest, fields.data(), fields.size());
    if (count > kValuesPerLine) fail("more than six values on a line");
    for (std::size_t f = 0; f < count; ++f) {
      if (n == total) fail("more values than the " + std::to_string(total) + " grid points");
      float value = 0;
      const auto result = std::from_chars(fields[f].data(), fields[f].data() + fields[f].size(), value);
      if (result.ec != std::errc() || result.ptr != fields[f].data() + fields[f].size())
        fail("'" + std::string(fields[f]) + "' is not a number");
      const std::size_t i = n / nyz, j = (n / nz) % grid.ny(), k = n % nz;
      data[grid.index(i, j, k)] = value;
      ++n;
    }
  }
  if (n < total)
    fail("the file ends after " + std::to_string(n) + " of " + std::to_string(total) + " values");
}

MapFile CubeReader::read() {
  MapFile map;
  map.meta.units.clear();
  const std::string_view title = line("the first comment line");
  if (title.starts_with("dcsgrid ") && title.find(kUnitsLabel) != std::string_view::npos)
    map.meta.units = std::string(title.substr(title.rfind(kUnitsLabel) + std::string_view(kUnitsLabel).size()));
  line("the second comment line");
  const auto head = numbers(line("the atom count and origin"), 4, "the atom count and the origin");
  if (head[0] < 0) fail("orbital cube files (negative atom count) are not supported");
  if (head.size() > 4 && head[4] != 1) fail("only one value per point is supported");
  if (head[0] != std::floor(head[0]) || head[0] > 1e9) fail("the atom count is not a count");
  for (int axis = 0; axis < 3; ++axis) {
    const auto row = numbers(line("the three axis lines"), 4, "a point count and a step vector");
    const double count = std::abs(row[0]);
    if (count != std::floor(count) || count < 1 || count > double(1 << 30))
      fail("the point count " + std::to_string(row[0]) + " is not a positive count");
    // Axis-aligned steps, or a cell's lattice (the first along x, the second in the xy plane).
    for (int c = axis + 1; c < 3; ++c)
      if (row[1 + c] != 0)
        fail("the step vector of axis " + std::to_string(axis + 1) + " has a component along axis " +
             std::to_string(c + 1) + " (grids whose first axis is along x and second in the xy plane are supported)");
    const double unit = row[0] > 0 ? kBohr : 1.0;  // a negative count means Å
    map.grid.dims[axis] = std::int64_t(count);
    map.grid.spacing[axis] = row[1 + axis] * unit;
    map.grid.origin[axis] = head[1 + axis] * unit;
    if (axis == 1) map.grid.skew[0] = row[1] * unit;
    if (axis == 2) map.grid.skew = {map.grid.skew[0], row[1] * unit, row[2] * unit};
  }
  try {
    validate(map.grid);
  } catch (const Error& e) {
    fail(e.what());
  }
  // At least two bytes a value (a digit and a separator), checked before the grid is allocated.
  if (map.grid.point_count() > text_.bytes() / 2)
    fail(std::to_string(map.grid.point_count()) + " points announced, but the file holds only " +
         std::to_string(text_.bytes()) + " bytes");
  for (std::size_t a = 0; a < std::size_t(head[0]); ++a)
    numbers(line("the atom records end"), 5, "an atom record: number, charge, x, y, z");
  read_values(map.grid, map.data);
  return map;
}

}  // namespace

void write_cube(const fs::path& path, const GridSpec& grid, const float* data,
                const MapMetadata& meta, const WriteOptions& options) {
  validate(grid);
  AtomicFile target(path);
  OutputFile out(target.temp_path(), path);
  out.write(cube_header(grid, meta, options.atoms));
  write_values_z_fastest(out, grid, data, kValuesPerLine, true);
  out.close();
  target.commit();
}

MapFile read_cube(const fs::path& path) { return CubeReader(path).read(); }

}  // namespace dcsgrid::io
