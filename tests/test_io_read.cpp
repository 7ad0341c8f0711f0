// The readers on the real files of data/ and on broken inputs: atom counts, coordinates and
// charges against the file text parsed here independently, gzip equal to plain, models, altlocs,
// and an InputError naming file, line and problem for every malformed input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"
#include "test_io_read_files.hpp"

using namespace dcsgrid;
using namespace dcsgrid::test;
namespace fs = std::filesystem;

namespace {

// Structures read from the pdb2pqr tables shipped in data/ (the tests do not depend on the
// installed package).
io::ReadOptions test_options() {
  io::ReadOptions o;
  o.forcefield_dir = data_file("pdb2pqr");
  o.unknown_zero = true;
  return o;
}

// Reading `name` from data/ equals reading it the other way round: gzipped if plain, plain if
// gzipped, written to a temp folder.
void expect_gz_equals_plain(const std::string& name, const io::ReadOptions& options = {}) {
  const fs::path original = data_file(name);
  const fs::path dir = temp_dir("gz");
  const std::string text = read_text(original);
  fs::path other;
  if (name.ends_with(".gz")) {
    other = dir / fs::path(name).stem();
    write_text(other, text);
  } else {
    other = dir / (name + ".gz");
    write_gz(other, text);
  }
  expect_same_atoms(io::read_structure(original, options).atoms,
                    io::read_structure(other, options).atoms);
  fs::remove_all(dir);
}

struct PdbColumns {  // atom-record fields by fixed columns
  double x, y, z;
};
PdbColumns pdb_columns(const std::string& line) {
  return {column_number(line, 31, 38), column_number(line, 39, 46), column_number(line, 47, 54)};
}

void expect_atom_at(const AtomSet& atoms, std::size_t i, double x, double y, double z) {
  EXPECT_NEAR(atoms.x[i], x, 1e-4) << "atom " << i;
  EXPECT_NEAR(atoms.y[i], y, 1e-4) << "atom " << i;
  EXPECT_NEAR(atoms.z[i], z, 1e-4) << "atom " << i;
}

}  // namespace

TEST(ReadFormat, FromExtension) {
  EXPECT_EQ(io::format_from_path("a.pqr"), io::Format::pqr);
  EXPECT_EQ(io::format_from_path("dir.x/A.PDB"), io::Format::pdb);
  EXPECT_EQ(io::format_from_path("pdb1abc.ent.gz"), io::Format::pdb);
  EXPECT_EQ(io::format_from_path("x.cif"), io::Format::mmcif);
  EXPECT_EQ(io::format_from_path("x.mmcif.gz"), io::Format::mmcif);
  EXPECT_EQ(io::format_from_path("lig.pdbqt"), io::Format::pdbqt);
  EXPECT_EQ(io::format_from_path("w.xyz.GZ"), io::Format::xyz);
  EXPECT_EQ(io::format_from_path("lig.mol2"), io::Format::mol2);
  EXPECT_EQ(io::format_from_path("x.pdb.bz2"), io::Format::pdb);
  EXPECT_EQ(io::format_from_path("x.pqr.XZ"), io::Format::pqr);
  for (const char* bad : {"x.sdf", "x.gz", "noext", "x.pdb.zip"}) {
    try {
      io::format_from_path(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file, bad);
      EXPECT_EQ(e.line, 0u);
      EXPECT_NE(e.problem.find(".pqr .pdb .ent .cif .mmcif .pdbqt .xyz or .mol2"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ReadPqr, RealFileMatchesItsText) {
  const fs::path path = data_file("1d7h-min.pqr");
  const auto lines = atom_lines(read_text(path));
  const io::Structure s = io::read_structure(path);
  ASSERT_EQ(s.atoms.size(), lines.size());
  EXPECT_EQ(s.charge_source, "file");
  EXPECT_EQ(s.models_in_file, 1);
  double total = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto w = words(lines[i]);
    const double q = std::stod(w[w.size() - 2]);
    total += q;
    EXPECT_NEAR(s.atoms.q[i], q, 1e-6);
    ASSERT_TRUE(s.atoms.has_radii());
    EXPECT_NEAR(s.atoms.r[i], std::stod(w.back()), 1e-6);
    if (i % 97 == 0 || i + 1 == lines.size())
      expect_atom_at(s.atoms, i, std::stod(w[w.size() - 5]), std::stod(w[w.size() - 4]),
                     std::stod(w[w.size() - 3]));
  }
  EXPECT_NEAR(s.atoms.total_charge(), total, 1e-4);
}

TEST(ReadPqr, ChainOptionalAndLongSerials) {
  const fs::path dir = temp_dir("pqr");
  const fs::path path = dir / "mixed.pqr";
  write_text(path,
             "REMARK   1 chain column present in some lines only\n"
             "ATOM      1  N   GLY A   1     -1.000   2.000   3.500  -0.300   1.824\n"
             "ATOM      2  CA  GLY     1      1.250  -2.000   0.000   0.300   1.908\n"
             "HETATM123456  O   HOH  9999     10.000  20.000  30.000  -0.834   1.661\n"
             "ATOM      4  C   GLY A1000     1e1  +2.5  -0.0  0.5  1.9\n"
             "TER\nEND\n");
  const io::Structure s = io::read_structure(path);
  ASSERT_EQ(s.atoms.size(), 4u);
  expect_atom_at(s.atoms, 0, -1.0, 2.0, 3.5);
  expect_atom_at(s.atoms, 1, 1.25, -2.0, 0.0);
  expect_atom_at(s.atoms, 2, 10.0, 20.0, 30.0);
  expect_atom_at(s.atoms, 3, 10.0, 2.5, 0.0);
  EXPECT_NEAR(s.atoms.total_charge(), -0.3 + 0.3 - 0.834 + 0.5, 1e-6);
  fs::remove_all(dir);
}

TEST(ReadPqr, GzEqualsPlain) { expect_gz_equals_plain("1d7h-min.pqr"); }

TEST(ReadPdbqt, LigandWithTorsionTree) {
  const fs::path path = data_file("1pgp_lig.pdbqt");
  const std::string text = read_text(path);
  const auto lines = atom_lines(text);
  ASSERT_NE(text.find("BRANCH"), std::string::npos);
  ASSERT_NE(text.find("TORSDOF"), std::string::npos);
  const io::Structure s = io::read_structure(path);
  ASSERT_EQ(s.atoms.size(), lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto c = pdb_columns(lines[i]);
    expect_atom_at(s.atoms, i, c.x, c.y, c.z);
    EXPECT_NEAR(s.atoms.q[i], column_number(lines[i], 71, 76), 1e-6);
  }
}

TEST(ReadPdbqt, ReceptorGzippedAndPlain) {
  const fs::path path = data_file("1pgp_rec.pdbqt.gz");
  const auto lines = atom_lines(read_text(path));
  const io::Structure s = io::read_structure(path);
  ASSERT_EQ(s.atoms.size(), lines.size());
  double total = 0;
  for (const std::string& l : lines) total += column_number(l, 71, 76);
  EXPECT_NEAR(s.atoms.total_charge(), total, 1e-3);
  const auto last = pdb_columns(lines.back());
  expect_atom_at(s.atoms, lines.size() - 1, last.x, last.y, last.z);
  expect_gz_equals_plain("1pgp_rec.pdbqt.gz");
}

TEST(ReadPdbqt, PosesAreModels) {
  const fs::path dir = temp_dir("pdbqt");
  const fs::path path = dir / "poses.pdbqt";
  const std::string atom1 =
      "ATOM      1  C1  LIG     1       1.000   2.000   3.000  1.00  0.00     0.250 C \n";
  const std::string atom2 =
      "ATOM      1  C1  LIG     1       4.000   5.000   6.000  1.00  0.00    -0.125 C \n";
  write_text(path, "MODEL 1\nROOT\n" + atom1 + "ENDROOT\nTORSDOF 0\nENDMDL\nMODEL 2\nROOT\n" +
                       atom2 + "ENDROOT\nTORSDOF 0\nENDMDL\n");
  const auto models = io::read_all_models(path);
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[1].model, 2);
  EXPECT_EQ(models[1].models_in_file, 2);
  expect_atom_at(models[1].atoms, 0, 4, 5, 6);
  EXPECT_FLOAT_EQ(models[1].atoms.q[0], -0.125f);
  io::ReadOptions second;
  second.model = 2;
  expect_same_atoms(io::read_structure(path, second).atoms, models[1].atoms);
  fs::remove_all(dir);
}

TEST(ReadXyz, FramesAreModels) {
  const fs::path path = data_file("water_dimer_2frames.xyz");
  const auto lines = lines_of(read_text(path));
  const auto frames = io::read_all_models(path);
  ASSERT_EQ(frames.size(), 2u);
  for (std::size_t f = 0; f < 2; ++f) {
    EXPECT_EQ(frames[f].model, int(f) + 1);
    ASSERT_EQ(frames[f].atoms.size(), std::size_t(std::stoi(lines[f * 8])));
    for (std::size_t i = 0; i < 6; ++i) {
      const auto w = words(lines[f * 8 + 2 + i]);
      expect_atom_at(frames[f].atoms, i, std::stod(w[1]), std::stod(w[2]), std::stod(w[3]));
      EXPECT_NEAR(frames[f].atoms.q[i], std::stod(w[4]), 1e-6);
    }
    EXPECT_NEAR(frames[f].atoms.total_charge(), 0.0, 1e-6);
  }
  // The second frame is the first moved by (1, 2, 3).
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(frames[1].atoms.z[i], frames[0].atoms.z[i] + 3.0, 1e-5);
  expect_same_atoms(io::read_structure(path).atoms, frames[0].atoms);
  expect_gz_equals_plain("water_dimer_2frames.xyz");
}

TEST(ReadXyz, PlainLinesWithoutHeader) {
  const io::Structure s = io::read_structure(data_file("nacl_plain.xyz"));
  ASSERT_EQ(s.atoms.size(), 4u);
  expect_atom_at(s.atoms, 1, 2.82, 0, 0);
  expect_atom_at(s.atoms, 3, -5.0, 1.5, -1.25);
  EXPECT_FLOAT_EQ(s.atoms.q[0], 1.0f);
  EXPECT_FLOAT_EQ(s.atoms.q[3], -0.5f);
  EXPECT_NEAR(s.atoms.total_charge(), 0.0, 1e-7);
  EXPECT_EQ(s.models_in_file, 1);
}

TEST(ReadPdb, RealFilesMatchTheirText) {
  for (const char* name : {"1hpv.pdb", "1tii.pdb.gz", "pept.pdb"}) {
    SCOPED_TRACE(name);
    const fs::path path = data_file(name);
    const auto lines = atom_lines(read_text(path));
    const io::Structure s = io::read_structure(path, test_options());
    ASSERT_EQ(s.atoms.size(), lines.size());
    EXPECT_EQ(s.charge_source, "amber");
    for (std::size_t i : {std::size_t(0), lines.size() / 3, lines.size() - 1}) {
      const auto c = pdb_columns(lines[i]);
      expect_atom_at(s.atoms, i, c.x, c.y, c.z);
    }
  }
}

// CRYST1 (PDB) and _cell (mmCIF) give the structure's cell; files without one have none. (PDB
// atoms have the force field's radii: test_io_radii.cpp.)
TEST(ReadPdb, RecordedCellIsKept) {
  const io::Structure pdb = io::read_structure(data_file("1hpv.pdb"), test_options());
  ASSERT_TRUE(pdb.cell);
  EXPECT_EQ(pdb.cell->lengths, (Vec3{63.4, 63.4, 83.8}));
  EXPECT_EQ(pdb.cell->angles, (Vec3{90, 90, 120}));
  const io::Structure cif = io::read_structure(data_file("1hpv.cif.gz"), test_options());
  ASSERT_TRUE(cif.cell);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(cif.cell->lengths[i], pdb.cell->lengths[i], 1e-9);
  EXPECT_FALSE(io::read_structure(data_file("pept.pdb"), test_options()).cell);
}

TEST(ReadPdb, AtomLinesPointAtTheirRecords) {
  // Every atom's line holds an atom record (PDB) or _atom_site row (mmCIF) with its coordinates,
  // parsed here from the text; multi-model files included (models 2 and 3 start mid-file).
  for (const char* name : {"1hpv.pdb", "pept_3models.pdb", "1hpv.cif.gz", "pept_3models.cif"}) {
    SCOPED_TRACE(name);
    const auto lines = lines_of(read_text(data_file(name)));
    const bool pdb = std::string(name).find(".pdb") != std::string::npos;
    for (const io::Structure& s : io::read_all_models(data_file(name), test_options())) {
      ASSERT_EQ(s.lines.size(), s.atoms.size());
      for (std::size_t i = 0; i < s.atoms.size(); ++i) {
        ASSERT_GT(s.lines[i], 0u) << "atom " << i << " of model " << s.model;
        const std::string& line = lines.at(s.lines[i] - 1);
        if (pdb) {
          const auto c = pdb_columns(line);
          expect_atom_at(s.atoms, i, c.x, c.y, c.z);
          continue;
        }
        const auto w = words(line);  // x, y, z: three numbers in a row of the line
        bool found = false;
        for (std::size_t k = 0; k + 2 < w.size() && !found; ++k)
          found = std::abs(std::atof(w[k].c_str()) - s.atoms.x[i]) < 1e-3 &&
                  std::abs(std::atof(w[k + 1].c_str()) - s.atoms.y[i]) < 1e-3 &&
                  std::abs(std::atof(w[k + 2].c_str()) - s.atoms.z[i]) < 1e-3;
        EXPECT_TRUE(found) << "atom " << i << " line " << s.lines[i] << ": " << line;
      }
    }
  }
}

TEST(ReadPdb, GzEqualsPlain) {
  expect_gz_equals_plain("1tii.pdb.gz", test_options());
  expect_gz_equals_plain("1hpv.pdb", test_options());
}

TEST(ReadMmcif, SameStructureAsThePdbItWasMadeFrom) {
  const io::Structure pdb = io::read_structure(data_file("1hpv.pdb"), test_options());
  const io::Structure cif = io::read_structure(data_file("1hpv.cif.gz"), test_options());
  expect_same_atoms(pdb.atoms, cif.atoms);
  expect_gz_equals_plain("1hpv.cif.gz", test_options());
}

TEST(ReadModels, PdbAndMmcifModels) {
  for (const char* name : {"pept_3models.pdb", "pept_3models.cif"}) {
    SCOPED_TRACE(name);
    const fs::path path = data_file(name);
    const auto models = io::read_all_models(path, test_options());
    ASSERT_EQ(models.size(), 3u);
    // Model k is model 1 moved by (k-1) * (10, -5, 2.5) Å (data/README.md).
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(models[k].model, k + 1);
      EXPECT_EQ(models[k].models_in_file, 3);
      ASSERT_EQ(models[k].atoms.size(), models[0].atoms.size());
      EXPECT_EQ(models[k].atoms.q, models[0].atoms.q);
      for (std::size_t i = 0; i < models[0].atoms.size(); ++i) {
        EXPECT_NEAR(models[k].atoms.x[i], models[0].atoms.x[i] + 10.0 * k, 1e-3);
        EXPECT_NEAR(models[k].atoms.y[i], models[0].atoms.y[i] - 5.0 * k, 1e-3);
        EXPECT_NEAR(models[k].atoms.z[i], models[0].atoms.z[i] + 2.5 * k, 1e-3);
      }
    }
    io::ReadOptions options = test_options();
    EXPECT_EQ(io::read_structure(path, options).model, 1);
    options.model = 3;
    const io::Structure third = io::read_structure(path, options);
    EXPECT_EQ(third.model, 3);
    expect_same_atoms(third.atoms, models[2].atoms);
    options.model = 4;
    try {
      io::read_structure(path, options);
      ADD_FAILURE() << "model 4 of 3 was read";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file, path.string());
      EXPECT_NE(e.problem.find("model 4"), std::string::npos) << e.what();
      EXPECT_NE(e.problem.find("3 models"), std::string::npos) << e.what();
    }
  }
}

TEST(ReadPdb, AltlocsKeepTheHighestOccupancyFirstOnTies) {
  const fs::path dir = temp_dir("altloc");
  const fs::path path = dir / "altloc.pdb";
  // A glycine whose CA has two conformers (B more occupied) and whose C has two equal ones.
  write_text(path,
             "ATOM      1  N   GLY A   1       0.000   0.000   0.000  1.00  0.00           N\n"
             "ATOM      2  CA AGLY A   1       1.000   0.000   0.000  0.40  0.00           C\n"
             "ATOM      3  CA BGLY A   1       1.100   0.200   0.000  0.60  0.00           C\n"
             "ATOM      4  C  AGLY A   1       2.000   1.000   0.000  0.50  0.00           C\n"
             "ATOM      5  C  BGLY A   1       2.100   1.300   0.000  0.50  0.00           C\n"
             "ATOM      6  O   GLY A   1       2.500   2.000   0.000  1.00  0.00           O\n");
  const io::Structure s = io::read_structure(path, test_options());
  ASSERT_EQ(s.atoms.size(), 4u);
  expect_atom_at(s.atoms, 1, 1.1, 0.2, 0.0);  // CA B (0.60)
  expect_atom_at(s.atoms, 2, 2.0, 1.0, 0.0);  // C A (first of 0.50 and 0.50)
  expect_atom_at(s.atoms, 3, 2.5, 2.0, 0.0);
  fs::remove_all(dir);
}

// ---- malformed inputs ----

namespace {

struct Broken {
  std::string name, content;
  std::size_t line;     // expected line, 0 = the file as a whole
  std::string problem;  // expected part of the message
};

const std::string kPqrAtom =
    "ATOM      1  N   GLY     1      21.421   3.562  16.781   0.294   1.821\n";
const std::string kPdbAtom =
    "ATOM      1  N   GLY A   1      21.421   3.562  16.781  1.00  0.00           N\n";
const std::string kPdbqtAtom =
    "ATOM      1  C1  LIG     1       1.000   2.000   3.000  1.00  0.00     0.250 C \n";

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

void expect_input_error(const fs::path& path, std::size_t line, const std::string& problem,
                        const io::ReadOptions& options = test_options()) {
  expect_read_error(path, line, problem, options);
}

}  // namespace

TEST(ReadBroken, EveryMalformedInputNamesFileLineAndProblem) {
  using namespace std::string_literals;
  const std::string binary = "REMARK fine\nREMARK fine\nATOM \x01\x02\x00\xff garbage\n"s;
  // 1hpv.cif with the x coordinate of its first atom row (the tenth value) unknown ('?'), and
  // with the z coordinate of its fifth row garbled. gemmi writes one row per line.
  const std::string cif_text = read_text(data_file("1hpv.cif.gz"));
  const std::string last_tag = "_atom_site.pdbx_PDB_model_num\n";
  const std::size_t cif_rows = cif_text.find(last_tag) + last_tag.size();
  const std::size_t first_row_line =
      1 +
      std::size_t(std::count(cif_text.begin(), cif_text.begin() + std::ptrdiff_t(cif_rows), '\n'));
  const auto cif_lines = lines_of(cif_text);
  const std::string& first_row = cif_lines[first_row_line - 1];
  const std::string& fifth_row = cif_lines[first_row_line + 3];
  const auto first_words = words(first_row), fifth_words = words(fifth_row);
  const std::string no_x =
      replaced(cif_text, first_row, replaced(first_row, " " + first_words[9] + " ", " ? "));
  const std::string bad_z =
      replaced(cif_text, fifth_row, replaced(fifth_row, " " + fifth_words[11] + " ", " 1.2.3 "));
  const std::vector<Broken> cases = {
      {"truncated.pqr",
       kPqrAtom + kPqrAtom + "ATOM      3  CA  GLY     1      21.0   3.5  16.7  0.29\n", 3,
       "truncated PQR atom record"},
      {"bad_number.pqr", kPqrAtom + replaced(kPqrAtom, "3.562", "3.5x2"), 2,
       "y coordinate is not a number: '3.5x2'"},
      {"nan.pqr", kPqrAtom + kPqrAtom + kPqrAtom + replaced(kPqrAtom, "16.781", "nan"), 4,
       "z coordinate is not finite"},
      {"inf_charge.pqr", replaced(kPqrAtom, "0.294", "inf"), 1, "charge is not finite"},
      // Issue 35 group 12: a fractional residue number, and a stray column that shifted every
      // number by one (the chain position then holds the residue number, here a coordinate).
      {"residue_fraction.pqr", kPqrAtom + replaced(kPqrAtom, "GLY     1 ", "GLY   1.5 "), 2,
       "the residue number (field 5 of 10) is '1.5', not an integer"},
      {"stray_column.pqr", replaced(kPqrAtom, "1.821\n", "1.821   0.500\n"), 1,
       "the residue number (field 6 of 11) is '21.421', not an integer"},
      {"twelve_fields.pqr", replaced(kPqrAtom, "GLY ", "GLY A B "), 1, "has 12 fields"},
      {"no_atoms.pqr", "REMARK nothing here\nEND\n", 0, "no atoms"},
      {"empty.pqr", "", 0, "no atoms"},
      {"binary.pqr", binary, 3, "binary data"},
      {"truncated.pdb",
       "HEADER    TEST\n" + kPdbAtom + kPdbAtom + kPdbAtom + kPdbAtom.substr(0, 45) + "\n", 5,
       "truncated atom record"},
      {"bad_number.pdb", kPdbAtom + replaced(kPdbAtom, " 21.421", "  2x.42"), 2,
       "x coordinate (columns 31-38) is not a number"},
      {"nan.pdb", kPdbAtom + replaced(kPdbAtom, "  3.562", "    nan"), 2,
       "y coordinate (columns 39-46) is not finite"},
      {"bad_occupancy.pdb", replaced(kPdbAtom, "1.00", "1.x0"), 1, "occupancy"},
      {"no_atoms.pdb", "HEADER    TEST\nREMARK   1 NO COORDINATES\nEND\n", 0, "no atoms"},
      {"binary.pdb.gz", binary, 3, "binary data"},
      {"truncated.pdbqt", kPdbqtAtom + kPdbqtAtom.substr(0, 72) + "\n", 2,
       "partial charge needs columns 71-76"},
      {"bad_charge.pdbqt", "ROOT\n" + replaced(kPdbqtAtom, " 0.250", " 0.2.5"), 2,
       "partial charge (columns 71-76) is not a number"},
      {"short_frame.xyz", "3\ncomment\nO 0 0 0 -0.8\nH 1 0 0 0.4\n", 4,
       "file ends after 2 of the 3 atoms"},
      {"bad_count.xyz", "1\nc\nNa 0 0 0 1\nnot-a-count\n", 4, "expected the atom count of frame 2"},
      {"fields.xyz", "2\nc\nO 0 0 0 -0.8\nH 1 0 0 0.4 extra\n", 4, "found 6 fields"},
      {"bad_number.xyz", "0 0 0 1\n# comment\n1 0 zero 1\n", 3, "z coordinate is not a number"},
      {"syntax.cif", "data_x\nloop_\n_atom_site.id\n_atom_site.Cartn_x\n1 \"unterminated\n", 5,
       "unterminated"},
      {"missing_coordinate.cif", no_x, first_row_line, "_atom_site.Cartn_x is not a number: '?'"},
      {"bad_coordinate.cif", bad_z, first_row_line + 4,
       "_atom_site.Cartn_z is not a number: '1.2.3'"},
      {"no_atoms.cif", "data_x\n_cell.length_a 10\n", 0, "no atoms"},
      {"quoted.cif",  // quoted values with blanks and quotes inside, a row over two lines
       "data_q\nloop_\n_atom_site.group_PDB\n_atom_site.id\n_atom_site.type_symbol\n"
       "_atom_site.label_atom_id\n_atom_site.label_alt_id\n_atom_site.label_comp_id\n"
       "_atom_site.label_asym_id\n_atom_site.label_seq_id\n_atom_site.Cartn_x\n"
       "_atom_site.Cartn_y\n_atom_site.Cartn_z\n_atom_site.occupancy\n"
       "_atom_site.B_iso_or_equiv\n_atom_site.auth_seq_id\n_atom_site.auth_asym_id\n"
       "HETATM 1 C \"C1'\" . 'L G' A 1 1.0 2.0 3.0 1 0 1 A\n"
       "HETATM 2 O \"O5'\" . 'L G' A 1\n  1.5 2.5 3.5 1 0 1 A\n"
       "HETATM 3 O O . 'L G' A 1 4.0 x5.0 6.0 1 0 1 A\n",
       21, "_atom_site.Cartn_y is not a number: 'x5.0'"},
  };
  const fs::path dir = temp_dir("broken");
  for (const Broken& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path path = dir / c.name;
    if (c.name.ends_with(".gz"))
      write_gz(path, c.content);
    else
      write_text(path, c.content);
    expect_input_error(path, c.line, c.problem);
  }
  fs::remove_all(dir);
}

// pdb2pqr's residue numbers in free format: with a chain, with the chain run into a 4-digit
// number (fixed columns 22-26), with an insertion code, and negative.
TEST(ReadPqr, ResidueNumbersWithChainsAndInsertionCodes) {
  const fs::path dir = temp_dir("pqr-residues");
  write_text(dir / "r.pqr",
             "ATOM      1  N   GLY A   1       1.000   2.000   3.000   0.100   1.500\n"
             "ATOM   9999  N   GLY A1000       4.000   5.000   6.000   0.200   1.500\n"
             "ATOM  10000  N   GLY A  52A      7.000   8.000   9.000   0.300   1.500\n"
             "HETATM10001  O   HOH    -3      10.000  11.000  12.000  -0.800   1.500\n");
  const io::Structure s = io::read_structure(dir / "r.pqr");
  ASSERT_EQ(s.atoms.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.atoms.x[i], float(1 + 3 * i)) << i;
    EXPECT_EQ(s.atoms.z[i], float(3 + 3 * i)) << i;
  }
  EXPECT_EQ(s.atoms.q[3], -0.8f);
  fs::remove_all(dir);
}

TEST(ReadBroken, FilesThatCannotBeRead) {
  const fs::path dir = temp_dir("unreadable");
  expect_input_error(dir / "missing.pqr", 0, "file not found");
  fs::create_directories(dir / "folder.pdb");
  expect_input_error(dir / "folder.pdb", 0, "is a directory");
  write_text(dir / "structure.sdf", "x\n");
  expect_input_error(dir / "structure.sdf", 0, "unknown extension '.sdf'");

  // A gzip stream cut in the middle.
  const fs::path whole = dir / "whole.pqr.gz", cut = dir / "cut.pqr.gz";
  write_gz(whole, read_text(data_file("1d7h-min.pqr")));
  const std::string bytes = [&] {
    std::ifstream in(whole, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  write_text(cut, bytes.substr(0, bytes.size() / 2));
  expect_input_error(cut, 0, "truncated gzip");

  io::ReadOptions zero;
  zero.model = 0;
  expect_input_error(data_file("1d7h-min.pqr"), 0, "model 0", zero);
  fs::remove_all(dir);
}
