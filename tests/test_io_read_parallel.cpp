// The parallel text readers (PQR, PDBQT, XYZ; PDB's record check, residues and charges) against
// the serial one (ReadOptions::threads = 1) and against the values the test wrote: the same
// atoms, lines and models, and the same error (file, line, problem) for every piece count, on
// files with LF and CRLF line ends, no final line end, very long lines, models, and errors
// anywhere (in the last piece too). Piece counts are forced (2 to 16) so that cuts fall at every
// kind of place, inside lines included; an absurd count (100000) must be capped, not start that
// many threads.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"
#include "test_io_read_files.hpp"

using namespace dcsgrid;
using namespace dcsgrid::test;
namespace fs = std::filesystem;

namespace {

constexpr int kPieceCounts[] = {2, 3, 4, 7, 16};

// An atom as the file writes it: the numbers' text and, independently of our parser, their
// float32 values (strtod, then rounded to float).
struct WrittenAtom {
  std::string x, y, z, q;
  std::size_t line = 0;
};

float value_of(const std::string& s) { return float(std::strtod(s.c_str(), nullptr)); }

std::vector<WrittenAtom> random_atoms_text(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> coordinate(-999.0, 999.0), charge(-1.0, 1.0);
  auto fixed = [](double v, int decimals) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };
  std::vector<WrittenAtom> atoms(n);
  for (auto& a : atoms)
    a = {fixed(coordinate(rng), 3), fixed(coordinate(rng), 3), fixed(coordinate(rng), 3),
         fixed(charge(rng), 3)};
  return atoms;
}

enum class Kind { pqr, pdbqt, xyz_frames, xyz_plain };

std::string extension(Kind k) {
  return k == Kind::pqr ? ".pqr" : k == Kind::pdbqt ? ".pdbqt" : ".xyz";
}

std::string atom_line(Kind k, std::size_t i, const WrittenAtom& a) {
  char buf[160];
  if (k == Kind::pqr)
    std::snprintf(buf, sizeof buf, "ATOM  %5zu  CA  ALA A %3zu    %8s %8s %8s %7s 1.9080",
                  i % 100000, i % 1000, a.x.c_str(), a.y.c_str(), a.z.c_str(), a.q.c_str());
  else if (k == Kind::pdbqt)
    std::snprintf(buf, sizeof buf, "ATOM  %5zu  C1  LIG A   1    %8s%8s%8s  1.00  0.00    %6.6s C ",
                  i % 100000, a.x.c_str(), a.y.c_str(), a.z.c_str(), a.q.c_str());
  else
    std::snprintf(buf, sizeof buf, "%s %s %s %s %s", i % 3 ? "H" : "O", a.x.c_str(), a.y.c_str(),
                  a.z.c_str(), a.q.c_str());
  return buf;
}

// A file of `models` models of the atoms (split evenly), with records that carry no atoms, a
// very long REMARK/comment line, and the atoms' lines recorded in `atoms`.
struct TextOptions {
  std::string eol = "\n";
  bool final_eol = true;
  int models = 1;
};

std::string make_text(Kind k, std::vector<WrittenAtom>& atoms, const TextOptions& o) {
  std::vector<std::string> lines;
  const bool pdb_like = k == Kind::pqr || k == Kind::pdbqt;
  const std::string comment = pdb_like ? "REMARK " : "# ";
  lines.push_back(comment + std::string(200000, 'x'));  // longer than a piece
  const std::size_t per_model = atoms.size() / std::size_t(o.models);
  for (int m = 0; m < o.models; ++m) {
    const std::size_t begin = per_model * std::size_t(m);
    const std::size_t end = m + 1 == o.models ? atoms.size() : begin + per_model;
    if (k == Kind::xyz_frames) {
      lines.push_back(std::to_string(end - begin));
      lines.push_back("frame " + std::to_string(m + 1));
    } else if (pdb_like && o.models > 1) {
      lines.push_back("MODEL " + std::to_string(m + 1));
    }
    for (std::size_t i = begin; i < end; ++i) {
      if (k == Kind::xyz_plain && i % 50 == 0) lines.push_back(i % 100 ? "" : "# comment");
      if (pdb_like && i % 50 == 0) lines.push_back("TER");
      lines.push_back(atom_line(k, i, atoms[i]));
      atoms[i].line = lines.size();
    }
    if (pdb_like && o.models > 1) lines.push_back("ENDMDL");
  }
  std::string text;
  for (std::size_t i = 0; i < lines.size(); ++i)
    text += lines[i] + (i + 1 < lines.size() || o.final_eol ? o.eol : "");
  return text;
}

// PDB's charges from the bundled tables (data/pdb2pqr), so the test needs no installed ones.
io::ReadOptions with_threads(int threads, int model = 1) {
  io::ReadOptions o;
  o.threads = threads;
  o.model = model;
  o.forcefield_dir = data_file("pdb2pqr");
  return o;
}

void expect_atoms(const io::Structure& s, const std::vector<WrittenAtom>& atoms, std::size_t begin,
                  std::size_t end) {
  ASSERT_EQ(s.atoms.size(), end - begin);
  ASSERT_EQ(s.lines.size(), end - begin);
  for (std::size_t i = begin; i < end; ++i) {
    const std::size_t k = i - begin;
    ASSERT_EQ(s.atoms.x[k], value_of(atoms[i].x)) << "atom " << i;
    ASSERT_EQ(s.atoms.y[k], value_of(atoms[i].y)) << "atom " << i;
    ASSERT_EQ(s.atoms.z[k], value_of(atoms[i].z)) << "atom " << i;
    ASSERT_EQ(s.atoms.q[k], value_of(atoms[i].q)) << "atom " << i;
    ASSERT_EQ(s.lines[k], atoms[i].line) << "atom " << i;
  }
}

// Every piece count reads what the file says, model by model and all models at once.
void expect_parallel_reads_the_file(Kind k, const TextOptions& o) {
  std::vector<WrittenAtom> atoms = random_atoms_text(3001, 7);
  const std::string text = make_text(k, atoms, o);
  const fs::path dir = temp_dir("parallel");
  const fs::path path = dir / ("atoms" + extension(k));
  write_text(path, text);
  const std::size_t per_model = atoms.size() / std::size_t(o.models);
  for (const int threads : {1, 2, 3, 4, 7, 16, 0, 100000}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const auto all = io::read_all_models(path, with_threads(threads));
    ASSERT_EQ(all.size(), std::size_t(o.models));
    for (int m = 0; m < o.models; ++m) {
      const std::size_t begin = per_model * std::size_t(m);
      const std::size_t end = m + 1 == o.models ? atoms.size() : begin + per_model;
      EXPECT_EQ(all[std::size_t(m)].model, m + 1);
      EXPECT_EQ(all[std::size_t(m)].models_in_file, o.models);
      expect_atoms(all[std::size_t(m)], atoms, begin, end);
      expect_atoms(io::read_structure(path, with_threads(threads, m + 1)), atoms, begin, end);
    }
  }
  fs::remove_all(dir);
}

const std::vector<Kind> kKinds = {Kind::pqr, Kind::pdbqt, Kind::xyz_frames, Kind::xyz_plain};

}  // namespace

TEST(ReadParallel, SameAtomsLinesAndModelsForEveryPieceCount) {
  for (const Kind k : kKinds) {
    SCOPED_TRACE(extension(k) + (k == Kind::xyz_plain ? " plain" : ""));
    expect_parallel_reads_the_file(k, {});
    expect_parallel_reads_the_file(k, {"\r\n", true, 1});
    expect_parallel_reads_the_file(k, {"\n", false, 1});
    expect_parallel_reads_the_file(k, {"\r\n", false, 1});
    if (k != Kind::xyz_plain) expect_parallel_reads_the_file(k, {"\n", true, 3});
  }
}

namespace {

// The atoms' text with one number of atom `bad` replaced by `garbage`, and what the error says.
struct Injected {
  std::size_t bad;
  std::string garbage, problem;
};

InputError read_error(const fs::path& path, const io::ReadOptions& o) {
  try {
    io::read_all_models(path, o);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << path << " was read without an error (threads " << o.threads << ")";
  return InputError("", 0, "");
}

// The serial reader names the file, the line and the problem; every piece count says the same.
void expect_the_serial_error(const fs::path& path, std::size_t line, const std::string& problem) {
  const InputError serial = read_error(path, with_threads(1));
  EXPECT_EQ(serial.file, path.string());
  EXPECT_EQ(serial.line, line);
  EXPECT_NE(serial.problem.find(problem), std::string::npos) << serial.what();
  for (const int threads : kPieceCounts) {
    const InputError parallel = read_error(path, with_threads(threads));
    EXPECT_EQ(std::string(parallel.what()), serial.what()) << "threads " << threads;
  }
}

}  // namespace

TEST(ReadParallel, SameErrorsAsTheSerialReaderWhereverTheyAre) {
  const std::vector<Injected> cases = {{0, "1.2.3", "not a number"},    // first atom, first piece
                                       {1500, "nan", "not finite"},     // the middle
                                       {2999, "1e39", "float32"},       // in the last piece
                                       {3000, "--1", "not a number"}};  // the very last line
  for (const Kind k : kKinds) {
    for (const bool crlf : {false, true}) {
      for (const Injected& c : cases) {
        SCOPED_TRACE(extension(k) + " atom " + std::to_string(c.bad) + (crlf ? " CRLF" : ""));
        std::vector<WrittenAtom> atoms = random_atoms_text(3001, 11);
        atoms[c.bad].z = c.garbage;
        // A second error after the first: the first in file order must be the one named.
        if (c.bad + 10 < atoms.size()) atoms[c.bad + 10].x = "oops";
        const std::string text = make_text(k, atoms, {crlf ? "\r\n" : "\n", c.bad != 3000, 1});
        const fs::path dir = temp_dir("parallel-error");
        const fs::path path = dir / ("bad" + extension(k));
        write_text(path, text);
        expect_the_serial_error(path, atoms[c.bad].line, c.problem);
        fs::remove_all(dir);
      }
    }
  }
}

TEST(ReadParallel, ErrorsOutsideTheModelAskedForAreTheSerialReadersToo) {
  // PQR, 3 models, a bad number in model 3: reading model 1 succeeds (the serial reader does not
  // parse other models), reading all fails at that line, whatever the piece count.
  std::vector<WrittenAtom> atoms = random_atoms_text(3000, 5);
  atoms[2500].q = "x";
  const fs::path dir = temp_dir("parallel-model");
  const fs::path path = dir / "models.pqr";
  write_text(path, make_text(Kind::pqr, atoms, {"\n", true, 3}));
  for (const int threads : {1, 2, 5, 16}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    expect_atoms(io::read_structure(path, with_threads(threads, 1)), atoms, 0, 1000);
    EXPECT_EQ(read_error(path, with_threads(threads)).line, atoms[2500].line);
  }
  fs::remove_all(dir);
}

// A MODEL record after the last atom (fuzz_pdbqt's finding): the parallel reader moved every atom
// into model 1, then read a second range out of the emptied arrays (undefined behaviour). Now it
// gives the serial reader's answer, whatever the piece count.
TEST(ReadParallel, ModelRecordAfterTheLastAtomIsTheSerialReadersAnswer) {
  std::vector<WrittenAtom> atoms = random_atoms_text(3000, 7);
  const fs::path dir = temp_dir("parallel-trailing-model");
  const fs::path path = dir / "trailing.pqr";
  write_text(path, make_text(Kind::pqr, atoms, {"\n", true, 1}) + "MODEL        2\n");
  std::string serial;
  try {
    serial = std::to_string(io::read_all_models(path, with_threads(1)).size()) + " models";
  } catch (const InputError& e) {
    serial = e.what();
  }
  for (const int threads : kPieceCounts) {
    std::string parallel;
    try {
      parallel = std::to_string(io::read_all_models(path, with_threads(threads)).size()) + " models";
    } catch (const InputError& e) {
      parallel = e.what();
    }
    EXPECT_EQ(parallel, serial) << "threads " << threads;
  }
  fs::remove_all(dir);
}

TEST(ReadParallel, NumbersEqualStrtodInEveryForm) {
  // Our fixed-point fast path and from_chars against strtod, over digits counts around the fast
  // path's 15-digit limit, signs, exponents and leading/trailing points.
  std::mt19937_64 rng(3);
  std::vector<std::string> values = {"0",
                                     "-0.000",
                                     "+1.5",
                                     "1.",
                                     ".5",
                                     "-.25",
                                     "1e3",
                                     "1E-3",
                                     "123456789012345",
                                     "1234567890123456",
                                     "0.1234567890123456789",
                                     "-99999.999",
                                     "3.4e38",
                                     "1e-50",
                                     "0.000000000000000000000001"};
  for (int i = 0; i < 20000; ++i) {
    const int digits = 1 + int(rng() % 18), point = int(rng() % (digits + 1));
    std::string s = rng() % 2 ? "-" : "";
    for (int d = 0; d < digits; ++d) {
      if (d == point) s += '.';
      s += char('0' + rng() % 10);
    }
    values.push_back(s);
  }
  std::string text;
  for (std::size_t i = 0; i < values.size(); ++i)
    text += "ATOM      1  N   GLY     1  0 0 " + values[i] + " " + values[(i + 1) % values.size()] +
            " 1\n";
  const fs::path dir = temp_dir("numbers");
  write_text(dir / "n.pqr", text);
  for (const int threads : {1, 4}) {
    const io::Structure s = io::read_structure(dir / "n.pqr", with_threads(threads));
    ASSERT_EQ(s.atoms.size(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(s.atoms.z[i], value_of(values[i])) << values[i];
      ASSERT_EQ(s.atoms.q[i], value_of(values[(i + 1) % values.size()]));
    }
  }
  fs::remove_all(dir);
}

namespace {

// A PDB file of waters (AMBER's WAT: O, H1, H2, residue numbers unique within a model) in
// `models` models, with a long REMARK, a TER every 50 atoms and lines recorded in `atoms`; the
// charges the AMBER table gives (TIP3P) written into the atoms' q.
std::string make_pdb_waters(std::vector<WrittenAtom>& atoms, const TextOptions& o) {
  static const char* kNames[3] = {"O  ", "H1 ", "H2 "};
  std::vector<std::string> lines = {"REMARK " + std::string(200000, 'x'), "CRYST1    1.000"};
  const std::size_t per_model = atoms.size() / std::size_t(o.models);
  for (int m = 0; m < o.models; ++m) {
    if (o.models > 1) lines.push_back("MODEL     " + std::to_string(m + 1));
    for (std::size_t i = per_model * std::size_t(m); i < per_model * std::size_t(m + 1); ++i) {
      if (i % 50 == 0) lines.push_back("TER");
      WrittenAtom& a = atoms[i];
      a.q = i % 3 == 0 ? "-0.834" : "0.417";
      char buf[120];
      std::snprintf(buf, sizeof buf, "HETATM%5zu  %s WAT W%4zu    %8s%8s%8s  1.00  0.00", i % 100000,
                    kNames[i % 3], (i / 3) % 9999 + 1, a.x.c_str(), a.y.c_str(), a.z.c_str());
      lines.push_back(buf);
      a.line = lines.size();
    }
    if (o.models > 1) lines.push_back("ENDMDL");
  }
  lines.push_back("END");
  std::string text;
  for (std::size_t i = 0; i < lines.size(); ++i)
    text += lines[i] + (i + 1 < lines.size() || o.final_eol ? o.eol : "");
  return text;
}

}  // namespace

// PDB goes through gemmi; our record check, residue records and charges run in parallel.
TEST(ReadParallel, PdbSameAtomsLinesChargesAndModelsForEveryPieceCount) {
  for (const TextOptions& o : {TextOptions{}, TextOptions{"\r\n", false, 1},
                               TextOptions{"\n", false, 1}, TextOptions{"\r\n", true, 3}}) {
    SCOPED_TRACE("models " + std::to_string(o.models) + (o.eol == "\n" ? " LF" : " CRLF") +
                 (o.final_eol ? "" : ", no final line end"));
    std::vector<WrittenAtom> atoms = random_atoms_text(3006, 5);
    const fs::path dir = temp_dir("parallel-pdb");
    const fs::path path = dir / "waters.pdb";
    write_text(path, make_pdb_waters(atoms, o));
    const std::size_t per_model = atoms.size() / std::size_t(o.models);
    for (const int threads : {1, 2, 3, 4, 7, 16, 0}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      const auto all = io::read_all_models(path, with_threads(threads));
      ASSERT_EQ(all.size(), std::size_t(o.models));
      for (int m = 0; m < o.models; ++m)
        expect_atoms(all[std::size_t(m)], atoms, per_model * std::size_t(m),
                     per_model * std::size_t(m + 1));
    }
    fs::remove_all(dir);
  }
}

TEST(ReadParallel, PdbSameErrorsAsTheSerialReaderWhereverTheyAre) {
  const std::vector<Injected> cases = {{0, "1.2.3", "not a number"},
                                       {1500, "nan", "not finite"},
                                       {3005, "1e39", "float32"}};  // the last atom
  for (const bool crlf : {false, true})
    for (const Injected& c : cases) {
      SCOPED_TRACE("atom " + std::to_string(c.bad) + (crlf ? " CRLF" : ""));
      std::vector<WrittenAtom> atoms = random_atoms_text(3006, 13);
      atoms[c.bad].z = c.garbage;
      if (c.bad + 10 < atoms.size()) atoms[c.bad + 10].x = "oops";
      const fs::path dir = temp_dir("parallel-pdb-error");
      const fs::path path = dir / "bad.pdb";
      write_text(path, make_pdb_waters(atoms, {crlf ? "\r\n" : "\n", true, 1}));
      expect_the_serial_error(path, atoms[c.bad].line, c.problem);
      fs::remove_all(dir);
    }
}
