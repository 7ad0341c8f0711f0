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

}  // namespace dcsgrid::io
