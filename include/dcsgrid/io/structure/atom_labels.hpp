// Where each atom belongs (record, atom name, residue, chain, residue number), found again in the
// input's text by the line each atom came from (Structure::lines): for PQR output and for the
// surface's per-residue table.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "dcsgrid/io/structure/read.hpp"

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

// The same, reading the text from `path` (the file the structure was read from) and taking the
// format from its name. Throws InputError as read_text_input does.
std::vector<AtomLabel> atom_labels(const std::filesystem::path& path, const Structure& structure);

}  // namespace dcsgrid::io
