// Where each atom belongs (chain, residue, atom name), read back from the input's atom records by
// the line numbers of Structure::lines: PQR and PDBQT as whitespace or PDB columns, PDB by its
// columns. Other formats, and atoms without a line (PDB atoms gemmi merged), get empty labels.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "dcsgrid/io/read.hpp"

namespace dcsgrid::io {

struct AtomLabel {
  std::string chain, residue_name, residue_number, atom_name;
};

// One label per atom of `structure`, read from `path` (the file it was read from). Throws
// InputError as read_text_input does.
std::vector<AtomLabel> atom_labels(const std::filesystem::path& path, const Structure& structure);

}  // namespace dcsgrid::io
