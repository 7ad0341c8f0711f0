// The potential at points: sample(map file, points file) interpolates every map of the file (one
// map, or each complete frame of a batch) at the points with one interpolation matrix
// (interpolation.hpp) and, when the points carry charges, gives the interaction energy
// E = Σ q_i·φ(r_i) in kcal/mol (φ converted from the map's units at its temperature).
// Points outside the grid are reported, get NaN and are left out of the energy.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::analysis {

struct PointSet {
  AtomSet points;  // positions, Å; q = charge (0 when the file has none)
  bool has_charges = false;
  std::string source;
};

// Points from an atom file that io::read_structure knows (PQR, PDB, mmCIF, PDBQT, XYZ, .gz: with
// its charges), or from a plain list, one point a line "x y z" or "x y z q" (whitespace or commas
// between numbers; blank lines and # comments ignored), for .txt, .dat, .csv, .list or any other
// extension io does not know. Throws InputError (file, line, problem).
PointSet read_points(const std::filesystem::path& path, const io::ReadOptions& options = {});
// The plain-list parser on its own (name is used in error messages).
PointSet parse_point_list(const std::string& text, const std::string& name);

struct SampleOptions {
  std::filesystem::path map;     // single-map or batch HDF5 file
  std::filesystem::path points;  // see read_points
  io::ReadOptions read;
  std::string device = "auto";   // where the SpMV/SpMM runs
  // Maps interpolated per SpMM call (bounds the memory: this many maps and their values).
  std::size_t maps_per_pass = 64;
  std::filesystem::path output_csv;  // when set, the table of values (write_sample_csv)
};

struct SampleResult {
  std::string map_file, points_file, units;
  std::size_t points = 0;
  std::vector<std::string> labels;   // one per map ("file" or "file#frame")
  std::vector<std::size_t> frames;   // frame index per map
  std::vector<float> values;         // [maps][points], NaN outside the grid
  std::vector<std::size_t> outside;  // points outside the grid
  bool has_charges = false;
  std::vector<double> energy_kcal_mol;  // per map, when has_charges
  // with_values adds the full [maps][points] table (large for many points).
  nlohmann::json to_json(bool with_values = false) const;
};

SampleResult sample(const SampleOptions& options);
// CSV: x,y,z[,q], then one column of values per map.
void write_sample_csv(const std::filesystem::path& path, const SampleResult& result,
                      const PointSet& points);

// Σ q_i·φ_i over the points where φ is finite, with φ in `units` at `temperature` converted to
// kcal/mol/e: the energy in kcal/mol.
double interaction_energy(const AtomSet& charges, const float* potential, const std::string& units,
                          double temperature);

}  // namespace dcsgrid::analysis
