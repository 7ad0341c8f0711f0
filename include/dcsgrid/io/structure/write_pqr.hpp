// The atoms as dcsgrid uses them, written as PQR (`dcsgrid convert`): the positions, charges (with
// the force field's folded hydrogens) and radii the engines see, with the names the input gave, so
// that APBS, FreeSASA or PyMOL see what dcsgrid saw.
#pragma once
#include <filesystem>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/io/structure/atom_labels.hpp"

namespace dcsgrid::io {

// Writes records as pdb2pqr does: `ATOM serial name resName chain resSeq` and the coordinates
// (%8.3f) in PDB's columns, which PyMOL reads, then the charge and the radius as whitespace-
// separated fields (APBS's and pdb2pqr's readers), each the shortest text that reads back as the
// same float32; radius 0 where the atoms have none. Coordinates are exact for inputs that give
// three decimals (PDB, mmCIF and pdb2pqr's PQR all do); charges and radii always. An empty chain
// is a blank column 22. Atomic; throws Error naming the file when labels and atoms differ in count
// or it cannot be written.
void write_pqr(const std::filesystem::path& path, const AtomSet& atoms, const std::vector<AtomLabel>& labels);

}  // namespace dcsgrid::io
