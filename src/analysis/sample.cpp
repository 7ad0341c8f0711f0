// Potential at points and interaction energies, for one map or every frame of a batch.
#include "dcsgrid/analysis/sample.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/analysis/interpolation.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/maps/reader.hpp"

namespace dcsgrid::analysis {

namespace fs = std::filesystem;

namespace {

bool is_list_file(const fs::path& path) {
  try {
    io::format_from_path(path);
    return false;
  } catch (const Error&) {
    return true;  // an extension io does not read: a plain list
  }
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), 0, "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Numbers of one list line, split at whitespace or commas.
std::vector<double> parse_numbers(const std::string& line, const std::string& name, std::size_t n) {
  std::vector<double> numbers;
  std::size_t pos = 0;
  while (pos < line.size()) {
    pos = line.find_first_not_of(" \t\r,", pos);
    if (pos == std::string::npos) break;
    const std::size_t end = std::min(line.find_first_of(" \t\r,", pos), line.size());
    double v = 0;
    const auto [ptr, ec] = std::from_chars(line.data() + pos, line.data() + end, v);
    if (ec != std::errc() || ptr != line.data() + end || !std::isfinite(v))
      throw InputError(name, n, "'" + line.substr(pos, end - pos) + "' is not a finite number");
    numbers.push_back(v);
    pos = end;
  }
  return numbers;
}

}  // namespace

PointSet parse_point_list(const std::string& text, const std::string& name) {
  PointSet set;
  set.source = name;
  std::istringstream in(text);
  std::string line;
  std::size_t n = 0;
  int columns = 0;
  while (std::getline(in, line)) {
    ++n;
    line = line.substr(0, line.find('#'));
    const std::vector<double> v = parse_numbers(line, name, n);
    if (v.empty()) continue;
    if (v.size() != 3 && v.size() != 4)
      throw InputError(name, n, fmt::format("expected 'x y z' or 'x y z q', found {} numbers", v.size()));
    if (columns == 0) columns = int(v.size());
    if (int(v.size()) != columns)
      throw InputError(name, n, fmt::format("{} numbers where earlier lines have {}", v.size(), columns));
    set.points.push_back(v[0], v[1], v[2], columns == 4 ? v[3] : 0.0);
  }
  if (set.points.empty()) throw InputError(name, 0, "no points");
  set.has_charges = columns == 4;
  return set;
}

PointSet read_points(const fs::path& path, const io::ReadOptions& options) {
  if (is_list_file(path)) return parse_point_list(read_text(path), path.string());
  io::Structure s = io::read_structure(path, options);
  for (const auto& w : s.warnings) spdlog::warn("{}", w);
  PointSet set;
  set.points = std::move(s.atoms);
  set.has_charges = true;
  set.source = path.string();
  return set;
}

double interaction_energy(const AtomSet& charges, const float* potential, const std::string& units,
                          double temperature) {
  const double to_kcal = 1.0 / unit_factor(parse_unit(units), temperature);
  double sum = 0;
  for (std::size_t i = 0; i < charges.size(); ++i)
    if (std::isfinite(potential[i])) sum += double(charges.q[i]) * double(potential[i]);
  return sum * to_kcal;
}

SampleResult sample(const SampleOptions& options) {
  const PointSet points = read_points(options.points, options.read);
  const io::MapReader maps(options.map);
  SampleResult r;
  r.map_file = options.map.string();
  r.points_file = options.points.string();
  r.units = maps.meta().units;
  r.points = points.points.size();
  r.has_charges = points.has_charges;

  const InterpolationMatrix m = trilinear_matrix(maps.grid(), points.points);
  r.outside = m.outside;
  if (!m.outside.empty()) {
    std::string first;
    for (std::size_t i = 0; i < std::min<std::size_t>(m.outside.size(), 10); ++i)
      first += (i ? ", " : "") + std::to_string(m.outside[i]);
    spdlog::warn("{} of {} points lie outside the grid of {} (value NaN, left out of energies); "
                 "first: {}",
                 m.outside.size(), r.points, r.map_file, first);
  }

  const std::size_t n_maps = maps.size();
  if (n_maps == 0) throw Error(r.map_file + ": has no complete map to sample");
  const std::size_t cols = maps.grid().point_count();
  const std::size_t pass = std::max<std::size_t>(1, options.maps_per_pass);
  r.values.resize(n_maps * r.points);
  std::vector<float> group(std::min(pass, n_maps) * cols);
  for (std::size_t first = 0; first < n_maps; first += pass) {
    const std::size_t count = std::min(pass, n_maps - first);
    for (std::size_t c = 0; c < count; ++c) maps.read(first + c, group.data() + c * cols);
    interpolate_many(m, group.data(), count, r.values.data() + first * r.points, options.device);
  }
  // A map in a format without units (CCP4/MRC, cube not written by dcsgrid) gives no energies.
  const bool energies = r.has_charges && !r.units.empty();
  if (r.has_charges && !energies)
    spdlog::warn("{} records no units: values are printed as stored, without energies", r.map_file);
  for (std::size_t i = 0; i < n_maps; ++i) {
    r.labels.push_back(maps.label(i));
    r.frames.push_back(maps.frame_index(i));
    if (energies)
      r.energy_kcal_mol.push_back(interaction_energy(points.points, r.values.data() + i * r.points,
                                                     r.units, maps.meta().temperature));
  }
  if (!options.output_csv.empty()) write_sample_csv(options.output_csv, r, points);
  return r;
}

nlohmann::json SampleResult::to_json(bool with_values) const {
  nlohmann::json j = {{"map", map_file},      {"points_file", points_file}, {"units", units},
                      {"points", points},     {"maps", labels.size()},      {"labels", labels},
                      {"frames", frames},     {"outside", outside},         {"has_charges", has_charges}};
  if (has_charges) j["energy_kcal_mol"] = energy_kcal_mol;
  if (with_values) {
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < labels.size(); ++i) {
      nlohmann::json row = nlohmann::json::array();
      for (std::size_t p = 0; p < points; ++p) {
        const float v = values[i * points + p];
        row.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
      }
      rows.push_back(std::move(row));
    }
    j["values"] = std::move(rows);
  }
  return j;
}

void write_sample_csv(const fs::path& path, const SampleResult& r, const PointSet& points) {
  if (points.points.size() != r.points)
    throw Error("write_sample_csv: " + std::to_string(points.points.size()) + " points given for " +
                std::to_string(r.points) + " sampled");
  io::AtomicFile atomic(path);
  {
    std::ofstream out(atomic.temp_path());
    if (!out) throw Error("cannot create " + path.string());
    out << "x,y,z" << (r.has_charges ? ",q" : "");
    for (const auto& label : r.labels) out << ",\"" << label << "\"";
    out << '\n';
    const AtomSet& a = points.points;
    for (std::size_t p = 0; p < r.points; ++p) {
      out << fmt::format("{},{},{}", a.x[p], a.y[p], a.z[p]);
      if (r.has_charges) out << fmt::format(",{}", a.q[p]);
      for (std::size_t i = 0; i < r.labels.size(); ++i) {
        const float v = r.values[i * r.points + p];
        out << ',' << (std::isfinite(v) ? fmt::format("{}", v) : std::string("nan"));
      }
      out << '\n';
    }
    out.flush();
    if (!out) throw Error("cannot write " + path.string() + " (disk full?)");
  }
  atomic.commit();
}

}  // namespace dcsgrid::analysis
