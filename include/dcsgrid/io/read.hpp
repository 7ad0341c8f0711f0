// Reading atoms and charges. Formats, from the extension (before any .gz; gzip is detected from
// the content, so a plain file named .gz reads too):
//   .pqr          whitespace-separated PQR (APBS, pdb2pqr): charge and radius at the line's end
//   .pdbqt        AutoDock PDBQT: partial charge in columns 71-76; torsion-tree records skipped
//   .xyz          frames of "count / comment / element x y z charge", or plain "x y z charge" lines
//   .pdb .ent     PDB through gemmi; charges from a force field (dcsgrid/io/charges.hpp)
//   .cif .mmcif   mmCIF through gemmi; the same
// Models: MODEL records (PDB, PQR, PDBQT poses), data models (mmCIF) and XYZ frames, numbered
// from 1 in file order. Alternative locations keep the highest occupancy (the first on ties).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"

namespace dcsgrid::io {

enum class Format { pqr, pdb, mmcif, pdbqt, xyz };
std::string format_name(Format f);
// From the file name ("x.pdb.gz" -> pdb). Throws InputError naming the file for an unknown one.
Format format_from_path(const std::filesystem::path& path);

struct ReadOptions {
  // Force field for files without charges (PDB, mmCIF): "amber", "charmm" or "parse" (any
  // <NAME>.DAT/.names pair in the folder works).
  std::string forcefield = "amber";
  // Folder holding pdb2pqr's <FF>.DAT, <FF>.names, AA.xml, NA.xml and PATCHES.xml; empty =
  // $DCSGRID_FORCEFIELD_DIR, else the build default (resolve_forcefield_dir).
  std::filesystem::path forcefield_dir;
  // Residues/atoms missing from the table: false = error listing them, true = warn, charge 0.
  bool unknown_zero = false;
  // 1-based model number.
  int model = 1;
};

// One structure (one model) with charges.
struct Structure {
  AtomSet atoms;           // in file order (PDB/mmCIF: gemmi keeps a residue's atoms together)
  std::string source;      // file name as given
  int model = 1;           // model number read
  int models_in_file = 1;  // models the file holds
  std::vector<std::string> warnings;  // for the log: unknown atoms zeroed, hydrogens folded, ...
  std::string charge_source;          // "file" or the force field's name
};

// Reads one model. Throws InputError (file, line where there is one, problem) on any malformed
// input, a missing or unreadable file, a model the file does not have (naming the count), and
// when the file holds no atoms.
Structure read_structure(const std::filesystem::path& path, const ReadOptions& options = {});
// Every model of the file, in order (one entry for a single-model file). options.model is ignored.
std::vector<Structure> read_all_models(const std::filesystem::path& path,
                                       const ReadOptions& options = {});

}  // namespace dcsgrid::io
