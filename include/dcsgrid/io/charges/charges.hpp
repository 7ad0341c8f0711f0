// Charges for structures that carry none (PDB, mmCIF), from pdb2pqr's force-field tables.
//
// Per residue, in the spirit of pdb2pqr but without adding atoms:
//  - the residue becomes a topology variant: chain termini take the N-/C-terminal one (NALA,
//    CALA; N-terminal PRO the 2-hydrogen one, as pdb2pqr does; an amino acid holding OXT is
//    C-terminal anywhere), HIS is HIE unless its hydrogens say HID (HD1 only) or HIP (both), CYS
//    is CYX when its SG lies within 2.5 Å of another SG, ASP/GLU with their acid hydrogen are
//    ASH/GLH, nucleotides are R*/D* by O2' with 5'/3' variants at chain ends (not at a 5' end
//    that keeps its phosphate);
//  - every atom of the variant present in the file gets its table charge; the charge of an
//    absent hydrogen goes to the heavy atom it bonds to (hydrogen_parent), that of an absent
//    OXT to O, that of another absent heavy atom to its nearest present bonded neighbour (with a
//    warning), so each residue keeps its integer net charge;
//  - waters (HOH WAT TIP3 SOL H2O...) take the table's water, else TIP3P (O -0.834, H +0.417;
//    absent hydrogens folded on O); ions (NA K CL MG CA ZN, one atom) their formal charge;
//  - other residues found in the table as they are (ACE, NME...) take its entries, absent
//    hydrogens folded the same way;
//  - anything else is unknown: an InputError listing residue name, number, chain and atom, or
//    with unknown_zero a warning and charge 0.
// Radii come with the charges: each atom present takes the radius of the table entry its charge
// came from; atoms the table gives radius 0 (AMBER's water and hydroxyl hydrogens, some of
// PARSE's), TIP3P waters, ions not in the table and atoms zeroed as unknown take their element's
// (io/element_radii.hpp). An absent hydrogen is folded for its charge only: its heavy atom keeps
// its own radius.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "dcsgrid/io/charges/forcefield.hpp"

namespace dcsgrid::io {

struct AtomRecord {
  std::string name;     // as in the file ("HB2", "1HB", "OXT")
  std::string element;  // "C", "ZN"; empty: inferred from the name (element_from_atom_name)
  double x = 0, y = 0, z = 0;
};

struct ResidueRecord {
  std::string name;    // "ALA", "HOH"
  std::string number;  // sequence number with insertion code, for messages ("52", "52A")
  std::vector<AtomRecord> atoms;
};

// Residues of one chain in file order; termini are found per chain.
struct ChainRecord {
  std::string name;
  std::vector<ResidueRecord> residues;
};

struct ChargeResult {
  std::vector<double> charges;  // one per atom, chains, residues and atoms in order
  std::vector<double> radii;    // one per atom, Å; 0 where neither table nor element gives one
  std::size_t element_radii = 0;  // atoms whose radius is their element's
  std::vector<std::string> warnings;
};

// Throws InputError(file, 0, ...) listing unknown residues/atoms unless unknown_zero. threads: as
// ReadOptions::threads; anything but 1 charges the residues on OpenMP's threads (the result and
// its messages do not depend on it).
ChargeResult assign_charges(const std::vector<ChainRecord>& chains, const ChargeTables& tables,
                            bool unknown_zero, const std::string& file, int threads);

}  // namespace dcsgrid::io
