// The atoms as dcsgrid uses them, written as PQR (`dcsgrid convert`): the positions, charges (with
// the force field's folded hydrogens) and radii the engines see, with the names the input gave, so
// that APBS, FreeSASA or PyMOL see what dcsgrid saw.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/io/read.hpp"

namespace dcsgrid::io {

// What a PQR record names: each field one word (no blanks), chain possibly empty.
struct AtomLabel {
  std::string record = "HETATM";  // ATOM or HETATM
  std::string name = "X";
  std::string residue = "UNK";
  std::string chain;
  std::string residue_number = "1";  // with an insertion code where there is one ("52A")
};

// The labels of the structure's atoms, read from the records their lines (Structure::lines) point
// to in `text`, the input's text (read_text_input): PDB and PDBQT by their columns, PQR by its
// fields, mmCIF from the _atom_site row (auth_ names, else label_ ones). Atoms whose line is not
// known, rows spread over several lines, and formats without residues (XYZ, MOL2) get the
// defaults, numbered by atom (residue_number = the atom's number).
std::vector<AtomLabel> atom_labels(const Structure& structure, Format format, std::string_view text);

// Writes records as pdb2pqr does: `ATOM serial name resName chain resSeq` and the coordinates
// (%8.3f) in PDB's columns, which PyMOL reads, then the charge and the radius as whitespace-
// separated fields (APBS's and pdb2pqr's readers), each the shortest text that reads back as the
// same float32; radius 0 where the atoms have none. Coordinates are exact for inputs that give
// three decimals (PDB, mmCIF and pdb2pqr's PQR all do); charges and radii always. An empty chain
// is a blank column 22. Atomic; throws Error naming the file when labels and atoms differ in count
// or it cannot be written.
void write_pqr(const std::filesystem::path& path, const AtomSet& atoms, const std::vector<AtomLabel>& labels);

}  // namespace dcsgrid::io
