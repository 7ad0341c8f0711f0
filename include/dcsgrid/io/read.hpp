// Reading atoms and charges. Formats: PQR, PDB, mmCIF, PDBQT, XYZ (x y z q or element x y z q),
// each optionally gzipped; the format comes from the extension (before any .gz).
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
  // Force field for files without charges (PDB, mmCIF): "amber", "charmm" or "parse".
  std::string forcefield = "amber";
  // Folder holding <FF>.DAT and <FF>.names; empty = $DCSGRID_FORCEFIELD_DIR or the build default.
  std::filesystem::path forcefield_dir;
  // Residues/atoms missing from the table: false = error listing them, true = warn, charge 0.
  bool unknown_zero = false;
  // 1-based model number for multi-model PDB/mmCIF.
  int model = 1;
};

// One structure (one model) with charges.
struct Structure {
  AtomSet atoms;
  std::string source;     // file name as given
  int model = 1;          // model number read
  int models_in_file = 1; // models the file holds
  std::vector<std::string> warnings;  // for the log: unknown atoms zeroed, hydrogens folded, ...
  std::string charge_source;          // "file" or the force field's name
};

// Reads one model. Throws InputError (file, line, problem) on any malformed input and when the
// file holds no atoms.
Structure read_structure(const std::filesystem::path& path, const ReadOptions& options = {});
// Every model of a multi-model PDB/mmCIF (one entry for other formats).
std::vector<Structure> read_all_models(const std::filesystem::path& path,
                                       const ReadOptions& options = {});

}  // namespace dcsgrid::io
