// Charges from pdb2pqr's tables for structures without charges: the hydrogen naming rule against
// every bond of pdb2pqr's topology, force-field lookups against the .DAT text, integer residue
// charges and the expected totals on a real crystal structure, agreement with pdb2pqr itself on
// another, and the special cases (HIS, termini, disulfides, waters, ions, nucleotides, unknowns).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/charges/forcefield.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"
#include "test_io_read_files.hpp"

using namespace dcsgrid;
using namespace dcsgrid::test;
namespace fs = std::filesystem;

namespace {

fs::path tables_dir() { return data_file("pdb2pqr"); }

io::ReadOptions options(const std::string& forcefield = "amber", bool unknown_zero = false) {
  io::ReadOptions o;
  o.forcefield = forcefield;
  o.forcefield_dir = tables_dir();
  o.unknown_zero = unknown_zero;
  return o;
}

// A charge straight from a .DAT file's text, in the force field's own names.
double dat_charge(const std::string& forcefield, const std::string& residue,
                  const std::string& atom) {
  for (const std::string& line : lines_of(read_text(tables_dir() / (forcefield + ".DAT")))) {
    const auto w = words(line);
    if (w.size() >= 3 && w[0] == residue && w[1] == atom) return std::stod(w[2]);
  }
  throw std::runtime_error(forcefield + ".DAT has no " + residue + " " + atom);
}

// The sum of a .DAT residue's charges.
double dat_total(const std::string& forcefield, const std::string& residue) {
  double total = 0;
  for (const std::string& line : lines_of(read_text(tables_dir() / (forcefield + ".DAT")))) {
    const auto w = words(line);
    if (w.size() >= 3 && w[0] == residue) total += std::stod(w[2]);
  }
  return total;
}

bool near_integer(double q) { return std::abs(q - std::round(q)) < 1e-3; }

// ---- small PDB files written by the tests ----

struct PdbWriter {
  std::string text;
  int serial = 0;

  // One residue; atoms spaced 4 Å apart along x from `x0` unless placed explicitly.
  PdbWriter& residue(const std::string& name, char chain, int number,
                     const std::vector<std::string>& atoms, double x0 = 0,
                     const std::map<std::string, std::array<double, 3>>& placed = {}) {
    for (std::size_t i = 0; i < atoms.size(); ++i) {
      const std::string& a = atoms[i];
      std::array<double, 3> p{x0 + 4.0 * double(serial), 50.0 + number, 0.0};
      if (const auto it = placed.find(a); it != placed.end()) p = it->second;
      const bool hydrogen = is_hydrogen_atom(a);
      char line[96];
      const std::string padded = a.size() < 4 ? " " + a : a;
      std::snprintf(line, sizeof line,
                    "%-6s%5d %-4s %-4s%c%4d    %8.3f%8.3f%8.3f  1.00  0.00          %2s\n", "ATOM",
                    ++serial, padded.c_str(), name.c_str(), chain, number, p[0], p[1], p[2],
                    hydrogen ? "H" : std::string(1, a[0]).c_str());
      text += line;
    }
    return *this;
  }
  PdbWriter& ter() {
    text += "TER\n";
    return *this;
  }
  static bool is_hydrogen_atom(const std::string& name) {
    const auto first = name.find_first_not_of("0123456789");
    return first != std::string::npos && name[first] == 'H';
  }
};

const std::vector<std::string> kAla = {"N", "CA", "C", "O", "CB"};
const std::vector<std::string> kHis = {"N", "CA", "C", "O", "CB", "CG", "ND1", "CD2", "CE1", "NE2"};
const std::vector<std::string> kCys = {"N", "CA", "C", "O", "CB", "SG"};

struct Written {
  fs::path dir, path;
  ~Written() { fs::remove_all(dir); }
};
std::unique_ptr<Written> write_pdb(const std::string& text, const std::string& name = "test.pdb") {
  auto w = std::make_unique<Written>();
  w->dir = temp_dir("charges");
  w->path = w->dir / name;
  write_text(w->path, text);
  return w;
}

// Residues of a PDB text in file order: name, chain, number and the atom names, so that tests can
// group a Structure's atoms (which keep file order) by residue.
struct TextResidue {
  std::string name, key;
  char chain;
  std::vector<std::string> atoms;
};
std::vector<TextResidue> residues_of(const std::string& text) {
  std::vector<TextResidue> out;
  for (const std::string& l : atom_lines(text)) {
    const std::string key = l.substr(17, 10);  // resName, chain, resSeq, iCode
    if (out.empty() || out.back().key != key) {
      std::string name = l.substr(17, 4);
      name.erase(name.find_last_not_of(' ') + 1);
      name.erase(0, name.find_first_not_of(' '));
      out.push_back({name, key, l[21], {}});
    }
    std::string atom = l.substr(12, 4);
    atom.erase(atom.find_last_not_of(' ') + 1);
    atom.erase(0, atom.find_first_not_of(' '));
    out.back().atoms.push_back(atom);
  }
  return out;
}

// Per residue: the sum of its atoms' charges and the charge of each named atom.
struct ResidueCharges {
  TextResidue residue;
  double total = 0;
  std::map<std::string, double> atom;
};
std::vector<ResidueCharges> charges_by_residue(const std::string& text, const AtomSet& atoms) {
  std::vector<ResidueCharges> out;
  std::size_t i = 0;
  for (const TextResidue& r : residues_of(text)) {
    ResidueCharges rc{r, 0, {}};
    for (const std::string& a : r.atoms) {
      rc.total += atoms.q.at(i);
      rc.atom[a] = atoms.q.at(i++);
    }
    out.push_back(std::move(rc));
  }
  EXPECT_EQ(i, atoms.size());
  return out;
}

}  // namespace

// ---- the hydrogen naming rule ----

TEST(HydrogenParent, StandardNames) {
  const std::vector<std::string> backbone = {"N", "CA", "C", "O"};
  auto with = [&](std::vector<std::string> side) {
    side.insert(side.begin(), backbone.begin(), backbone.end());
    return side;
  };
  EXPECT_EQ(io::hydrogen_parent("H", backbone), "N");
  EXPECT_EQ(io::hydrogen_parent("H2", backbone), "N");
  EXPECT_EQ(io::hydrogen_parent("HT1", backbone), "N");
  EXPECT_EQ(io::hydrogen_parent("HN", backbone), "N");
  EXPECT_EQ(io::hydrogen_parent("HA", backbone), "CA");
  EXPECT_EQ(io::hydrogen_parent("HA3", backbone), "CA");
  EXPECT_EQ(io::hydrogen_parent("HB2", with({"CB"})), "CB");
  EXPECT_EQ(io::hydrogen_parent("HG1", with({"CB", "OG1", "CG2"})), "OG1");          // THR
  EXPECT_EQ(io::hydrogen_parent("HG12", with({"CB", "CG1", "CG2", "CD1"})), "CG1");  // ILE
  EXPECT_EQ(io::hydrogen_parent("HD21", with({"CB", "CG", "OD1", "ND2"})), "ND2");   // ASN
  EXPECT_EQ(io::hydrogen_parent("HD21", with({"CB", "CG", "CD1", "CD2"})), "CD2");   // LEU
  EXPECT_EQ(io::hydrogen_parent("HE2", with({"CB", "CG", "ND1", "CD2", "CE1", "NE2"})),
            "NE2");  // HIS
  EXPECT_EQ(io::hydrogen_parent("HD2", with({"CB", "CG", "ND1", "CD2", "CE1", "NE2"})), "CD2");
  EXPECT_EQ(io::hydrogen_parent("HH12", with({"CB", "CG", "CD", "NE", "CZ", "NH1", "NH2"})), "NH1");
  EXPECT_EQ(io::hydrogen_parent("HZ3", with({"CB", "CG", "CD", "CE", "NZ"})), "NZ");
  EXPECT_EQ(io::hydrogen_parent("HH", with({"CB", "CG", "CD1", "CE1", "CZ", "OH"})), "OH");  // TYR
  EXPECT_EQ(io::hydrogen_parent("1HB", with({"CB"})), "CB");  // PDB v2 name
  const std::vector<std::string> sugar = {"P",   "O5'", "C5'", "C4'", "O4'", "C3'",
                                          "O3'", "C2'", "O2'", "C1'", "N6",  "C6"};
  EXPECT_EQ(io::hydrogen_parent("H4'", sugar), "C4'");
  EXPECT_EQ(io::hydrogen_parent("H5''", sugar), "C5'");
  EXPECT_EQ(io::hydrogen_parent("HO2'", sugar), "O2'");
  EXPECT_EQ(io::hydrogen_parent("H61", sugar), "N6");
  EXPECT_EQ(io::hydrogen_parent("H5T", sugar), "O5'");
  EXPECT_EQ(io::hydrogen_parent("H3T", sugar), "O3'");
  EXPECT_EQ(io::hydrogen_parent("H1", {"OH2"}), "OH2");  // water, any naming
  EXPECT_EQ(io::hydrogen_parent("HQ", {"C1", "C2"}), "");
  EXPECT_EQ(io::hydrogen_parent("CB", with({"CB"})), "");  // not a hydrogen
}

TEST(HydrogenParent, AgreesWithEveryBondOfPdb2pqrsTopology) {
  // The charge assignment uses these bonds where the topology has the residue; the naming rule
  // serves residues only a table knows (ACE, NME, a user's ligand). It must agree with the bonds
  // everywhere but at two quirks of pdb2pqr's files: its RNA calls the 2'-hydroxyl hydrogen
  // "H2''" (HO2' in PDB files, which the rule gets right), and patching makes water variants
  // (NWAT...) whose N-terminal hydrogens bond to an N that is not there.
  const io::Topology topology = io::load_topology(tables_dir());
  std::size_t checked = 0;
  for (const auto& [name, residue] : topology.residues) {
    std::vector<std::string> heavy;
    for (const auto& a : residue.atoms)
      if (!io::is_hydrogen_name(a.name)) heavy.push_back(a.name);
    for (const auto& a : residue.atoms) {
      if (!io::is_hydrogen_name(a.name) || a.bonds.empty()) continue;
      ASSERT_EQ(a.bonds.size(), 1u) << name << " " << a.name;
      if (!residue.find(a.bonds[0])) continue;  // NWAT, NEUTRAL-NWAT
      if (a.name == "H2''" && residue.find("O2'")) {
        EXPECT_EQ(a.bonds[0], "O2'");
        EXPECT_EQ(io::hydrogen_parent("HO2'", heavy), "O2'");
        continue;
      }
      EXPECT_EQ(io::hydrogen_parent(a.name, heavy), a.bonds[0])
          << "residue " << name << " hydrogen " << a.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 1600u);  // the variants of 20 amino acids, water and 5 nucleotides
}

// ---- tables ----

TEST(ForceFieldTables, NamesAliasesAsPdb2pqr) {
  const io::Topology topology = io::load_topology(tables_dir());
  const io::ForceField amber = io::load_forcefield(tables_dir(), "amber", topology);
  const io::ForceField charmm = io::load_forcefield(tables_dir(), "charmm", topology);
  const io::ForceField parse = io::load_forcefield(tables_dir(), "parse", topology);
  auto charge = [](const io::ForceField& ff, const char* res, const char* atom) {
    const auto* p = ff.find(res, atom);
    return p ? p->charge : std::nan("");
  };
  EXPECT_DOUBLE_EQ(charge(amber, "NALA", "H"), dat_charge("AMBER", "NALA", "H1"));
  EXPECT_DOUBLE_EQ(charge(amber, "WAT", "H2"), dat_charge("AMBER", "WAT", "HW"));
  EXPECT_DOUBLE_EQ(charge(amber, "DA", "OP1"), dat_charge("AMBER", "DA", "O1P"));
  EXPECT_DOUBLE_EQ(charge(charmm, "NALA", "H"), dat_charge("CHARMM", "NTER", "HT1"));
  EXPECT_DOUBLE_EQ(charge(charmm, "NALA", "CB"), dat_charge("CHARMM", "ALA", "CB"));
  EXPECT_DOUBLE_EQ(charge(charmm, "CALA", "OXT"), dat_charge("CHARMM", "CTER", "OT2"));
  EXPECT_DOUBLE_EQ(charge(charmm, "HIE", "HE2"), dat_charge("CHARMM", "HSE", "HE2"));
  EXPECT_DOUBLE_EQ(charge(charmm, "WAT", "O"), dat_charge("CHARMM", "TP3M", "OH2"));
  EXPECT_DOUBLE_EQ(charge(parse, "NGLY", "H"), dat_charge("PARSE", "BK+", "H1"));
  EXPECT_DOUBLE_EQ(charge(parse, "WAT", "O"), dat_charge("PARSE", "H2O", "OH"));
  EXPECT_DOUBLE_EQ(charge(parse, "HIP", "HD1"), dat_charge("PARSE", "HI+", "HD1"));

  // The topology's variants: HID lacks HE2, the N-terminal variants gain H2 and H3.
  EXPECT_EQ(topology.find("HID")->find("HE2"), nullptr);
  ASSERT_NE(topology.find("HID")->find("HD1"), nullptr);
  ASSERT_NE(topology.find("NALA")->find("H3"), nullptr);
  EXPECT_EQ(topology.find("NEUTRAL-NPRO")->find("H3"), nullptr);
}

TEST(ForceFieldTables, FolderAndMissingTables) {
  EXPECT_EQ(io::resolve_forcefield_dir("/some/where"), "/some/where");
  ::setenv("DCSGRID_FORCEFIELD_DIR", "/from/env", 1);
  EXPECT_EQ(io::resolve_forcefield_dir(""), "/from/env");
  ::unsetenv("DCSGRID_FORCEFIELD_DIR");
  EXPECT_EQ(io::resolve_forcefield_dir(""), DCSGRID_DEFAULT_FORCEFIELD_DIR);

  const auto pdb = write_pdb(PdbWriter().residue("ALA", 'A', 1, kAla).text);
  io::ReadOptions o = options();
  o.forcefield_dir = pdb->dir;  // no tables there
  try {
    io::read_structure(pdb->path, o);
    ADD_FAILURE() << "read without tables";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("python3-pdb2pqr"), std::string::npos) << e.what();
  }
  o.forcefield_dir = tables_dir();
  o.forcefield = "nosuchff";
  try {
    io::read_structure(pdb->path, o);
    ADD_FAILURE() << "read with an unknown force field";
  } catch (const InputError& e) {
    EXPECT_NE(e.file.find("NOSUCHFF.DAT"), std::string::npos) << e.what();
  }
}

// ---- a real crystal structure without hydrogens ----

TEST(Charges, CrystalStructureIntegerResiduesAndExpectedTotal) {
  const std::string text = read_text(data_file("1tii.pdb.gz"));
  const auto residues = residues_of(text);
  // Expected per residue: +1 LYS/ARG, -1 ASP/GLU, +1 at each chain's first amino acid, -1 at its
  // last; 0 for HIS (HIE), waters and everything else.
  std::map<std::size_t, int> expected;
  std::map<char, std::pair<std::size_t, std::size_t>> chain_ends;  // first, last amino acid
  for (std::size_t i = 0; i < residues.size(); ++i) {
    const std::string& n = residues[i].name;
    expected[i] = (n == "LYS" || n == "ARG") - (n == "ASP" || n == "GLU");
    if (n == "HOH") continue;
    auto [it, first] = chain_ends.try_emplace(residues[i].chain, i, i);
    it->second.second = i;
  }
  ASSERT_EQ(chain_ends.size(), 7u);
  int expected_total = 0;
  for (const auto& [chain, ends] : chain_ends) {
    expected[ends.first] += 1;
    expected[ends.second] -= 1;
  }
  for (const auto& [i, q] : expected) expected_total += q;

  for (const char* ff : {"amber", "charmm", "parse"}) {
    SCOPED_TRACE(ff);
    const io::Structure s = io::read_structure(data_file("1tii.pdb.gz"), options(ff));
    const auto by_residue = charges_by_residue(text, s.atoms);
    ASSERT_EQ(by_residue.size(), residues.size());
    int wrong = 0;
    for (std::size_t i = 0; i < by_residue.size(); ++i) {
      const double q = by_residue[i].total;
      if (!near_integer(q) || std::lround(q) != expected[i]) {
        if (++wrong < 10)
          ADD_FAILURE() << residues[i].name << " " << residues[i].key << ": " << q << ", expected "
                        << expected[i];
      }
    }
    EXPECT_EQ(wrong, 0);
    EXPECT_NEAR(s.atoms.total_charge(), expected_total, 1e-3);
    EXPECT_EQ(s.charge_source, ff);
  }
}

TEST(Charges, HydrogensPresentWithOldNames) {
  // 1A1P (pdb2pqr's example) has every hydrogen, named "1HB" and so on, and an NH2 cap that no
  // table knows: with --unknown zero the cap is 0 and the peptide keeps its N-terminal +1 but no
  // C-terminal -1.
  const std::string text = read_text(data_file("1a1p.pdb"));
  const auto residues = residues_of(text);
  int expected = 1;
  for (const auto& r : residues)
    expected += (r.name == "LYS" || r.name == "ARG") - (r.name == "ASP" || r.name == "GLU");
  const io::Structure s = io::read_structure(data_file("1a1p.pdb"), options("amber", true));
  for (const auto& rc : charges_by_residue(text, s.atoms))
    EXPECT_TRUE(near_integer(rc.total)) << rc.residue.key << " " << rc.total;
  EXPECT_NEAR(s.atoms.total_charge(), expected, 1e-3);
  // Present hydrogens carry their own table charge, nothing folded onto their atoms.
  const auto first = charges_by_residue(text, s.atoms).front();  // N-terminal ILE
  EXPECT_NEAR(first.atom.at("1HG1"), dat_charge("AMBER", "NILE", "HG13"),
              1e-6);  // AA.xml's altname
  EXPECT_NEAR(first.atom.at("N"), dat_charge("AMBER", "NILE", "N"), 1e-6);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("NH2"), std::string::npos) << s.warnings[0];
}

TEST(Charges, AgreeWithPdb2pqr) {
  // pdb2pqr (--noopt) protonated 1HPV itself; fold each of its hydrogens onto the nearest heavy
  // atom of the same residue and compare atom by atom. HIS differs by design (pdb2pqr picks a
  // tautomer, we take HIE), so for HIS only the residue totals are compared.
  for (const char* ff : {"amber", "charmm", "parse"}) {
    SCOPED_TRACE(ff);
    const io::Structure s = io::read_structure(data_file("1hpv.pdb"), options(ff, true));
    std::map<std::array<long, 3>, double> ours;
    auto key = [](double x, double y, double z) {
      return std::array<long, 3>{std::lround(x * 1000), std::lround(y * 1000),
                                 std::lround(z * 1000)};
    };
    for (std::size_t i = 0; i < s.atoms.size(); ++i)
      ours[key(s.atoms.x[i], s.atoms.y[i], s.atoms.z[i])] = s.atoms.q[i];

    struct RefAtom {
      std::string name;
      double x, y, z, q;
    };
    std::map<std::string, std::vector<RefAtom>> residues;  // residue fields -> atoms
    std::vector<std::string> order;
    for (const std::string& line :
         atom_lines(read_text(data_file(std::string("1hpv_pdb2pqr_") + ff + ".pqr.gz")))) {
      const auto w = words(line);
      const std::size_t off = (w[0] == "ATOM" || w[0] == "HETATM") ? 0 : 1;  // "HETATM12345"
      std::string res;
      for (std::size_t k = 3 - off; k + 5 < w.size(); ++k) res += w[k] + " ";
      if (!residues.count(res)) order.push_back(res);
      residues[res].push_back({w[2 - off], std::stod(w[w.size() - 5]), std::stod(w[w.size() - 4]),
                               std::stod(w[w.size() - 3]), std::stod(w[w.size() - 2])});
    }
    std::size_t compared = 0;
    for (const std::string& res : order) {
      std::vector<RefAtom> heavy;
      std::vector<double> folded;
      for (const RefAtom& a : residues[res])
        if (a.name[0] != 'H') heavy.push_back(a), folded.push_back(a.q);
      for (const RefAtom& h : residues[res]) {
        if (h.name[0] != 'H') continue;
        std::size_t best = 0;
        double best_d = 1e30;
        for (std::size_t k = 0; k < heavy.size(); ++k) {
          const double d = std::pow(heavy[k].x - h.x, 2) + std::pow(heavy[k].y - h.y, 2) +
                           std::pow(heavy[k].z - h.z, 2);
          if (d < best_d) best_d = d, best = k;
        }
        folded[best] += h.q;
      }
      const bool his = res.rfind("HI", 0) == 0 || res.rfind("HS", 0) == 0;
      double ref_total = 0, our_total = 0;
      for (std::size_t k = 0; k < heavy.size(); ++k) {
        const auto it = ours.find(key(heavy[k].x, heavy[k].y, heavy[k].z));
        ASSERT_NE(it, ours.end()) << res << heavy[k].name;
        ref_total += folded[k];
        our_total += it->second;
        if (!his) EXPECT_NEAR(it->second, folded[k], 2e-4) << res << heavy[k].name;
        ++compared;
      }
      EXPECT_NEAR(our_total, ref_total, 2e-3) << res;
    }
    EXPECT_GT(compared, 1590u);  // every protein atom and water of 1HPV
  }
}

// ---- special cases on small files ----

TEST(Charges, HistidineVariantsFromTheirHydrogens) {
  auto his = [](std::vector<std::string> extra) {
    std::vector<std::string> atoms = kHis;
    atoms.insert(atoms.end(), extra.begin(), extra.end());
    return atoms;
  };
  const std::string text = PdbWriter()
                               .residue("ALA", 'A', 1, kAla)
                               .residue("HIS", 'A', 2, his({"HD1"}))
                               .residue("HIS", 'A', 3, his({"HE2"}))
                               .residue("HIS", 'A', 4, his({"HD1", "HE2"}))
                               .residue("HIS", 'A', 5, kHis)
                               .residue("HSP", 'A', 6, kHis)
                               .residue("ALA", 'A', 7, kAla)
                               .text;
  const auto pdb = write_pdb(text);
  const io::Structure s = io::read_structure(pdb->path, options());
  const auto r = charges_by_residue(text, s.atoms);
  EXPECT_NEAR(r[1].total, 0, 1e-4);  // HID
  EXPECT_NEAR(r[1].atom.at("HD1"), dat_charge("AMBER", "HID", "HD1"), 1e-6);
  EXPECT_NEAR(r[1].atom.at("CE1"),
              dat_charge("AMBER", "HID", "CE1") + dat_charge("AMBER", "HID", "HE1"), 1e-5);
  EXPECT_NEAR(r[2].total, 0, 1e-4);  // HIE
  EXPECT_NEAR(r[2].atom.at("HE2"), dat_charge("AMBER", "HIE", "HE2"), 1e-6);
  EXPECT_NEAR(r[3].total, 1, 1e-4);  // HIP
  EXPECT_NEAR(r[3].atom.at("ND1"), dat_charge("AMBER", "HIP", "ND1"), 1e-6);
  EXPECT_NEAR(r[4].total, 0, 1e-4);  // no hydrogens: HIE, its HE2 folded onto NE2
  EXPECT_NEAR(r[4].atom.at("NE2"),
              dat_charge("AMBER", "HIE", "NE2") + dat_charge("AMBER", "HIE", "HE2"), 1e-5);
  EXPECT_NEAR(r[5].total, 1, 1e-4);  // CHARMM's name for HIP
}

TEST(Charges, TerminiAndDisulfides) {
  // Chain A: PRO (N-terminal, 2 hydrogens), CYS bonded to chain B's CYS, CYS free, ALA with OXT.
  // Chain B: ALA, CYS, GLY without OXT (C-terminal all the same).
  const std::array<double, 3> sg1{100, 100, 100}, sg2{102.04, 100, 100};
  const std::string text = PdbWriter()
                               .residue("PRO", 'A', 1, {"N", "CA", "C", "O", "CB", "CG", "CD"})
                               .residue("CYS", 'A', 2, kCys, 0, {{"SG", sg1}})
                               .residue("CYS", 'A', 3, kCys)
                               .residue("ALA", 'A', 4, {"N", "CA", "C", "O", "CB", "OXT"})
                               .ter()
                               .residue("ALA", 'B', 1, kAla)
                               .residue("CYS", 'B', 2, kCys, 0, {{"SG", sg2}})
                               .residue("GLY", 'B', 3, {"N", "CA", "C", "O"})
                               .text;
  const auto pdb = write_pdb(text);
  for (const char* ff : {"amber", "charmm"}) {
    SCOPED_TRACE(ff);
    const io::Structure s = io::read_structure(pdb->path, options(ff));
    const auto r = charges_by_residue(text, s.atoms);
    const std::vector<int> expected = {1, 0, 0, -1, 1, 0, -1};
    for (std::size_t i = 0; i < r.size(); ++i) EXPECT_NEAR(r[i].total, expected[i], 1e-4) << i;
    if (std::string(ff) == "amber") {
      EXPECT_NEAR(r[0].atom.at("N"),
                  dat_charge("AMBER", "NPRO", "N") + 2 * dat_charge("AMBER", "NPRO", "H2"), 1e-5);
      EXPECT_NEAR(r[1].atom.at("SG"), dat_charge("AMBER", "CYX", "SG"), 1e-6);  // bonded
      EXPECT_NEAR(r[2].atom.at("SG"),
                  dat_charge("AMBER", "CYS", "SG") + dat_charge("AMBER", "CYS", "HG"), 1e-5);
      EXPECT_NEAR(r[5].atom.at("SG"), dat_charge("AMBER", "CYX", "SG"), 1e-6);
      EXPECT_NEAR(r[3].atom.at("OXT"), dat_charge("AMBER", "CALA", "OXT"), 1e-6);
      EXPECT_NEAR(r[6].atom.at("O"),
                  dat_charge("AMBER", "CGLY", "O") + dat_charge("AMBER", "CGLY", "OXT"), 1e-5);
      EXPECT_NEAR(r[4].atom.at("N"),
                  dat_charge("AMBER", "NALA", "N") + 3 * dat_charge("AMBER", "NALA", "H1"), 1e-5);
    } else {
      EXPECT_NEAR(r[4].atom.at("N"),
                  dat_charge("CHARMM", "NTER", "N") + 3 * dat_charge("CHARMM", "NTER", "HT1"),
                  1e-5);
    }
  }
}

TEST(Charges, WatersAndIons) {
  const std::string text = PdbWriter()
                               .residue("HOH", 'W', 1, {"O"})
                               .residue("WAT", 'W', 2, {"O", "H1", "H2"})
                               .residue("TIP3", 'W', 3, {"OH2", "H1", "H2"})
                               .residue("SOL", 'W', 4, {"OW", "HW1", "HW2"})
                               .residue("NA", 'I', 1, {"NA"})
                               .residue("CL", 'I', 2, {"CL"})
                               .residue("MG", 'I', 3, {"MG"})
                               .residue("CA", 'I', 4, {"CA"})
                               .residue("ZN", 'I', 5, {"ZN"})
                               .residue("K", 'I', 6, {"K"})
                               .text;
  const auto pdb = write_pdb(text);
  const std::vector<double> ions = {1, -1, 2, 2, 2, 1};
  for (const char* ff : {"amber", "charmm", "parse"}) {
    SCOPED_TRACE(ff);
    const io::Structure s = io::read_structure(pdb->path, options(ff));
    const auto r = charges_by_residue(text, s.atoms);
    for (int w = 0; w < 4; ++w) EXPECT_NEAR(r[w].total, 0, 1e-5) << w;
    for (std::size_t i = 0; i < ions.size(); ++i)
      EXPECT_DOUBLE_EQ(r[4 + i].total, ions[i]) << r[4 + i].residue.name;
    const double oxygen = std::string(ff) == "amber"    ? dat_charge("AMBER", "WAT", "OW")
                          : std::string(ff) == "charmm" ? dat_charge("CHARMM", "TP3M", "OH2")
                                                        : dat_charge("PARSE", "H2O", "OH");
    EXPECT_NEAR(r[1].atom.at("O"), oxygen, 1e-6);
    EXPECT_NEAR(r[2].atom.at("OH2"), oxygen, 1e-6);
    EXPECT_NEAR(r[3].atom.at("OW"), oxygen, 1e-6);
    EXPECT_NEAR(r[3].atom.at("HW2"), -oxygen / 2, 1e-6);
  }

  // A table without water: TIP3P (PARSE's own water is -0.72/+0.36, so the two differ).
  const fs::path dir = temp_dir("nowater");
  for (const auto& entry : fs::directory_iterator(tables_dir()))
    fs::copy(entry.path(), dir / entry.path().filename());
  std::string dat;
  for (const std::string& line : lines_of(read_text(tables_dir() / "PARSE.DAT")))
    if (line.rfind("H2O", 0) != 0) dat += line + "\n";
  write_text(dir / "PARSE.DAT", dat);
  io::ReadOptions o = options("parse");
  o.forcefield_dir = dir;
  const auto r = charges_by_residue(text, io::read_structure(pdb->path, o).atoms);
  EXPECT_NEAR(r[0].atom.at("O"), 0.0, 1e-6);  // -0.834 + 2 * 0.417
  EXPECT_NEAR(r[1].atom.at("O"), -0.834, 1e-6);
  EXPECT_NEAR(r[1].atom.at("H1"), 0.417, 1e-6);
  fs::remove_all(dir);
}

TEST(Charges, ResidueNumbersRepeatedInOneChain) {
  // Large MD files wrap residue numbers; gemmi then files both waters "HOH 1" as one residue.
  const std::string text = PdbWriter()
                               .residue("HOH", 'W', 1, {"O", "H1", "H2"})
                               .residue("HOH", 'W', 2, {"O", "H1", "H2"})
                               .residue("HOH", 'W', 1, {"O", "H1", "H2"})
                               .text;
  const auto pdb = write_pdb(text);
  const io::Structure s = io::read_structure(pdb->path, options());
  ASSERT_EQ(s.atoms.size(), 9u);
  int oxygens = 0;
  for (float q : s.atoms.q)
    oxygens += std::abs(q - float(dat_charge("AMBER", "WAT", "OW"))) < 1e-6f;
  EXPECT_EQ(oxygens, 3);
  EXPECT_NEAR(s.atoms.total_charge(), 0.0, 1e-5);
}

TEST(Charges, NucleotideStrand) {
  // A 5'-DA-DT-3' strand, heavy atoms only (modern OP1/OP2 names); the 5' end has no phosphate.
  // Each strand of n nucleotides carries n-1 phosphates: -1 here, in both force fields.
  const std::vector<std::string> sugar = {"O5'", "C5'", "C4'", "O4'", "C3'", "O3'", "C2'", "C1'"};
  std::vector<std::string> da = sugar, dt = {"P", "OP1", "OP2"};
  for (const char* a : {"N9", "C8", "N7", "C5", "C6", "N6", "N1", "C2", "N3", "C4"})
    da.push_back(a);
  dt.insert(dt.end(), sugar.begin(), sugar.end());
  for (const char* a : {"N1", "C2", "O2", "N3", "C4", "O4", "C5", "C7", "C6"}) dt.push_back(a);
  const std::string text = PdbWriter().residue("DA", 'A', 1, da).residue("DT", 'A', 2, dt).text;
  const auto pdb = write_pdb(text);
  for (const char* ff : {"amber", "charmm"}) {
    SCOPED_TRACE(ff);
    const io::Structure s = io::read_structure(pdb->path, options(ff));
    EXPECT_NEAR(s.atoms.total_charge(), -1.0, 1e-3);
  }
  const auto r = charges_by_residue(text, io::read_structure(pdb->path, options()).atoms);
  EXPECT_NEAR(r[0].total, dat_total("AMBER", "DA5"), 1e-4);  // all of DA5, hydrogens folded
  EXPECT_NEAR(r[1].total, dat_total("AMBER", "DT3"), 1e-4);
  EXPECT_NEAR(r[1].atom.at("OP1"), dat_charge("AMBER", "DT3", "O1P"), 1e-6);
}

TEST(Charges, UnknownResiduesAndAtoms) {
  // 1HPV's inhibitor is in no table.
  try {
    io::read_structure(data_file("1hpv.pdb"), options());
    ADD_FAILURE() << "unknown ligand accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file, data_file("1hpv.pdb").string());
    EXPECT_EQ(e.line, 0u);
    EXPECT_NE(e.problem.find("478 200"), std::string::npos) << e.what();
    EXPECT_NE(e.problem.find("--unknown zero"), std::string::npos) << e.what();
  }
  const io::Structure zeroed = io::read_structure(data_file("1hpv.pdb"), options("amber", true));
  ASSERT_FALSE(zeroed.warnings.empty());
  EXPECT_NE(zeroed.warnings[0].find("478 200"), std::string::npos) << zeroed.warnings[0];
  const std::string text = read_text(data_file("1hpv.pdb"));
  const auto r = charges_by_residue(text, zeroed.atoms);
  for (const auto& rc : r) {
    if (rc.residue.name == "478")
      for (const auto& [atom, q] : rc.atom) EXPECT_EQ(q, 0.0) << atom;
    else
      EXPECT_TRUE(near_integer(rc.total)) << rc.residue.key;
  }

  // An atom a known residue does not have: listed with residue, number, chain and atom.
  std::vector<std::string> odd = kAla;
  odd.push_back("XX1");
  const std::string small = PdbWriter()
                                .residue("GLY", 'C', 1, {"N", "CA", "C", "O"})
                                .residue("ALA", 'C', 2, odd)
                                .residue("GLY", 'C', 3, {"N", "CA", "C", "O"})
                                .text;
  const auto pdb = write_pdb(small);
  try {
    io::read_structure(pdb->path, options());
    ADD_FAILURE() << "unknown atom accepted";
  } catch (const InputError& e) {
    EXPECT_NE(e.problem.find("ALA 2 C: atom XX1"), std::string::npos) << e.what();
  }
  const io::Structure s = io::read_structure(pdb->path, options("amber", true));
  const auto rs = charges_by_residue(small, s.atoms);
  EXPECT_EQ(rs[1].atom.at("XX1"), 0.0);
  EXPECT_NEAR(rs[1].total, 0.0, 1e-4);
  EXPECT_NEAR(s.atoms.total_charge(), 0.0, 1e-4);
}
