// pdb2pqr's data files, read at run time from one folder (Debian python3-pdb2pqr installs them in
// /usr/lib/python3/dist-packages/pdb2pqr/dat):
//   <FF>.DAT    "residue atom charge radius [type]" lines of a force field (AMBER, CHARMM, PARSE)
//   <FF>.names  XML mapping pdb2pqr's internal residue/atom names to the force field's own
//   AA.xml, NA.xml, PATCHES.xml  residue topologies in PDB naming (atoms, alternative names,
//               bonds) and the patches that make variants: NALA/CALA termini, HID/HIE/HIP, CYX,
//               DA5...
// Lookups use pdb2pqr's internal names: "NALA"/"H" finds AMBER's NALA/H1, CHARMM's NTER/HT1.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dcsgrid::io {

// The folder of the tables: `requested` when not empty, else $DCSGRID_FORCEFIELD_DIR when set,
// else the build's DCSGRID_DEFAULT_FORCEFIELD_DIR.
std::filesystem::path resolve_forcefield_dir(const std::filesystem::path& requested);

struct TopologyAtom {
  std::string name;                // PDB version 3 name: "HB2", "H5''"
  std::vector<std::string> bonds;  // bonded atoms of the same residue
};

struct TopologyResidue {
  std::string name;  // pdb2pqr's internal name: "ALA", "NALA", "HIE", "DA5", "WAT"
  std::vector<TopologyAtom> atoms;
  std::map<std::string, std::string, std::less<>> altnames;  // "HN" -> "H", "1HB" -> "HB1"

  const TopologyAtom* find(std::string_view atom) const;
  // The topology's name for an atom name found in a file (itself or through an altname); empty
  // when the residue has no such atom.
  std::string canonical(std::string_view file_atom) const;
};

struct Topology {
  std::map<std::string, TopologyResidue, std::less<>> residues;
  const TopologyResidue* find(std::string_view residue) const;
};

// AA.xml and NA.xml with PATCHES.xml applied the way pdb2pqr applies them. Throws InputError.
Topology load_topology(const std::filesystem::path& dir);

struct ForceField {
  struct Parameter {
    std::string residue, atom;  // as written in the .DAT file
    double charge = 0, radius = 0;
  };
  using AtomMap = std::map<std::string, std::size_t, std::less<>>;  // atom name -> parameter

  std::string name;                   // as requested: "amber"
  std::filesystem::path table;        // the .DAT file read
  std::vector<Parameter> parameters;  // one per .DAT line
  // Residue name -> atom name -> parameter, after the .names aliases: holds the .DAT names and
  // pdb2pqr's internal names (NALA, HIE, WAT...), the latter with their PDB atom names as well.
  std::map<std::string, AtomMap, std::less<>> residues;

  const AtomMap* residue(std::string_view residue) const;
  const Parameter* find(std::string_view residue, std::string_view atom) const;
};

// Reads <dir>/<NAME>.DAT and <NAME>.names (NAME: `name` in upper case) and gives every residue of
// `reference` (pdb2pqr's internal names) the .names aliases, as pdb2pqr does. Throws InputError;
// a missing table names the package that provides it.
ForceField load_forcefield(const std::filesystem::path& dir, std::string_view name,
                           const Topology& reference);

// Both, loaded once per (folder, force field) and shared between calls and threads.
struct ChargeTables {
  std::filesystem::path dir;
  Topology topology;
  ForceField forcefield;
};
std::shared_ptr<const ChargeTables> charge_tables(const std::filesystem::path& dir,
                                                  std::string_view forcefield);

// A hydrogen's name in a residue topology or table: H after any leading digits ("1HB", "HG21").
bool is_hydrogen_name(std::string_view atom);

// The heavy atom a hydrogen bonds to, from names alone, among the residue's heavy atoms; empty when
// none fits. The hydrogen's name less its "H" is read as a locant (the name of a heavy atom less
// its element letter): HB2 -> CB, HG1 -> OG1 or CG1, HD21 -> ND2, HH11 -> NH1, H/H1/HT1 -> N.
//   1. a heavy atom named exactly like that rest (HO2' -> O2', HN -> N);
//   2. else the longest prefix of the rest that is some heavy atom's locant (HD21: "D21", "D2" ->
//      ND2); several atoms with that locant: N before C before O before S before P (H -> N rather
//      than C or O; H61 -> N6 rather than C6; H4' -> C4' rather than O4');
//   3. else the only heavy atom, if there is one (water OH2 and H1).
// H5T and H3T, the terminal hydroxyls of nucleic acids, go to O5' and O3'.
std::string hydrogen_parent(std::string_view hydrogen, const std::vector<std::string>& heavy_atoms);

}  // namespace dcsgrid::io
