// The per-format readers behind read_structure(). Each returns the models asked for: model is
// 1-based, or 0 for all of them; every Structure has models_in_file set.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "io/text/chunks.hpp"
#include "io/text/text.hpp"

namespace dcsgrid::io::detail {

// threads: as ReadOptions::threads (chunk_count).
std::vector<Structure> read_pqr(const TextFile& file, int model, int threads);
std::vector<Structure> read_pdbqt(const TextFile& file, int model, int threads);
std::vector<Structure> read_xyz(const TextFile& file, int model, int threads);
std::vector<Structure> read_mol2(const TextFile& file, int model);
// PDB and mmCIF through gemmi, with charges from the force field of `options`. May edit a PDB
// text in place (check_pdb_atom_records).
std::vector<Structure> read_macromolecule(TextFile& file, Format format, int model,
                                          const ReadOptions& options);

// An atom record's coordinates as the checks below read them, and its line: gemmi does not say
// where its atoms come from, so their lines are found by position (lines_by_position).
struct RecordPosition {
  float x = 0, y = 0, z = 0;
  std::size_t line = 0;
};

// Checks the _atom_site coordinates (numbers within float32) and residue numbers (within int) of
// an mmCIF text, naming the line of a bad one; returns every row's position.
std::vector<RecordPosition> check_mmcif_atom_site(const TextFile& file);

// Checks the model number against the count and that every model kept has atoms; numbers the
// models and sets models_in_file.
void finish_models(const TextFile& file, int model, int models_in_file,
                   std::vector<Structure>& models);

// fields[0..n) as numbers into values; a bad one raises InputError (file, line, what[c]).
inline void parse_fields(const TextFile& file, std::size_t line, const std::string_view* fields,
                         const char* const* what, int n, double* values) {
  for (int c = 0; c < n; ++c)
    if (const NumberStatus status = parse_number(fields[c], values[c]); status != NumberStatus::ok)
      throw InputError(file.name, line, describe_bad_number(what[c], fields[c], status));
}

// "ATOM  " or "HETATM", also with a serial number run into the record name ("HETATM123456").
inline bool is_atom_record(std::string_view line) {
  if (line.starts_with("HETATM")) return true;
  return line.starts_with("ATOM") &&
         (line.size() == 4 || line[4] == ' ' || (line[4] >= '0' && line[4] <= '9'));
}

// Splits the atoms of a whole file into models at its MODEL records (marks: atom counts at each
// record), as the serial reader numbers them: atoms before the first MODEL record are model 1.
std::vector<Structure> models_from_marks(const TextFile& file, int model, AtomSet&& all,
                                         std::vector<std::size_t>&& lines,
                                         const std::vector<std::size_t>& marks);

// PDB-style records: ATOM and HETATM lines go to parse_atom(file, line, line_number, atoms) of
// their model; MODEL starts a model (a file without MODEL records is one model). Other records are
// skipped. One line after the other: the reference the parallel reader is held to.
template <class ParseAtom>
std::vector<Structure> read_atom_records_serial(const TextFile& file, int model,
                                                std::size_t bytes_per_atom, ParseAtom parse_atom) {
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
      if (models.size() == 1)
        reserve_atoms(models[slot].atoms, models[slot].lines, file.data.size() / bytes_per_atom);
    }
    parse_atom(file, line, lines.number(), models[slot].atoms);
    models[slot].lines.push_back(lines.number());
  }
  finish_models(file, model, count, models);
  return models;
}

// The same in parallel pieces (chunk_count(size, threads) of them); any error sends the file
// through the serial reader, so errors (and which models are checked) are the serial reader's.
template <class ParseAtom>
std::vector<Structure> read_atom_records(const TextFile& file, int model, int threads,
                                         std::size_t bytes_per_atom, ParseAtom parse_atom) {
  const std::size_t count = chunk_count(file.data.size(), threads);
  if (count <= 1) return read_atom_records_serial(file, model, bytes_per_atom, parse_atom);
  auto pieces =
      scan_chunks(file.data, count, bytes_per_atom, [&](std::string_view piece, ChunkAtoms& out) {
        Lines lines(piece);
        while (lines.next()) {
          const std::string_view line = lines.line();
          if (starts_with_record(line, "MODEL")) {
            out.model_marks.push_back(out.atoms.size());
          } else if (is_atom_record(line)) {
            parse_atom(file, line, lines.number(), out.atoms);
            out.lines.push_back(lines.number());
          }
        }
        out.line_count = lines.number();
      });
  if (any_failed(pieces)) return read_atom_records_serial(file, model, bytes_per_atom, parse_atom);
  std::vector<std::size_t> marks;
  std::size_t offset = 0;
  for (const ChunkAtoms& p : pieces) {
    for (std::size_t m : p.model_marks) marks.push_back(offset + m);
    offset += p.atoms.size();
  }
  AtomSet atoms;
  std::vector<std::size_t> atom_lines;
  join_atoms(pieces, 1, atoms, atom_lines);
  return models_from_marks(file, model, std::move(atoms), std::move(atom_lines), marks);
}

}  // namespace dcsgrid::io::detail
