// Topologies with charges for trajectories: CHARMM/NAMD/X-PLOR PSF and AMBER PRMTOP. Atoms come
// in file order with charges in e and zero coordinates until a frame is copied in
// (set_coordinates).
//   .psf              !NATOM section: standard and EXT layouts, CHARMM (numeric) and X-PLOR
//                     (named) atom types; charge in the seventh field
//   .prmtop .parm7    %FLAG CHARGE (AMBER's internal units: divided by 18.2223 to give e),
//                     ATOM_NAME, RESIDUE_LABEL and RESIDUE_POINTER
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"

namespace dcsgrid::io {

struct Topology {
  AtomSet atoms;                              // charges set, coordinates zero
  std::vector<std::string> atom_names;        // per atom
  std::vector<std::string> residue_names;     // per atom
  std::vector<std::int32_t> residue_numbers;  // per atom: PSF resid, PRMTOP residue from 1
  std::string source;                         // file name as given
};

// Whether the extension names a topology read here (.psf .prmtop .parm7 .top, each also .gz).
bool is_topology_path(const std::filesystem::path& path);
// By extension. Throws InputError (file, line, problem) on malformed input.
Topology read_topology(const std::filesystem::path& path);
Topology read_psf(const std::filesystem::path& path);
Topology read_prmtop(const std::filesystem::path& path);

// Copies interleaved coordinates x0 y0 z0 x1 ... (3·atoms.size() floats) into atoms.
void set_coordinates(AtomSet& atoms, const float* xyz);

}  // namespace dcsgrid::io
