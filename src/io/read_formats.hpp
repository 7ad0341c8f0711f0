// The per-format readers behind read_structure(). Each returns the models asked for: model is
// 1-based, or 0 for all of them; every Structure has models_in_file set.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/read.hpp"
#include "read_text.hpp"

namespace dcsgrid::io::detail {

std::vector<Structure> read_pqr(const TextFile& file, int model);
std::vector<Structure> read_pdbqt(const TextFile& file, int model);
std::vector<Structure> read_xyz(const TextFile& file, int model);
// PDB and mmCIF through gemmi, with charges from the force field of `options`. May edit a PDB
// text in place (check_pdb_atom_records).
std::vector<Structure> read_macromolecule(TextFile& file, Format format, int model,
                                          const ReadOptions& options);

// Checks the _atom_site coordinates of an mmCIF text, naming the line of a bad one.
void check_mmcif_coordinates(const TextFile& file);

// Checks the model number against the count and that every model kept has atoms; numbers the
// models and sets models_in_file.
void finish_models(const TextFile& file, int model, int models_in_file,
                   std::vector<Structure>& models);

// "ATOM  " or "HETATM", also with a serial number run into the record name ("HETATM123456").
inline bool is_atom_record(std::string_view line) {
  if (line.starts_with("HETATM")) return true;
  return line.starts_with("ATOM") &&
         (line.size() == 4 || line[4] == ' ' || (line[4] >= '0' && line[4] <= '9'));
}

// PDB-style records: ATOM and HETATM lines go to parse_atom(line, line_number, atoms) of their
// model; MODEL starts a model (a file without MODEL records is one model). Other records are
// skipped.
template <class ParseAtom>
std::vector<Structure> read_atom_records(const TextFile& file, int model, ParseAtom parse_atom) {
  std::vector<Structure> models;
  int current = 0, count = 0;
  Lines lines(file.data);
  while (lines.next()) {
    const std::string_view line = lines.line();
    if (starts_with_record(line, "MODEL")) {
      current = ++count;
      continue;
    }
    if (!is_atom_record(line)) continue;
    if (current == 0) current = count = 1;
    if (model != 0 && current != model) continue;
    const std::size_t slot = model == 0 ? std::size_t(current - 1) : 0;
    if (models.size() <= slot) {
      models.resize(slot + 1);
      if (models.size() == 1) models[slot].atoms.reserve(file.data.size() / 80);
    }
    parse_atom(line, lines.number(), models[slot].atoms);
  }
  finish_models(file, model, count, models);
  return models;
}

}  // namespace dcsgrid::io::detail
