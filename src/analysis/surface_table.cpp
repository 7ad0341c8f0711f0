#include "dcsgrid/analysis/surface_table.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "dcsgrid/analysis/surface.hpp"
#include "dcsgrid/core/error.hpp"

namespace dcsgrid::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Accumulator {
  std::size_t vertices = 0;
  double area = 0, weighted = 0, min = std::numeric_limits<double>::infinity(),
         max = -std::numeric_limits<double>::infinity();
  void add(double value, double vertex_area) {
    ++vertices;
    area += vertex_area;
    weighted += value * vertex_area;
    min = std::min(min, value);
    max = std::max(max, value);
  }
  void add(const Accumulator& o) {
    vertices += o.vertices;
    area += o.area;
    weighted += o.weighted;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
  }
  void fill(PatchRow& row) const {
    row.vertices = vertices;
    row.area = area;
    row.mean = vertices && area > 0 ? weighted / area : kNaN;
    row.min = vertices ? min : kNaN;
    row.max = vertices ? max : kNaN;
  }
};

}  // namespace

SurfaceTable surface_table(const TriangleMesh& mesh, std::size_t atom_count,
                           const std::vector<AtomLabel>& labels) {
  if (mesh.value.size() != mesh.vertices.size() || mesh.atom.size() != mesh.vertices.size())
    throw Error("surface_table: the mesh needs a value and an atom per vertex");
  const SurfaceAreas areas = surface_areas(mesh);
  std::vector<Accumulator> per_atom(atom_count);
  for (std::size_t v = 0; v < mesh.vertices.size(); ++v) per_atom.at(mesh.atom[v]).add(mesh.value[v], areas.vertex[v]);
  SurfaceTable table;
  table.area = areas.total;
  table.atoms.resize(atom_count);
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> residue_of;
  std::vector<Accumulator> per_residue;
  std::tuple<std::string, std::string, std::string> previous_key;
  std::size_t residue = 0;
  for (std::size_t a = 0; a < atom_count; ++a) {
    PatchRow& row = table.atoms[a];
    row.atom = a;
    if (labels.empty()) row.label.residue_number = std::to_string(a + 1);  // each atom its own residue
    else row.label = labels[a];
    per_atom[a].fill(row);
    auto key = std::make_tuple(row.label.chain, row.label.residue_number, row.label.residue);
    // A residue's atoms mostly come one after another: the previous atom's is tried first.
    if (a == 0 || key != previous_key) {
      const auto [it, added] = residue_of.try_emplace(key, per_residue.size());
      if (added) {
        per_residue.emplace_back();
        table.residues.push_back(row);
        table.residues.back().label.name.clear();
      }
      residue = it->second;
      previous_key = std::move(key);
    }
    per_residue[residue].add(per_atom[a]);
  }
  for (std::size_t r = 0; r < per_residue.size(); ++r) per_residue[r].fill(table.residues[r]);
  return table;
}

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string number(double v) {
  if (std::isnan(v)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

nlohmann::json row_json(const PatchRow& r, bool with_atom_names) {
  const auto or_null = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  nlohmann::json j = {{"chain", r.label.chain}, {"residue_name", r.label.residue},
                      {"residue_number", r.label.residue_number}};
  if (with_atom_names) j["atom_name"] = r.label.name;
  j.update({{"atom", r.atom + 1}, {"vertices", r.vertices}, {"area_A2", r.area},
            {"mean", or_null(r.mean)}, {"min", or_null(r.min)}, {"max", or_null(r.max)}});
  return j;
}

}  // namespace

std::string table_csv(const std::vector<PatchRow>& rows, bool with_atom_names) {
  std::string out = with_atom_names ? "chain,residue_name,residue_number,atom_name,atom,vertices,area_A2,mean,min,max\n"
                                    : "chain,residue_name,residue_number,atom,vertices,area_A2,mean,min,max\n";
  for (const PatchRow& r : rows) {
    out += csv_field(r.label.chain) + "," + csv_field(r.label.residue) + "," + csv_field(r.label.residue_number) + ",";
    if (with_atom_names) out += csv_field(r.label.name) + ",";
    out += std::to_string(r.atom + 1) + "," + std::to_string(r.vertices) + "," + number(r.area) + "," +
           number(r.mean) + "," + number(r.min) + "," + number(r.max) + "\n";
  }
  return out;
}

nlohmann::json table_json(const SurfaceTable& table) {
  nlohmann::json atoms = nlohmann::json::array(), residues = nlohmann::json::array();
  for (const PatchRow& r : table.atoms) atoms.push_back(row_json(r, true));
  for (const PatchRow& r : table.residues) residues.push_back(row_json(r, false));
  return {{"atoms", atoms}, {"residues", residues}};
}

}  // namespace dcsgrid::analysis
