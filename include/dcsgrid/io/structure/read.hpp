// Reading atoms and charges. Formats, from the extension (before any .gz, .bz2 or .xz; the
// compression is detected from the content, and a file named .gz, .bz2 or .xz must hold that
// compression) or given:
//   .pqr          whitespace-separated PQR (APBS, pdb2pqr): charge and radius at the line's end
//   .pdbqt        AutoDock PDBQT: partial charge in columns 71-76; torsion-tree records skipped
//   .xyz          frames of "count / comment / element x y z charge", or plain "x y z charge" lines
//   .mol2         Tripos MOL2: the partial charges of @<TRIPOS>ATOM (9th column)
//   .pdb .ent     PDB through gemmi; charges from a force field (dcsgrid/io/charges/charges.hpp)
//   .cif .mmcif   mmCIF through gemmi; the same
// The path "-" is standard input, read with ReadOptions::format (it has no extension).
// Models: MODEL records (PDB, PQR, PDBQT poses), data models (mmCIF), XYZ frames and MOL2
// molecules, numbered from 1 in file order. Alternative locations keep the highest occupancy
// (the first on ties). Values beyond float32's range are refused (InputError with the line).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/io/text/text_buffer.hpp"

namespace dcsgrid::io {

enum class Format { pqr, pdb, mmcif, pdbqt, xyz, mol2 };
// From the file name ("x.pdb.gz" -> pdb). Throws InputError naming the file for an unknown one
// (and for "-", standard input, which needs an explicit format).
Format format_from_path(const std::filesystem::path& path);
// From a format's name as a user types it (--format): pqr pdb mmcif (or cif) pdbqt xyz mol2, any
// case; nullopt for another.
std::optional<Format> format_from_name(std::string_view name);

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
  // The format, whatever the file's name says; required for standard input ("-").
  std::optional<Format> format;
  // Parallel parsing of the text formats (PQR, PDBQT, XYZ, and PDB's record check) on OpenMP's
  // threads: 0 = pieces as suits the size and thread count, 1 = the serial reader, n = n pieces
  // (tests place the cuts with it). For PDB and mmCIF, anything but 1 also loads the force-field
  // tables beside the parse, lets gemmi parse a large PDB file in pieces and builds residues and
  // charges on OpenMP's threads (an mmCIF file is checked before gemmi parses it, whatever the
  // value). The atoms and errors are the same for every value.
  int threads = 0;
};

// One structure (one model) with charges.
struct Structure {
  AtomSet atoms;  // in file order (PDB/mmCIF: gemmi keeps a residue's atoms together)
  // The file line of each atom (1-based), for messages; 0 where it is not known (PDB and mmCIF
  // atoms are matched to their records by position: 0 where two records share one).
  std::vector<std::size_t> lines;
  std::string source;                 // file name as given ("<stdin>" for "-")
  int model = 1;                      // model number read
  int models_in_file = 1;             // models the file holds
  std::vector<std::string> warnings;  // for the log: unknown atoms zeroed, hydrogens folded, ...
  std::string charge_source;          // "file" or the force field's name
  // Where atoms.r came from: "file" (PQR), the force field's table (with the element radii it
  // fell back on), io::kElementRadiiSource (fill_missing_radii); empty without radii.
  std::string radius_source;
  // The crystal or MD cell the file records (PDB CRYST1, mmCIF _cell); absent where it has none
  // or only the placeholder 1 × 1 × 1 Å cell of NMR and modelled entries.
  std::optional<UnitCell> cell;
};

// Reads one model. Throws InputError (file, line where there is one, problem) on any malformed
// input, a missing or unreadable file, a model the file does not have (naming the count), and
// when the file holds no atoms.
Structure read_structure(const std::filesystem::path& path, const ReadOptions& options = {});
// Every model of the file, in order (one entry for a single-model file). options.model is ignored.
std::vector<Structure> read_all_models(const std::filesystem::path& path,
                                       const ReadOptions& options = {});

// One model of read_each_model: its atoms, or why it could not be read.
struct ModelRead {
  int model = 1;
  std::optional<Structure> structure;
  std::string error;  // "model N: FILE:LINE: problem" when structure is empty
};
// Every model, as read_all_models, except that when the file does not read as a whole and its
// models are MODEL ... ENDMDL blocks (PDB, PQR, PDBQT), each block is read on its own: a broken
// model is an error of its own (line numbers as in the file) and the others still come. Throws
// InputError as read_all_models does when the blocks cannot be told apart.
std::vector<ModelRead> read_each_model(const std::filesystem::path& path,
                                       const ReadOptions& options = {});

// The whole text of a file ("-": standard input) as the readers above take it: decompressed by
// content, and judged as it streams. Throws InputError naming the file for what they refuse: a
// directory or a device, a name ending .gz/.bz2/.xz on other data, binary bytes (their byte
// offset and line), corrupt compressed data, text beyond the input limits
// ($DCSGRID_MAX_INPUT_BYTES, by default half the memory; $DCSGRID_MAX_EXPANSION, by default 100
// times the compressed size once past 64 MiB).
TextBuffer read_text_input(const std::filesystem::path& path);

// Atoms far from all the others, as a coordinate typed wrong (99999) makes: those beyond a gap
// of more than min_gap Å in the atoms' distances from a central point (their sampled per-axis
// median), when they are few (at most max(16, n/1000) atoms). By the triangle inequality, each
// lies more than min_gap from every atom inside the gap.
struct Outlier {
  std::size_t index = 0;        // the farthest of them (Structure::lines[index] names its line)
  double nearest_distance = 0;  // Å from it to the nearest other atom
  std::size_t count = 0;        // atoms beyond the gap
};
std::optional<Outlier> find_outlier(const AtomSet& atoms, double min_gap = 100.0);

}  // namespace dcsgrid::io
