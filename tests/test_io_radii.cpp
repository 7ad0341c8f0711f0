// Atomic radii of inputs without a radius column: PDB/mmCIF atoms take their force-field entry's
// radius (the same as pdb2pqr's own PQR of 1HPV, atom by atom), the element's van der Waals radius
// where the table gives none or 0 (waters, ions, hydroxyl hydrogens, unknown atoms); PDBQT, XYZ and
// MOL2 atoms take their element's (fill_missing_radii), read from their records; inputs that name
// no element are refused with the line.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <map>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/structure/atom_labels.hpp"
#include "dcsgrid/io/structure/element_radii.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"
#include "test_io_read_files.hpp"

using namespace dcsgrid;
using namespace dcsgrid::test;
namespace fs = std::filesystem;

namespace {

fs::path tables_dir() { return data_file("pdb2pqr"); }

io::ReadOptions options(const std::string& forcefield, bool unknown_zero = true) {
  io::ReadOptions o;
  o.forcefield = forcefield;
  o.forcefield_dir = tables_dir();
  o.unknown_zero = unknown_zero;
  return o;
}

// A radius straight from a .DAT file's text, in the force field's own names.
double dat_radius(const std::string& forcefield, const std::string& residue, const std::string& atom) {
  for (const std::string& line : lines_of(read_text(tables_dir() / (forcefield + ".DAT")))) {
    const auto w = words(line);
    if (w.size() >= 4 && w[0] == residue && w[1] == atom) return std::stod(w[3]);
  }
  throw std::runtime_error(forcefield + ".DAT has no " + residue + " " + atom);
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

using Position = std::array<long, 3>;
Position key(double x, double y, double z) {
  return {std::lround(x * 1000), std::lround(y * 1000), std::lround(z * 1000)};
}

// One atom of pdb2pqr's PQR: name, chain and residue number by PDB columns, numbers from the end.
struct PqrAtom {
  std::string name, chain, number;
  Position at;
  double radius;
};

std::vector<PqrAtom> pqr_atoms(const fs::path& path) {
  std::vector<PqrAtom> out;
  for (const std::string& line : atom_lines(read_text(path))) {
    const auto w = words(line);
    const std::size_t n = w.size();
    out.push_back({trimmed(line.substr(12, 4)), trimmed(line.substr(21, 1)), trimmed(line.substr(22, 4)),
                   key(std::stod(w[n - 5]), std::stod(w[n - 4]), std::stod(w[n - 3])), std::stod(w[n - 1])});
  }
  return out;
}

// A PDB ATOM/HETATM record in fixed columns, element in 77-78.
std::string pdb_record(int serial, const std::string& name, const std::string& residue, const std::string& chain,
                       int number, double x, const std::string& element) {
  char line[100];
  const std::string padded = name.size() < 4 ? " " + name : name;
  std::snprintf(line, sizeof line, "%-6s%5d %-4s %3s %1s%4d    %8.3f%8.3f%8.3f%6.2f%6.2f          %2s\n",
                residue == "SER" ? "ATOM" : "HETATM", serial, padded.c_str(), residue.c_str(), chain.c_str(),
                number, x, 0.0, 0.0, 1.0, 0.0, element.c_str());
  return line;
}

}  // namespace

TEST(ElementRadii, BondiAndMantinaValues) {
  const std::map<std::string, double> expected = {
      {"H", 1.20}, {"C", 1.70}, {"N", 1.55}, {"O", 1.52},  {"F", 1.47},  {"P", 1.80},  {"S", 1.80},
      {"CL", 1.75}, {"Br", 1.85}, {"I", 1.98}, {"Na", 2.27}, {"K", 2.75}, {"MG", 1.73}, {"Zn", 1.39},
      {"ca", 2.31}, {"D", 1.20}};
  for (const auto& [element, radius] : expected) {
    ASSERT_TRUE(io::element_radius(element)) << element;
    EXPECT_DOUBLE_EQ(*io::element_radius(element), radius) << element;
  }
  for (const char* none : {"Fe", "X", "", "Du", "CA1"}) EXPECT_FALSE(io::element_radius(none)) << none;
  EXPECT_EQ(io::element_from_atom_name("1HB"), "H");
  EXPECT_EQ(io::element_from_atom_name("HB2"), "H");
  EXPECT_EQ(io::element_from_atom_name("HG21"), "H");
  EXPECT_EQ(io::element_from_atom_name("CA"), "C");
  EXPECT_EQ(io::element_from_atom_name("OXT"), "O");
  EXPECT_EQ(io::element_from_atom_name("1C4A"), "C");
  EXPECT_EQ(io::element_from_atom_name("12"), "");
}

// Every heavy atom of pdb2pqr's PQR of 1HPV has, in dcsgrid's reading of the PDB and mmCIF files, an
// atom of the same chain, residue number, name and position with the same radius, for each force
// field (pdb2pqr leaves the inhibitor out, and adds the hydrogens).
TEST(Radii, AgreeWithPdb2pqrOnHeavyAtoms) {
  for (const char* ff : {"amber", "charmm", "parse"}) {
    const std::vector<PqrAtom> reference = pqr_atoms(data_file(std::string("1hpv_pdb2pqr_") + ff + ".pqr.gz"));
    for (const char* input : {"1hpv.pdb", "1hpv.cif.gz"}) {
      SCOPED_TRACE(std::string(ff) + " " + input);
      const io::Structure s = io::read_structure(data_file(input), options(ff));
      ASSERT_TRUE(s.atoms.has_radii());
      EXPECT_NE(s.radius_source.find(".DAT"), std::string::npos) << s.radius_source;
      const std::vector<io::AtomLabel> labels = io::atom_labels(data_file(input), s);
      std::map<Position, std::size_t> ours;
      for (std::size_t i = 0; i < s.atoms.size(); ++i) {
        ours[key(s.atoms.x[i], s.atoms.y[i], s.atoms.z[i])] = i;
        EXPECT_GT(s.atoms.r[i], 0.5f) << labels[i].name << " " << labels[i].residue_number;
      }
      std::size_t compared = 0;
      for (const PqrAtom& a : reference) {
        if (a.name[0] == 'H') continue;
        const auto it = ours.find(a.at);
        ASSERT_NE(it, ours.end()) << a.chain << " " << a.number << " " << a.name;
        const io::AtomLabel& l = labels[it->second];
        EXPECT_EQ(l.name, a.name);
        EXPECT_EQ(l.chain, a.chain);
        EXPECT_EQ(l.residue_number, a.number);
        EXPECT_NEAR(s.atoms.r[it->second], a.radius, 1e-5) << a.chain << " " << a.number << " " << a.name;
        ++compared;
      }
      EXPECT_EQ(compared, 1596u);  // 2 × 758 protein heavy atoms, 80 waters
    }
  }
}

// Table radius 0 (AMBER's serine HG and water hydrogens), TIP3P, ions the table lacks (AMBER has
// none) or has (CHARMM's SOD), and unknown atoms zeroed: the element's radius, or the table's where
// it has one; an element without a radius leaves 0 and says so.
TEST(Radii, ElementFallbackWhereTheTableGivesNone) {
  const fs::path dir = temp_dir("radii_fallback");
  const std::vector<std::array<std::string, 4>> atoms = {
      // name, residue, chain, element
      {"N", "SER", "A", "N"},   {"CA", "SER", "A", "C"}, {"C", "SER", "A", "C"},  {"O", "SER", "A", "O"},
      {"CB", "SER", "A", "C"},  {"OG", "SER", "A", "O"}, {"HG", "SER", "A", "H"}, {"O", "HOH", "W", "O"},
      {"H1", "HOH", "W", "H"},  {"H2", "HOH", "W", "H"}, {"NA", "NA", "I", "NA"}, {"ZN", "ZN", "J", "ZN"},
      {"C1", "LIG", "L", "C"},  {"CL1", "LIG", "L", "CL"}, {"FE", "HEM", "M", "FE"}};
  std::string text;
  int number = 0;
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    if (i == 0 || atoms[i][1] != atoms[i - 1][1]) ++number;
    text += pdb_record(int(i + 1), atoms[i][0], atoms[i][1], atoms[i][2], number, 4.0 * double(i), atoms[i][3]);
  }
  write_text(dir / "mixed.pdb", text);
  const io::Structure s = io::read_structure(dir / "mixed.pdb", options("amber"));
  ASSERT_EQ(s.atoms.size(), atoms.size());
  ASSERT_TRUE(s.atoms.has_radii());
  const std::vector<double> expected = {
      dat_radius("AMBER", "NSER", "N"), dat_radius("AMBER", "NSER", "CA"), dat_radius("AMBER", "NSER", "C"),
      dat_radius("AMBER", "NSER", "O"), dat_radius("AMBER", "NSER", "CB"), dat_radius("AMBER", "NSER", "OG"),
      1.20,  // NSER HG: 0 in the table
      dat_radius("AMBER", "WAT", "OW"), 1.20, 1.20,  // WAT HW: 0
      2.27, 1.39,   // Bondi Na, Zn
      1.70, 1.75,   // unknown ligand, zeroed: C, Cl
      0.0};         // Fe: no radius in the table
  ASSERT_EQ(dat_radius("AMBER", "NSER", "HG"), 0.0);
  ASSERT_EQ(dat_radius("AMBER", "WAT", "HW"), 0.0);
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(s.atoms.r[i], expected[i], 1e-6) << atoms[i][0] << " " << atoms[i][1];
  EXPECT_NE(s.radius_source.find("Bondi"), std::string::npos) << s.radius_source;
  EXPECT_NE(s.radius_source.find("for 7 atoms"), std::string::npos) << s.radius_source;
  std::string warnings;
  for (const auto& w : s.warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("radius 0 for atoms"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("HEM 6 M FE (Fe)"), std::string::npos) << warnings;

  // CHARMM has sodium: its table radius, not Bondi's.
  write_text(dir / "sod.pdb", pdb_record(1, "SOD", "SOD", "I", 1, 0.0, "NA"));
  const io::Structure sod = io::read_structure(dir / "sod.pdb", options("charmm"));
  ASSERT_TRUE(sod.atoms.has_radii());
  EXPECT_NEAR(sod.atoms.r[0], dat_radius("CHARMM", "SOD", "SOD"), 1e-6);
  EXPECT_NEAR(sod.atoms.q[0], 1.0, 1e-6);
}

// An absent hydrogen gives its charge to its heavy atom, not its radius: 1HPV's atoms (no
// hydrogens) carry the table radius of their own entry, which the pdb2pqr test above checks; here
// the serine's OG with and without its HG.
TEST(Radii, FoldedHydrogenLeavesTheRadius) {
  const fs::path dir = temp_dir("radii_fold");
  const char* names[] = {"N", "CA", "C", "O", "CB", "OG", "HG"};
  std::string with, without;
  for (int i = 0; i < 7; ++i) {
    const std::string record = pdb_record(i + 1, names[i], "SER", "A", 1, 1.5 * i, i == 6 ? "H" : std::string(1, names[i][0]));
    with += record;
    if (i < 6) without += record;
  }
  write_text(dir / "with.pdb", with);
  write_text(dir / "without.pdb", without);
  const io::Structure a = io::read_structure(dir / "with.pdb", options("amber", false));
  const io::Structure b = io::read_structure(dir / "without.pdb", options("amber", false));
  ASSERT_EQ(b.atoms.size(), 6u);
  EXPECT_NEAR(b.atoms.q[5], a.atoms.q[5] + a.atoms.q[6], 1e-6);  // the charge moved
  EXPECT_EQ(b.atoms.r[5], a.atoms.r[5]);                         // the radius did not
  EXPECT_NEAR(b.atoms.r[5], dat_radius("AMBER", "NSER", "OG"), 1e-6);
}

// PDBQT: each atom's AutoDock type (columns 78-79) read here on its own.
TEST(Radii, PdbqtAtomsTakeTheirTypesElement) {
  const std::map<std::string, double> by_type = {{"C", 1.70}, {"A", 1.70}, {"N", 1.55}, {"NA", 1.55}, {"OA", 1.52},
                                                 {"SA", 1.80}, {"S", 1.80}, {"HD", 1.20}, {"H", 1.20}, {"P", 1.80}};
  for (const char* file : {"1pgp_lig.pdbqt", "1pgp_rec.pdbqt.gz"}) {
    SCOPED_TRACE(file);
    io::Structure s = io::read_structure(data_file(file));
    EXPECT_FALSE(s.atoms.has_radii());
    io::fill_missing_radii(s, data_file(file));
    ASSERT_TRUE(s.atoms.has_radii());
    EXPECT_EQ(s.radius_source, io::kElementRadiiSource);
    const std::vector<std::string> lines = atom_lines(read_text(data_file(file)));
    ASSERT_EQ(lines.size(), s.atoms.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string type = trimmed(lines[i].substr(77, 2));
      ASSERT_TRUE(by_type.count(type)) << type;
      EXPECT_NEAR(s.atoms.r[i], by_type.at(type), 1e-6) << lines[i];
    }
  }
}

TEST(Radii, XyzAndMol2AtomsTakeTheirElement) {
  // The second frame's atoms: their lines point into that frame.
  io::ReadOptions second;
  second.model = 2;
  io::Structure water = io::read_structure(data_file("water_dimer_2frames.xyz"), second);
  io::fill_missing_radii(water, data_file("water_dimer_2frames.xyz"));
  ASSERT_EQ(water.atoms.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(water.atoms.r[i], i % 3 == 0 ? 1.52 : 1.20, 1e-6) << i;

  const fs::path dir = temp_dir("radii_mol2");
  write_text(dir / "lig.mol2",
             "@<TRIPOS>MOLECULE\nlig\n3 0 0 0 0\nSMALL\nUSER_CHARGES\n\n@<TRIPOS>ATOM\n"
             "      1 C1   0.0 0.0 0.0 C.ar   1 LIG  0.1\n"
             "      2 N1   1.4 0.0 0.0 N.am   1 LIG -0.2\n"
             "      3 CL1  2.8 0.0 0.0 Cl     1 LIG  0.1\n");
  io::Structure mol2 = io::read_structure(dir / "lig.mol2");
  io::fill_missing_radii(mol2, dir / "lig.mol2");
  ASSERT_EQ(mol2.atoms.size(), 3u);
  EXPECT_NEAR(mol2.atoms.r[0], 1.70, 1e-6);
  EXPECT_NEAR(mol2.atoms.r[1], 1.55, 1e-6);
  EXPECT_NEAR(mol2.atoms.r[2], 1.75, 1e-6);
}

TEST(Radii, InputsWithoutElementsAreRefusedWithTheLine) {
  io::Structure plain = io::read_structure(data_file("nacl_plain.xyz"));
  const std::string message = error_message([&] { io::fill_missing_radii(plain, data_file("nacl_plain.xyz")); });
  EXPECT_NE(message.find("nacl_plain.xyz:2: atom 1 names no element"), std::string::npos) << message;
  EXPECT_FALSE(plain.atoms.has_radii());

  const fs::path dir = temp_dir("radii_refused");
  write_text(dir / "fe.xyz", "2\niron\nO 0 0 0 -1\nFe 2 0 0 1\n");
  io::Structure iron = io::read_structure(dir / "fe.xyz");
  const std::string fe = error_message([&] { io::fill_missing_radii(iron, dir / "fe.xyz"); });
  EXPECT_NE(fe.find("fe.xyz:4: atom 2: element 'Fe' has no van der Waals radius"), std::string::npos) << fe;

  // A structure with radii keeps them.
  io::Structure pqr = io::read_structure(data_file("1d7h-min.pqr"));
  const std::vector<float> radii = pqr.atoms.r;
  io::fill_missing_radii(pqr, data_file("1d7h-min.pqr"));
  EXPECT_EQ(pqr.atoms.r, radii);
  EXPECT_EQ(pqr.radius_source, "file");
}
