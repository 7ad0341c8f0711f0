// OpenDX maps in the subset APBS writes and VMD, PyMOL and ChimeraX read: a regular axis-aligned
// grid (gridpositions + gridconnections) and one scalar array listed with x slowest, z fastest.
#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "io/maps/output_file.hpp"
#include "io/text/text.hpp"

namespace dcsgrid::io {

namespace fs = std::filesystem;

namespace {

// Comment text on one line, short enough for VMD's DX reader (it reads lines of up to ~2 KB and
// would take the rest of a longer comment for grid syntax).
std::string dx_comment(const std::string& text) { return one_line(text, 1000); }

std::string field_text(const std::string& value) { return dx_comment(value); }
std::string field_text(double value) { return shortest(value); }
std::string field_text(std::size_t value) { return std::to_string(value); }

// Comments first (provenance as "# name: value", the names of the HDF5 attributes), then the grid.
std::string dx_header(const GridSpec& grid, const MapMetadata& meta) {
  std::string text = "# OpenDX potential map written by dcsgrid " + dx_comment(meta.program_version) +
                     ", units " + dx_comment(meta.units) + "\n" +
                     "# Point (i,j,k) lies at origin + i*delta1 + j*delta2 + k*delta3, in Angstrom; "
                     "values are listed with x slowest and z fastest.\n";
  for_each_field(meta, [&](const char* name, const auto& value) {
    text += std::string("# ") + name + ": " + field_text(value) + "\n";
  });
  for (const auto& [name, value] : meta.parameters)
    text += "# " + std::string(kParameterPrefix) + dx_comment(name) + ": " + dx_comment(value) + "\n";

  const std::string counts = std::to_string(grid.nx()) + " " + std::to_string(grid.ny()) + " " +
                             std::to_string(grid.nz());
  text += "object 1 class gridpositions counts " + counts + "\n";
  text += "origin " + shortest(grid.origin[0]) + " " + shortest(grid.origin[1]) + " " +
          shortest(grid.origin[2]) + "\n";
  const Mat3 steps = grid.steps();
  for (const Vec3& step : steps) {
    text += "delta";
    for (const double c : step) text += " " + (c == 0 ? std::string("0") : shortest(c));
    text += "\n";
  }
  text += "object 2 class gridconnections counts " + counts + "\n";
  text += "object 3 class array type double rank 0 items " + std::to_string(grid.point_count()) +
          " data follows\n";
  return text;
}

constexpr const char* kDxTrailer =
    "attribute \"dep\" string \"positions\"\n"
    "object \"regular positions regular connections\" class field\n"
    "component \"positions\" value 1\n"
    "component \"connections\" value 2\n"
    "component \"data\" value 3\n";

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> tokens;
  std::size_t pos = 0;
  while ((pos = line.find_first_not_of(" \t\r", pos)) != std::string_view::npos) {
    const std::size_t end = std::min(line.find_first_of(" \t\r", pos), line.size());
    tokens.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return tokens;
}

bool has(const std::vector<std::string_view>& tokens, std::string_view word) {
  return std::find(tokens.begin(), tokens.end(), word) != tokens.end();
}

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  T value{};
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

// Reads a DX file (plain or gzipped, loaded whole) line by line, numbering lines for errors.
class DxReader {
 public:
  explicit DxReader(const fs::path& path) : text_(path) {}
  MapFile read();

 private:
  [[noreturn]] void fail(const std::string& problem) const { text_.fail(problem); }
  bool next_line() {
    if (!text_.next()) return false;
    line_ = text_.line();
    return true;
  }
  template <typename T>
  T number(std::string_view token) const {
    const auto value = parse_number<T>(token);
    if (!value) fail("'" + std::string(token) + "' is not a number");
    return *value;
  }
  // The three numbers after keyword in tokens ("counts 3 4 5").
  template <typename T>
  std::array<T, 3> three_after(const std::vector<std::string_view>& tokens, std::string_view keyword) const;
  void read_comment(MapMetadata& meta) const;
  void read_values(const GridSpec& grid, std::vector<float>& data);
  void check_trailer(std::size_t total);

  detail::NumberedText text_;
  std::string_view line_;
};

template <typename T>
std::array<T, 3> DxReader::three_after(const std::vector<std::string_view>& tokens,
                                       std::string_view keyword) const {
  const auto at = std::find(tokens.begin(), tokens.end(), keyword);
  if (tokens.end() - at < 4) fail("expected three numbers after '" + std::string(keyword) + "'");
  return {number<T>(at[1]), number<T>(at[2]), number<T>(at[3])};
}

// "# name: value" comments with the names of MapMetadata's fields fill them in; others are ignored.
void DxReader::read_comment(MapMetadata& meta) const {
  const std::string_view body = line_.substr(line_.find('#') + 1);
  const std::size_t colon = body.find(": ");
  if (colon == std::string_view::npos) return;
  const auto name_tokens = split(body.substr(0, colon));
  if (name_tokens.size() != 1) return;  // prose, not "name: value"
  const std::string name(name_tokens[0]);
  std::string value(body.substr(colon + 2));
  while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.pop_back();
  const std::string prefix = kParameterPrefix;
  if (name.compare(0, prefix.size(), prefix) == 0 && name.size() > prefix.size()) {
    meta.parameters[name.substr(prefix.size())] = value;
    return;
  }
  for_each_field(meta, [&](const char* field_name, auto& field) {
    if (name != field_name) return;
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, std::string>) field = value;
    else field = number<T>(value);
  });
}

void DxReader::read_values(const GridSpec& grid, std::vector<float>& data) {
  const std::size_t total = grid.point_count();
  const std::size_t nz = grid.nz(), nyz = std::size_t(grid.ny()) * nz;
  data.assign(total, 0.0f);
  std::size_t n = 0;  // values read so far, in DX order: n = (i*ny + j)*nz + k
  while (n < total && next_line()) {
    for (std::string_view token : split(line_)) {
      if (n == total) fail("more values than the " + std::to_string(total) + " announced");
      const std::size_t i = n / nyz, j = (n / nz) % grid.ny(), k = n % nz;
      data[grid.index(i, j, k)] = number<float>(token);
      ++n;
    }
  }
  if (n < total)
    fail("the file ends after " + std::to_string(n) + " of " + std::to_string(total) + " values");
}

// After the values only the field description may follow (attribute, object ... class field,
// component lines, as APBS and we write them), comments and blank lines: a duplicated value line
// or stray text means the data are not what the header says.
void DxReader::check_trailer(std::size_t total) {
  while (next_line()) {
    const auto tokens = split(line_);
    if (tokens.empty() || tokens[0].front() == '#') continue;
    if (parse_number<double>(tokens[0]))
      fail("more values than the " + std::to_string(total) + " announced (extra numbers after "
           "the data)");
    const bool field_line = tokens[0] == "attribute" || tokens[0] == "component" ||
                            (tokens[0] == "object" && has(tokens, "class") && has(tokens, "field"));
    if (!field_line) fail("unexpected text after the data: '" + std::string(line_) + "'");
  }
}

MapFile DxReader::read() {
  MapFile map;
  std::optional<std::array<std::int64_t, 3>> counts;
  std::optional<std::array<double, 3>> origin;
  std::vector<std::array<double, 3>> deltas;
  std::optional<std::int64_t> items;
  while (!items && next_line()) {
    const auto tokens = split(line_);
    if (tokens.empty()) continue;
    if (tokens[0].front() == '#') {
      read_comment(map.meta);
    } else if (tokens[0] == "origin") {
      origin = three_after<double>(tokens, "origin");
    } else if (tokens[0] == "delta") {
      if (deltas.size() == 3) fail("more than three delta lines");
      deltas.push_back(three_after<double>(tokens, "delta"));
    } else if (tokens[0] == "object" && has(tokens, "gridpositions")) {
      counts = three_after<std::int64_t>(tokens, "counts");
    } else if (tokens[0] == "object" && has(tokens, "gridconnections")) {
      if (!counts || three_after<std::int64_t>(tokens, "counts") != *counts)
        fail("gridconnections counts differ from the gridpositions counts");
    } else if (tokens[0] == "object" && has(tokens, "array")) {
      const auto at = std::find(tokens.begin(), tokens.end(), "items");
      if (tokens.end() - at < 2) fail("expected the number of items");
      items = number<std::int64_t>(at[1]);
      if (tokens.size() < 2 || tokens[tokens.size() - 2] != "data" || tokens.back() != "follows")
        fail("only arrays whose data follow in the same file ('data follows') are supported");
      const auto rank = std::find(tokens.begin(), tokens.end(), "rank");
      if (rank != tokens.end() && (tokens.end() - rank < 2 || rank[1] != "0"))
        fail("only scalar arrays (rank 0) are supported");
    } else {
      fail("unexpected line '" + std::string(line_) + "'");
    }
  }
  if (!items) fail("no 'object ... class array ... data follows' line");
  if (!counts) fail("no gridpositions counts before the data");
  if (!origin) fail("no origin line before the data");
  if (deltas.size() != 3) fail("expected three delta lines before the data");
  // Axis-aligned deltas, or a cell's lattice (lower triangular: delta 1 along x, delta 2 in the
  // xy plane, as dcsgrid writes --grid cell).
  for (int a = 0; a < 3; ++a) {
    if (!(deltas[a][a] > 0))
      fail("delta line " + std::to_string(a + 1) + " has no positive component along axis " + std::to_string(a + 1));
    for (int b = a + 1; b < 3; ++b)
      if (deltas[a][b] != 0)
        fail("delta line " + std::to_string(a + 1) + " has a component along axis " + std::to_string(b + 1) +
             " (grids whose first axis is along x and second in the xy plane are supported)");
  }

  map.grid.dims = *counts;
  map.grid.origin = *origin;
  map.grid.spacing = {deltas[0][0], deltas[1][1], deltas[2][2]};
  map.grid.skew = {deltas[1][0], deltas[2][0], deltas[2][1]};
  try {
    validate(map.grid);
  } catch (const Error& e) {
    fail(e.what());
  }
  if (std::size_t(*items) != map.grid.point_count())
    fail(std::to_string(*items) + " items announced for a grid of " +
         std::to_string(map.grid.point_count()) + " points");
  // Each value takes at least two bytes (a digit and a separator): a header that promises more
  // than the text can hold is refused before the grid is allocated.
  if (map.grid.point_count() > text_.bytes() / 2)
    fail(std::to_string(*items) + " items announced, but the file holds only " +
         std::to_string(text_.bytes()) + " bytes");
  read_values(map.grid, map.data);
  check_trailer(map.grid.point_count());
  return map;
}

}  // namespace

namespace {

void write_dx_text(const fs::path& path, const GridSpec& grid, const float* data,
                   const MapMetadata& meta, OutputFile::Compression compression) {
  validate(grid);
  AtomicFile target(path);
  OutputFile out(target.temp_path(), path, compression);
  out.write(dx_header(grid, meta));

  write_values_z_fastest(out, grid, data, 3, false);
  out.write(kDxTrailer);
  out.close();
  target.commit();
}

}  // namespace

void write_dx(const fs::path& path, const GridSpec& grid, const float* data, const MapMetadata& meta) {
  write_dx_text(path, grid, data, meta, OutputFile::Compression::none);
}

void write_dx_gz(const fs::path& path, const GridSpec& grid, const float* data,
                 const MapMetadata& meta) {
  write_dx_text(path, grid, data, meta, OutputFile::Compression::gzip);
}

MapFile read_dx(const fs::path& path) { return DxReader(path).read(); }

}  // namespace dcsgrid::io
