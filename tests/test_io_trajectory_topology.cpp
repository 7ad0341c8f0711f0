// PSF and PRMTOP topologies against MDAnalysis' topology readers: small files written here in
// each layout (CHARMM standard with numeric types, X-PLOR with named types, EXT, a blank
// segment name; PRMTOP with AMBER's charge unit), charges, names and residues compared.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <iomanip>
#include <sstream>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/topology/topology.hpp"
#include "test_io_trajectory_util.hpp"

namespace dcsgrid::test {
namespace {

namespace fs = std::filesystem;

struct Atom {
  std::string name, resname;
  int resid;
  double charge;
};

// 23 atoms in 5 residues, charges with six decimals (PSF) in [-1, 1].
std::vector<Atom> sample_atoms(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> q(-1, 1);
  const char* names[] = {"N", "CA", "C", "O", "HN", "CB", "OG1", "HG1"};
  const char* residues[] = {"ALA", "SER", "THR", "TIP3", "LYS"};
  std::vector<Atom> atoms;
  for (int i = 0; i < 23; ++i)
    atoms.push_back({names[i % 8], residues[i / 5], 10 + i / 5, std::round(q(rng) * 1e6) / 1e6});
  return atoms;
}

enum class PsfLayout { charmm, xplor, ext, blank_segment };

std::string psf_text(const std::vector<Atom>& atoms, PsfLayout layout) {
  std::ostringstream out;
  out << (layout == PsfLayout::ext ? "PSF EXT\n" : layout == PsfLayout::xplor ? "PSF XPLOR\n" : "PSF\n")
      << "\n       1 !NTITLE\n REMARKS written by test_io_trajectory_topology\n\n"
      << std::setw(layout == PsfLayout::ext ? 10 : 8) << atoms.size() << " !NATOM\n";
  char line[200];
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    const Atom& a = atoms[i];
    const char* segment = layout == PsfLayout::blank_segment ? "" : "PROA";
    if (layout == PsfLayout::ext)
      std::snprintf(line, sizeof line, "%10zu %-8s %-8d %-8s %-8s %-4s %14.6f%14.4f%8d\n", i + 1,
                    segment, a.resid, a.resname.c_str(), a.name.c_str(), "CT1", a.charge, 12.011, 0);
    else if (layout == PsfLayout::xplor)
      std::snprintf(line, sizeof line, "%8zu %-4s %-4d %-4s %-4s %-4s %14.6f%14.4f%8d\n", i + 1,
                    segment, a.resid, a.resname.c_str(), a.name.c_str(), "CT1", a.charge, 12.011, 0);
    else
      std::snprintf(line, sizeof line, "%8zu %-4s %-4d %-4s %-4s %4d %14.6f%14.4f%8d\n", i + 1,
                    segment, a.resid, a.resname.c_str(), a.name.c_str(), 22, a.charge, 12.011, 0);
    out << line;
  }
  out << "\n       0 !NBOND: bonds\n\n";
  return out.str();
}

// A PRMTOP with the sections MDAnalysis' reader needs (empty bonded lists); charges stored in
// AMBER's unit (e · 18.2223).
std::string prmtop_text(const std::vector<Atom>& atoms) {
  std::ostringstream out;
  out << "%VERSION  VERSION_STAMP = V0001.000  DATE = 01/01/26  00:00:00\n"
      << "%FLAG TITLE\n%FORMAT(20a4)\ntest\n%FLAG POINTERS\n%FORMAT(10I8)\n";
  std::vector<int> pointers(31, 0);
  pointers[0] = int(atoms.size());
  pointers[11] = 5;
  for (std::size_t i = 0; i < 31; ++i)
    out << std::setw(8) << pointers[i] << ((i % 10 == 9 || i == 30) ? "\n" : "");
  const auto section = [&](const char* flag, const char* format, std::size_t per_line,
                           const std::vector<std::string>& values) {
    out << "%FLAG " << flag << "\n%FORMAT(" << format << ")\n";
    for (std::size_t i = 0; i < values.size(); ++i)
      out << values[i] << ((i % per_line == per_line - 1 || i + 1 == values.size()) ? "\n" : "");
    if (values.empty()) out << "\n";
  };
  std::vector<std::string> names, charges, labels, pointers_text;
  char field[32];
  for (const Atom& a : atoms) {
    std::snprintf(field, sizeof field, "%-4s", a.name.c_str());
    names.push_back(field);
    std::snprintf(field, sizeof field, "%16.8E", a.charge * 18.2223);
    charges.push_back(field);
  }
  for (int r = 0; r < 5; ++r) {
    std::snprintf(field, sizeof field, "%-4s", atoms[std::size_t(5 * r)].resname.c_str());
    labels.push_back(field);
    std::snprintf(field, sizeof field, "%8d", 5 * r + 1);
    pointers_text.push_back(field);
  }
  section("ATOM_NAME", "20a4", 20, names);
  section("CHARGE", "5E16.8", 5, charges);
  section("RESIDUE_LABEL", "20a4", 20, labels);
  section("RESIDUE_POINTER", "10I8", 10, pointers_text);
  for (const char* flag : {"BONDS_INC_HYDROGEN", "BONDS_WITHOUT_HYDROGEN", "ANGLES_INC_HYDROGEN",
                           "ANGLES_WITHOUT_HYDROGEN", "DIHEDRALS_INC_HYDROGEN",
                           "DIHEDRALS_WITHOUT_HYDROGEN"})
    section(flag, "10I8", 10, {});
  return out.str();
}

struct MdaAtom {
  std::string name, resname;
  int resid;
  double charge;
};

std::vector<MdaAtom> mdanalysis_atoms(const fs::path& topology) {
  run_mda("charges " + topology.string());
  std::vector<MdaAtom> atoms;
  std::ifstream in(topology.string() + ".charges");
  for (MdaAtom a; in >> a.name >> a.resname >> a.resid >> a.charge;) atoms.push_back(a);
  return atoms;
}

void expect_same_atoms(const io::Topology& top, const std::vector<MdaAtom>& ref, bool resids) {
  ASSERT_EQ(top.atoms.size(), ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    EXPECT_NEAR(top.atoms.q[i], ref[i].charge, 1e-6 * std::max(1.0, std::abs(ref[i].charge))) << i;
    EXPECT_EQ(top.atom_names[i], ref[i].name) << i;
    EXPECT_EQ(top.residue_names[i], ref[i].resname) << i;
    if (resids) EXPECT_EQ(top.residue_numbers[i], ref[i].resid) << i;
    EXPECT_EQ(top.atoms.x[i], 0.0f);
  }
}

TEST(IoTopology, PsfLayoutsMatchMDAnalysis) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path dir = temp_dir("topology_psf");
  int n = 0;
  for (PsfLayout layout : {PsfLayout::charmm, PsfLayout::xplor, PsfLayout::ext, PsfLayout::blank_segment}) {
    const auto atoms = sample_atoms(std::uint64_t(++n));
    const fs::path path = dir / ("t" + std::to_string(n) + ".psf");
    std::ofstream(path) << psf_text(atoms, layout);
    const io::Topology top = io::read_topology(path);
    const auto ref = mdanalysis_atoms(path);
    if (HasFatalFailure()) return;
    SCOPED_TRACE("layout " + std::to_string(n));
    expect_same_atoms(top, ref, true);
    // Against the values written as well.
    for (std::size_t i = 0; i < atoms.size(); ++i)
      EXPECT_NEAR(top.atoms.q[i], atoms[i].charge, 1e-7);
  }
  fs::remove_all(dir);
}

TEST(IoTopology, PrmtopChargesInElectronsMatchMDAnalysis) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path dir = temp_dir("topology_prmtop");
  const auto atoms = sample_atoms(9);
  const fs::path path = dir / "t.prmtop";
  std::ofstream(path) << prmtop_text(atoms);
  const io::Topology top = io::read_topology(path);
  const auto ref = mdanalysis_atoms(path);
  if (HasFatalFailure()) return;
  // MDAnalysis numbers PRMTOP residues from 1 as we do.
  expect_same_atoms(top, ref, true);
  for (std::size_t i = 0; i < atoms.size(); ++i) EXPECT_NEAR(top.atoms.q[i], atoms[i].charge, 1e-7);
  // Gzipped, as topologies are often kept.
  ASSERT_EQ(run_command("gzip -k " + path.string()).status, 0);
  const io::Topology gz = io::read_topology(path.string() + ".gz");
  EXPECT_EQ(gz.atoms.q, top.atoms.q);
  EXPECT_EQ(gz.atom_names, top.atom_names);
  EXPECT_NEAR(top.atoms.total_charge(), [&] {
    double s = 0;
    for (const Atom& a : atoms) s += a.charge;
    return s;
  }(), 1e-5);
  fs::remove_all(dir);
}

TEST(IoTopology, MalformedFilesNameFileAndLine) {
  const fs::path dir = temp_dir("topology_bad");
  const auto atoms = sample_atoms(3);
  std::string psf = psf_text(atoms, PsfLayout::charmm);
  // The charge of atom 4 (columns 35-48 of line 10) made into text.
  const std::size_t line4 = psf.find("\n       4 ") + 1;
  ASSERT_NE(line4, 0u);
  std::string bad = psf;
  bad.replace(line4 + 34, 14, "           abc");
  std::ofstream(dir / "bad.psf") << bad;
  try {
    io::read_psf(dir / "bad.psf");
    FAIL() << "bad charge accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file, (dir / "bad.psf").string());
    EXPECT_EQ(e.line, 10u) << e.what();
    EXPECT_NE(std::string(e.what()).find("abc"), std::string::npos) << e.what();
  }
  // Fewer atom lines than !NATOM says.
  std::ofstream(dir / "short.psf") << psf.substr(0, psf.find("      20 PROA"));
  EXPECT_THROW(io::read_psf(dir / "short.psf"), InputError);
  // PRMTOP without its CHARGE section.
  std::string prmtop = prmtop_text(atoms);
  prmtop.replace(prmtop.find("%FLAG CHARGE"), 12, "%FLAG CHARGX");
  std::ofstream(dir / "nocharge.prmtop") << prmtop;
  try {
    io::read_topology(dir / "nocharge.prmtop");
    FAIL() << "PRMTOP without charges accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("CHARGE"), std::string::npos) << e.what();
  }
  EXPECT_THROW(io::read_topology(dir / "x.mol9"), InputError);
  fs::remove_all(dir);
}

// Found by fuzz_psf (fuzz/): a !NATOM count of 10^14 reserved memory for that many atoms before
// reading one (out of memory; std::length_error beyond). Counts are the file's word: refused
// cleanly, naming the file, when the lines are not there; a PRMTOP count that is no 8-digit
// integer (1E+30 made a float-to-integer conversion overflow) likewise.
TEST(IoTopology, HeaderCountsBeyondTheFileAreRefused) {
  const fs::path dir = temp_dir("topology_counts");
  const auto atoms = sample_atoms(3);
  const auto expect_refused = [](const fs::path& path, const std::string& words) {
    try {
      io::read_topology(path);
      ADD_FAILURE() << path << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file, path.string());
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  std::string psf = psf_text(atoms, PsfLayout::charmm);
  const std::size_t natom = psf.find(" !NATOM");
  ASSERT_NE(natom, std::string::npos);
  const std::size_t line_start = psf.rfind('\n', natom) + 1;
  psf.replace(line_start, natom - line_start, "99999999999999");
  std::ofstream(dir / "huge.psf") << psf;
  expect_refused(dir / "huge.psf", "an atom line needs");  // the blank line after atom 23
  std::string prmtop = prmtop_text(atoms);
  const std::size_t natom_field = prmtop.find("%FORMAT(10I8)\n") + 14;  // POINTERS' first field
  ASSERT_EQ(prmtop.substr(natom_field, 8), "      23");
  std::string huge = prmtop;
  std::ofstream(dir / "huge.prmtop") << huge.replace(natom_field, 8, "   1E+30");
  expect_refused(dir / "huge.prmtop", "POINTERS give 1e+30 atoms");
  std::ofstream(dir / "many.prmtop") << prmtop.replace(natom_field, 8, "99999999");
  expect_refused(dir / "many.prmtop", "CHARGE holds 23 values, 99999999 expected");
  fs::remove_all(dir);
}

TEST(IoTopology, SetCoordinatesCopiesAFrame) {
  io::Topology top;
  top.atoms.push_back(0, 0, 0, 0.5);
  top.atoms.push_back(0, 0, 0, -0.5);
  const float xyz[6] = {1, 2, 3, 4, 5, 6};
  io::set_coordinates(top.atoms, xyz);
  EXPECT_EQ(top.atoms.x, (std::vector<float>{1, 4}));
  EXPECT_EQ(top.atoms.y, (std::vector<float>{2, 5}));
  EXPECT_EQ(top.atoms.z, (std::vector<float>{3, 6}));
  EXPECT_EQ(top.atoms.q, (std::vector<float>{0.5f, -0.5f}));
}

}  // namespace
}  // namespace dcsgrid::test
