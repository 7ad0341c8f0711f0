// What a potential map file records besides the numbers.
#pragma once
#include <cstddef>
#include <map>
#include <string>

namespace dcsgrid::io {

struct MapMetadata {
  std::string units = "kT/e";
  double temperature = 298.15;
  std::string method;                             // "direct", "cutoff"
  std::map<std::string, std::string> parameters;  // method parameters, as text ("cutoff": "12")
  double dielectric = 1.0;
  std::string dielectric_model = "constant";      // "constant", "distance-dependent 4r"
  double ionic_strength = 0.0;
  double min_distance = 0.5;
  std::size_t atom_count = 0;
  double total_charge = 0.0;
  std::string input_file;
  std::string input_sha256;
  std::string program_version;
  std::string command_line;
};

// Calls f(name, field) for every scalar field above (all but parameters), in the order above, so
// that each writer and reader names the fields alike (HDF5 attributes, OpenDX comments). field is
// a std::string, double or std::size_t, const when meta is.
template <typename Meta, typename F>
void for_each_field(Meta& meta, F&& f) {
  f("units", meta.units);
  f("temperature", meta.temperature);
  f("method", meta.method);
  f("dielectric", meta.dielectric);
  f("dielectric_model", meta.dielectric_model);
  f("ionic_strength", meta.ionic_strength);
  f("min_distance", meta.min_distance);
  f("atom_count", meta.atom_count);
  f("total_charge", meta.total_charge);
  f("input_file", meta.input_file);
  f("input_sha256", meta.input_sha256);
  f("program_version", meta.program_version);
  f("command_line", meta.command_line);
}

// Method parameters are stored under this prefix ("parameter:cutoff"), next to the fields above.
inline constexpr const char* kParameterPrefix = "parameter:";

}  // namespace dcsgrid::io
