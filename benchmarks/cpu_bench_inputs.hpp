// Inputs of the CPU engine benchmarks: the largest real structure in data/ and a water box.
#pragma once
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::bench {

struct Input {
  std::string name;
  AtomSet atoms;
};

// The structure with the most atoms among data/*.pqr[.gz] and data/*.pdb[.gz] (atoms unknown to
// the force field get charge 0), then a TIP3P water box of water_atoms atoms.
inline std::vector<Input> cpu_bench_inputs(std::size_t water_atoms) {
  const std::filesystem::path data = std::filesystem::path(DCSGRID_SOURCE_DIR) / "data";
  Input best;
  if (std::filesystem::is_directory(data))
    for (const auto& entry : std::filesystem::directory_iterator(data)) {
      const std::string name = entry.path().filename().string();
      if (!(name.ends_with(".pqr") || name.ends_with(".pqr.gz") || name.ends_with(".pdb") ||
            name.ends_with(".pdb.gz")))
        continue;
      try {
        io::ReadOptions options;
        options.unknown_zero = true;
        io::Structure s = io::read_structure(entry.path(), options);
        if (s.atoms.size() > best.atoms.size()) best = {name, std::move(s.atoms)};
      } catch (const std::exception& e) {
        std::cerr << "skipping " << name << ": " << e.what() << "\n";
      }
    }
  std::vector<Input> inputs;
  if (best.atoms.empty())
    std::cerr << "no structure in data/: water box only\n";
  else
    inputs.push_back(std::move(best));
  inputs.push_back({"water box (TIP3P)", water_box_atoms(water_atoms, 2026)});
  return inputs;
}

// APBS's example achbp (16,090 atoms; Debian apbs) and a TIP3P water box of water_atoms atoms,
// where apbs is installed; else cpu_bench_inputs(water_atoms).
inline std::vector<Input> achbp_and_water_inputs(std::size_t water_atoms) {
  const std::filesystem::path achbp = "/usr/share/apbs/examples/misc/achbp.pqr";
  if (!std::filesystem::exists(achbp)) return cpu_bench_inputs(water_atoms);
  std::vector<Input> inputs;
  inputs.push_back({"achbp", io::read_structure(achbp, {}).atoms});
  inputs.push_back({"water box (TIP3P)", water_box_atoms(water_atoms, 2026)});
  return inputs;
}

}  // namespace dcsgrid::bench
