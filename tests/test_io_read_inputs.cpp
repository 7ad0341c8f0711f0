// New inputs and hostile ones: Tripos MOL2 (checked against MDAnalysis's reader), bzip2/xz/gzip
// written by other programs (the bzip2, xz and gzip tools), standard input with a format,
// values beyond float32, header counts that would drive allocations, mmCIF residue numbers
// beyond 32 bits, quoted CIF values that look like keywords, and find_outlier.
#include <fcntl.h>
#include <pthread.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <thread>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"
#include "test_io_read_files.hpp"

using namespace dcsgrid;
using namespace dcsgrid::test;
namespace fs = std::filesystem;

namespace {

// The ligand of data/1pgp_lig.pdbqt as MOL2 molecules (pose k moved by k Å along x), with the
// PDBQT's coordinates and charges; `header` replaces the charge-type line when given.
struct Ligand {
  std::vector<std::array<double, 4>> atoms;  // x y z q from the PDBQT columns
  std::string mol2(int poses, const std::string& charge_type = "USER_CHARGES") const {
    std::string text = "# written by test_io_read_inputs\n";
    char line[160];
    for (int k = 0; k < poses; ++k) {
      text += "@<TRIPOS>MOLECULE\nligand pose " + std::to_string(k + 1) + "\n" +
              std::to_string(atoms.size()) + " " + std::to_string(atoms.size() - 1) +
              " 1 0 0\nSMALL\n" + charge_type + "\n\n@<TRIPOS>ATOM\n";
      for (std::size_t i = 0; i < atoms.size(); ++i) {
        std::snprintf(line, sizeof line,
                      "%7zu C%-4zu %10.4f %10.4f %10.4f C.3     1  LIG1 %10.4f\n", i + 1, i + 1,
                      atoms[i][0] + k, atoms[i][1], atoms[i][2], atoms[i][3]);
        text += line;
      }
      text += "@<TRIPOS>BOND\n";
      for (std::size_t i = 1; i < atoms.size(); ++i)
        text += std::to_string(i) + " " + std::to_string(i) + " " + std::to_string(i + 1) + " 1\n";
    }
    return text;
  }
};

Ligand pdbqt_ligand() {
  Ligand l;
  for (const std::string& line : atom_lines(read_text(data_file("1pgp_lig.pdbqt"))))
    l.atoms.push_back({column_number(line, 31, 38), column_number(line, 39, 46),
                       column_number(line, 47, 54), column_number(line, 71, 76)});
  return l;
}

}  // namespace

TEST(ReadMol2, ChargesAndPosesAsWritten) {
  const Ligand ligand = pdbqt_ligand();
  const fs::path dir = temp_dir("mol2");
  const fs::path path = dir / "poses.mol2";
  write_text(path, ligand.mol2(3));
  const auto models = io::read_all_models(path);
  ASSERT_EQ(models.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const io::Structure& s = models[std::size_t(k)];
    EXPECT_EQ(s.models_in_file, 3);
    ASSERT_EQ(s.atoms.size(), ligand.atoms.size());
    for (std::size_t i = 0; i < ligand.atoms.size(); ++i) {
      EXPECT_NEAR(s.atoms.x[i], ligand.atoms[i][0] + k, 1e-4);
      EXPECT_NEAR(s.atoms.y[i], ligand.atoms[i][1], 1e-4);
      EXPECT_NEAR(s.atoms.z[i], ligand.atoms[i][2], 1e-4);
      EXPECT_NEAR(s.atoms.q[i], ligand.atoms[i][3], 1e-6);
      // Comment line, then per pose: 7 header lines and the atoms, then the bonds.
      EXPECT_EQ(s.lines[i], 1 + std::size_t(k) * (7 + 2 * ligand.atoms.size()) + 7 + i + 1);
    }
  }
  io::ReadOptions second;
  second.model = 2;
  expect_same_atoms(io::read_structure(path, second).atoms, models[1].atoms);
  fs::remove_all(dir);
}

TEST(ReadMol2, AgreesWithMDAnalysis) {
  const fs::path dir = temp_dir("mol2-mda");
  const fs::path path = dir / "poses.mol2";
  write_text(path, pdbqt_ligand().mol2(2));
  const CommandResult r = run_command(
      "/usr/bin/python3 -W ignore -c \"import sys, MDAnalysis as mda\n"
      "u = mda.Universe(sys.argv[1])\n"
      "for ts in u.trajectory:\n"
      "    for p, q in zip(u.atoms.positions, u.atoms.charges): print(*p, q)\" " +
      path.string());
  if (r.status != 0 && r.output.find("No module named") != std::string::npos)
    GTEST_SKIP() << "MDAnalysis is not installed for /usr/bin/python3: " << r.output;
  ASSERT_EQ(r.status, 0) << r.output;
  const auto models = io::read_all_models(path);
  std::vector<std::string> rows;
  for (const std::string& l : lines_of(r.output))
    if (words(l).size() == 4) rows.push_back(l);
  ASSERT_EQ(rows.size(), 2 * models[0].atoms.size()) << r.output;
  std::size_t row = 0;
  for (const io::Structure& s : models)
    for (std::size_t i = 0; i < s.atoms.size(); ++i, ++row) {
      const auto w = words(rows[row]);
      EXPECT_NEAR(s.atoms.x[i], std::stod(w[0]), 1e-4);
      EXPECT_NEAR(s.atoms.y[i], std::stod(w[1]), 1e-4);
      EXPECT_NEAR(s.atoms.z[i], std::stod(w[2]), 1e-4);
      EXPECT_NEAR(s.atoms.q[i], std::stod(w[3]), 1e-6);
    }
  fs::remove_all(dir);
}

TEST(ReadMol2, BrokenFilesNameTheLine) {
  const Ligand ligand = pdbqt_ligand();
  const std::string good = ligand.mol2(1);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const std::string line9 = lines_of(good)[8];  // the first atom
  const fs::path dir = temp_dir("mol2-broken");
  const struct {
    std::string name, text;
    std::size_t line;
    std::string problem;
  } cases[] = {
      {"no_charges.mol2", ligand.mol2(1, "NO_CHARGES"), 6, "no partial charges"},
      {"count.mol2", with("\n" + std::to_string(ligand.atoms.size()) + " ", "\n99 "), 2,
       "declares 99 atoms but its ATOM record has " + std::to_string(ligand.atoms.size())},
      {"bad_count.mol2", with("\n" + std::to_string(ligand.atoms.size()) + " ", "\nmany "), 4,
       "expected the atom count"},
      {"huge_charge.mol2", with(line9, line9.substr(0, line9.size() - 10) + "      1e39"), 9,
       "partial charge is beyond the float32 range"},
      {"atom_first.mol2", "@<TRIPOS>ATOM\n1 C 0 0 0 C.3 1 L 0.1\n", 1, "before any"},
      {"header.mol2", "@<TRIPOS>MOLECULE\nname\n", 2, "file ends inside the header"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    write_text(dir / c.name, c.text);
    expect_read_error(dir / c.name, c.line, c.problem);
  }
  // An atom line without its charge column.
  write_text(dir / "short.mol2", with(line9, line9.substr(0, line9.rfind("LIG1"))));
  expect_read_error(dir / "short.mol2", 9, "the partial charge is the 9th");
  fs::remove_all(dir);
}

TEST(ReadCompressed, Bzip2XzAndGzipFromTheirOwnTools) {
  const fs::path dir = temp_dir("compressed");
  const std::string text = read_text(data_file("1d7h-min.pqr"));
  write_text(dir / "a.pqr", text);
  const io::Structure plain = io::read_structure(dir / "a.pqr");
  for (const std::string tool : {"gzip", "bzip2", "xz"}) {
    SCOPED_TRACE(tool);
    const std::string suffix = tool == "gzip" ? ".gz" : tool == "bzip2" ? ".bz2" : ".xz";
    const fs::path packed = dir / ("a.pqr" + suffix);
    // Two streams, as `cat a.gz b.gz` makes: the file's halves compressed separately.
    const fs::path halves = dir / ("halves.pqr" + suffix);
    write_text(dir / "h1", text.substr(0, text.size() / 2));
    write_text(dir / "h2", text.substr(text.size() / 2));
    const CommandResult r = run_command(
        tool + " -c '" + (dir / "a.pqr").string() + "' > '" + packed.string() + "' && " + tool +
        " -c '" + (dir / "h1").string() + "' > '" + halves.string() + "' && " + tool + " -c '" +
        (dir / "h2").string() + "' >> '" + halves.string() + "'");
    if (r.status != 0) GTEST_SKIP() << tool << " is not available: " << r.output;
    expect_same_atoms(io::read_structure(packed).atoms, plain.atoms);
    expect_same_atoms(io::read_structure(halves).atoms, plain.atoms);
    // The same bytes under a name without the suffix: the content decides.
    fs::copy_file(packed, dir / ("named" + suffix + ".pqr"));
    expect_same_atoms(io::read_structure(dir / ("named" + suffix + ".pqr")).atoms, plain.atoms);

    const std::string bytes = read_binary(packed);
    write_text(dir / ("cut.pqr" + suffix), bytes.substr(0, bytes.size() * 2 / 3));
    expect_read_error(dir / ("cut.pqr" + suffix), 0, "truncated");
    write_text(dir / ("trailing.pqr" + suffix), bytes + "garbage after the stream");
    expect_read_error(dir / ("trailing.pqr" + suffix), 0,
                      tool == "xz" ? "corrupt xz data" : "data after the end of the");
    std::string corrupt = bytes;
    for (std::size_t i = corrupt.size() / 3; i < corrupt.size() / 3 + 64; ++i) corrupt[i] ^= 0x5a;
    write_text(dir / ("corrupt.pqr" + suffix), corrupt);
    // The text is judged as it is decompressed: bzip2 hands out a damaged block before its
    // checksum fails, so the garbage's first control byte may be what is reported (with its line).
    try {
      io::read_structure(dir / ("corrupt.pqr" + suffix));
      ADD_FAILURE() << "corrupt " << tool << " data was read";
    } catch (const InputError& e) {
      EXPECT_NE(e.problem.find("corrupt"), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

namespace {

// Reads "-" with standard input connected to `fd` for the call.
io::Structure read_stdin_from(int fd, const io::ReadOptions& options) {
  const int saved = ::dup(0);
  ::dup2(fd, 0);
  ::close(fd);
  struct Restore {
    int saved;
    ~Restore() {
      ::dup2(saved, 0);
      ::close(saved);
    }
  } restore{saved};
  return io::read_structure("-", options);
}

}  // namespace

TEST(ReadStdin, FileAndPipeWithAFormat) {
  const fs::path path = data_file("1d7h-min.pqr");
  const io::Structure from_file = io::read_structure(path);
  io::ReadOptions pqr;
  pqr.format = io::Format::pqr;
  const io::Structure redirected = read_stdin_from(::open(path.c_str(), O_RDONLY), pqr);
  expect_same_atoms(redirected.atoms, from_file.atoms);
  EXPECT_EQ(redirected.source, "<stdin>");

  // A pipe bigger than one read, gzipped: written by another thread while we read.
  std::string text;
  for (int i = 0; i < 12; ++i) text += read_text(path);
  const fs::path dir = temp_dir("stdin");
  write_gz(dir / "x.gz", text);
  const std::string packed = read_binary(dir / "x.gz");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    std::size_t done = 0;
    while (done < packed.size()) {
      const ssize_t n = ::write(fds[1], packed.data() + done, packed.size() - done);
      if (n <= 0) break;
      done += std::size_t(n);
    }
    ::close(fds[1]);
  });
  const io::Structure piped = read_stdin_from(fds[0], pqr);
  writer.join();
  ASSERT_EQ(piped.atoms.size(), 12 * from_file.atoms.size());
  EXPECT_EQ(piped.atoms.q.back(), from_file.atoms.q.back());

  // Without a format: refused, saying so.
  try {
    io::read_structure("-");
    ADD_FAILURE() << "standard input without a format was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file, "<stdin>");
    EXPECT_NE(e.problem.find("needs its format"), std::string::npos) << e.what();
  }
  // The format overrides a file's name.
  write_text(dir / "atoms.txt", read_text(path));
  expect_same_atoms(io::read_structure(dir / "atoms.txt", pqr).atoms, from_file.atoms);
  EXPECT_EQ(io::format_from_name("MOL2"), io::Format::mol2);
  EXPECT_EQ(io::format_from_name("cif"), io::Format::mmcif);
  EXPECT_FALSE(io::format_from_name("sdf").has_value());
  fs::remove_all(dir);
}

TEST(ReadHostile, ValuesBeyondFloat32AreRefusedWithTheirLine) {
  const fs::path dir = temp_dir("float32");
  const std::string pqr =
      "ATOM      1  N   GLY     1      21.421   3.562  16.781   0.294   1.821\n";
  const std::string pdb =
      "ATOM      1  N   GLY A   1      21.421   3.562  16.781  1.00  0.00           N\n";
  auto with = [](std::string s, const std::string& from, const std::string& to) {
    return s.replace(s.find(from), from.size(), to);
  };
  const struct {
    std::string name, text;
    std::size_t line;
    std::string problem;
  } cases[] = {
      {"charge.pqr", pqr + with(pqr, "0.294", "1e39"), 2, "charge is beyond the float32 range"},
      {"x.pqr", with(pqr, "21.421", "-1e39"), 1, "x coordinate is beyond the float32 range"},
      {"double.pqr", pqr + pqr + with(pqr, "3.562", "1e400"), 3, "y coordinate is beyond"},
      {"x.xyz", "1\nc\nO 1e39 0 0 0\n", 3, "x coordinate is beyond the float32 range"},
      {"z.pdb", pdb + with(pdb, "  16.781", "    1e39"), 2,
       "z coordinate (columns 47-54) is beyond"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    write_text(dir / c.name, c.text);
    expect_read_error(dir / c.name, c.line, c.problem);
  }
  // Tiny values are not refused: float32 holds them as 0 (or subnormal).
  write_text(dir / "tiny.pqr", with(pqr, "0.294", "1e-400"));
  EXPECT_EQ(io::read_structure(dir / "tiny.pqr").atoms.q[0], 0.0f);
  fs::remove_all(dir);
}

TEST(ReadHostile, XyzHeaderCountsCannotDriveAllocations) {
  const fs::path dir = temp_dir("xyz-count");
  for (const std::string count : {"18446744073709551615", "99999999999", "4"}) {
    SCOPED_TRACE(count);
    write_text(dir / "big.xyz", "1\nfirst\nO 0 0 0 -0.8\n" + count + "\nsecond\nO 0 0 0 -0.8\n");
    expect_read_error(dir / "big.xyz", 4, "frame 2 declares " + count + " atoms, more than");
  }
  fs::remove_all(dir);
}

// Every _atom_site column gemmi reads as an int, given a value beyond 32 bits in the sixth row:
// gemmi's parser overflowed (undefined; residue numbers wrapped and moved charges between
// residues, a serial number of -8888888888 was fuzz_mmcif's finding). Refused with the line.
TEST(ReadHostile, MmcifIntegersBeyond32BitsAreRefused) {
  const std::string cif = read_text(data_file("1hpv.cif.gz"));
  const auto lines = lines_of(cif);
  std::vector<std::string> tags;
  std::size_t first_row = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("_atom_site.", 0) == 0) {
      tags.push_back(words(lines[i])[0]);
    } else if (!tags.empty()) {
      first_row = i + 5;  // the sixth row (gemmi writes one row per line)
      break;
    }
  }
  const struct {
    const char* tag;
    const char* value;
    const char* what;
  } cases[] = {{"_atom_site.auth_seq_id", "99999999999999999999999", "residue numbers"},
               {"_atom_site.label_seq_id", "2147483648", "residue numbers"},
               {"_atom_site.id", "-8888888888", "serial numbers"},
               {"_atom_site.pdbx_formal_charge", "+3000000000", "charges"},
               {"_atom_site.pdbx_formal_charge", "999999999999999?", "charges"},  // digits, then junk
               {"_atom_site.pdbx_PDB_model_num", "99999999999", "model numbers"}};
  const fs::path dir = temp_dir("cif-int");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.tag);
    const auto column = std::find(tags.begin(), tags.end(), c.tag);
    ASSERT_NE(column, tags.end());
    std::vector<std::string> w = words(lines[first_row]);
    ASSERT_EQ(w.size(), tags.size());
    w[std::size_t(column - tags.begin())] = c.value;
    std::string row;
    for (const std::string& s : w) row += s + " ";
    std::string text = cif;
    text.replace(text.find(lines[first_row]), lines[first_row].size(), row);
    write_text(dir / "int.cif", text);
    expect_read_error(dir / "int.cif", first_row + 1,
                      std::string(c.tag) + " is beyond the 32-bit range of " + c.what + ": '" + c.value + "'");
  }
  fs::remove_all(dir);
}

// fuzz_mmcif's finding (fuzz/regressions/mmcif): another loop of _atom_site. tags before the
// atoms' loop hid the atoms' loop from the checks, and gemmi overflowed on a serial number.
TEST(ReadHostile, AtomSiteLoopIsTheOneWithCoordinates) {
  const std::string cif = read_text(data_file("1hpv.cif.gz"));
  const auto lines = lines_of(cif);
  std::size_t header = 0;  // the atoms' loop_ line
  while (header + 1 < lines.size() && lines[header + 1].rfind("_atom_site.id", 0) != 0) ++header;
  ASSERT_LT(header + 1, lines.size());
  std::size_t first_row = header + 1;
  while (lines[first_row].rfind("_atom_site.", 0) == 0) ++first_row;
  std::vector<std::string> w = words(lines[first_row]);
  w[0] = "-8888888888";  // _atom_site.id, the loop's first tag
  std::string row;
  for (const std::string& s : w) row += s + " ";
  std::string text = cif;
  text.replace(text.find(lines[first_row]), lines[first_row].size(), row);
  text.insert(text.find(lines[header]), "loop_\n_atom_site.note\nnone\n");  // 3 lines before
  const fs::path dir = temp_dir("cif-loops");
  write_text(dir / "loops.cif", text);
  expect_read_error(dir / "loops.cif", first_row + 1 + 3,
                    "_atom_site.id is beyond the 32-bit range of serial numbers: '-8888888888'");
  fs::remove_all(dir);
}

// fuzz_mmcif's finding (fuzz/regressions/mmcif): a header tag of another category
// ("_atom_siet.") ended the check's line-based reading of the loop header, so values were counted
// from the wrong place and gemmi overflowed on an unchecked serial number. Every tag of the header
// is a column, two tags may share a line, and the check lines up with gemmi.
TEST(ReadHostile, EveryTagOfTheAtomSiteHeaderIsAColumn) {
  const std::string cif = read_text(data_file("1hpv.cif.gz"));
  const auto lines = lines_of(cif);
  std::size_t first_tag = 0;
  while (first_tag < lines.size() && lines[first_tag].rfind("_atom_site.id", 0) != 0) ++first_tag;
  ASSERT_LT(first_tag + 2, lines.size());
  std::size_t first_row = first_tag;
  while (lines[first_row].rfind("_atom_site.", 0) == 0) ++first_row;
  std::string text = cif;
  // The second tag moves onto the first one's line; the third's category is misspelt.
  const std::string joined = lines[first_tag] + " " + lines[first_tag + 1];
  ASSERT_EQ(lines[first_tag + 2].rfind("_atom_site.", 0), 0u);
  const std::string misspelt = "_atom_siet." + lines[first_tag + 2].substr(11);
  text.replace(text.find(lines[first_tag] + "\n" + lines[first_tag + 1] + "\n" + lines[first_tag + 2]),
               lines[first_tag].size() + lines[first_tag + 1].size() + lines[first_tag + 2].size() + 2,
               joined + "\n" + misspelt);
  std::vector<std::string> w = words(lines[first_row + 4]);
  w[0] = "1540000000000000000";  // _atom_site.id of the fifth atom
  std::string row;
  for (const std::string& s : w) row += s + " ";
  text.replace(text.find(lines[first_row + 4]), lines[first_row + 4].size(), row);
  const fs::path dir = temp_dir("cif-header");
  write_text(dir / "header.cif", text);
  expect_read_error(dir / "header.cif", first_row + 4 + 1 - 1,  // one header line fewer
                    "_atom_site.id is beyond the 32-bit range of serial numbers: '1540000000000000000'");
  fs::remove_all(dir);
}

// fuzz_mmcif's finding (fuzz/regressions/mmcif): gemmi reads integers from categories besides
// _atom_site (here _entity_poly_seq.num) and overflowed there. Every unquoted value that starts
// with an integer beyond 32 bits is refused, naming its tag and line, in a loop or an item.
TEST(ReadHostile, IntegersBeyond32BitsAnywhereInTheFileAreRefused) {
  const std::string cif = read_text(data_file("1hpv.cif.gz"));
  const auto lines = lines_of(cif);
  const auto line_of = [&](const std::string& text) {
    return std::size_t(std::find(lines.begin(), lines.end(), text) - lines.begin());
  };
  const std::size_t sequence_row = line_of("A 2 GLN"), cell = line_of("_cell.Z_PDB 12");
  ASSERT_LT(sequence_row, lines.size());
  ASSERT_LT(cell, lines.size());
  const struct {
    std::string from, to, value, tag;
    std::size_t line;
  } cases[] = {{"A 2 GLN", "A 22222222222222222222268 GLN", "22222222222222222222268",
                "_entity_poly_seq.num", sequence_row + 1},
               {"_cell.Z_PDB 12", "_cell.Z_PDB -3000000000", "-3000000000", "_cell.Z_PDB", cell + 1}};
  const fs::path dir = temp_dir("cif-anywhere");
  for (const auto& c : cases) {
    SCOPED_TRACE(c.tag);
    std::string text = cif;
    text.replace(text.find("\n" + c.from + "\n") + 1, c.from.size(), c.to);
    write_text(dir / "int.cif", text);
    expect_read_error(dir / "int.cif", c.line,
                      c.tag + " starts with an integer beyond the 32-bit range: '" + c.value + "'");
  }
  fs::remove_all(dir);
}

TEST(ReadHostile, QuotedCifValuesAreNeverKeywords) {
  // A quoted value that reads like a tag ('_x') or is empty ('') in a row: the check must go on
  // past it and name the bad coordinate two rows later (it used to stop at '_x').
  const std::string header =
      "data_q\nloop_\n_atom_site.group_PDB\n_atom_site.id\n_atom_site.type_symbol\n"
      "_atom_site.label_atom_id\n_atom_site.label_alt_id\n_atom_site.label_comp_id\n"
      "_atom_site.label_asym_id\n_atom_site.label_seq_id\n_atom_site.Cartn_x\n"
      "_atom_site.Cartn_y\n_atom_site.Cartn_z\n_atom_site.occupancy\n"
      "_atom_site.B_iso_or_equiv\n_atom_site.auth_seq_id\n_atom_site.auth_asym_id\n";
  const fs::path dir = temp_dir("cif-quoted");
  write_text(dir / "q.cif", header +
                                "HETATM 1 C '_x' . LIG A 1 1.0 2.0 3.0 1 0 1 A\n"
                                "HETATM 2 C '' . LIG A 1 1.0 2.0 3.0 1 0 1 A\n"
                                "HETATM 3 O O . LIG A 1 4.0 5.0 6.x 1 0 1 A\n");
  expect_read_error(dir / "q.cif", 20, "_atom_site.Cartn_z is not a number: '6.x'");
  fs::remove_all(dir);
}

// fuzz_mmcif's finding: a loop_ with values but no tags made the check divide by zero (SIGFPE);
// gemmi's own error is the answer, with the file's name.
TEST(ReadHostile, CifLoopWithoutTagsIsACleanError) {
  const fs::path dir = temp_dir("cif-no-tags");
  for (const std::string text : {"data_x\nloop_\n1 2 3\n", "data_x\nloop_atom.id 1 2\n"}) {
    write_text(dir / "no_tags.cif", text);
    try {
      io::read_structure(dir / "no_tags.cif");
      ADD_FAILURE() << "read: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("no_tags.cif"), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

TEST(ReadHostile, OutlierAtomNamedByIndexLineAndDistance) {
  // 1hpv.pdb with the x coordinate of one atom record typed as 99999.
  const std::string text = read_text(data_file("1hpv.pdb"));
  const auto atoms = atom_lines(text);
  const std::string victim = atoms[atoms.size() / 2];
  std::string edited = victim;
  edited.replace(30, 8, "99999.00");
  std::string file = text;
  const std::size_t at = file.find(victim);
  file.replace(at, victim.size(), edited);
  const std::size_t victim_line =
      1 + std::size_t(std::count(file.begin(), file.begin() + std::ptrdiff_t(at), '\n'));
  const fs::path dir = temp_dir("outlier");
  write_text(dir / "typo.pdb", file);
  io::ReadOptions options;
  options.forcefield_dir = data_file("pdb2pqr");
  options.unknown_zero = true;
  const io::Structure s = io::read_structure(dir / "typo.pdb", options);
  const auto outlier = io::find_outlier(s.atoms);
  ASSERT_TRUE(outlier.has_value());
  EXPECT_EQ(outlier->count, 1u);
  EXPECT_EQ(s.lines[outlier->index], victim_line);
  EXPECT_NEAR(s.atoms.x[outlier->index], 99999.0, 1e-2);
  // The nearest other atom, by a float64 search here.
  double nearest = 1e300;
  for (std::size_t i = 0; i < s.atoms.size(); ++i)
    if (i != outlier->index)
      nearest = std::min(nearest, std::hypot(double(s.atoms.x[i]) - s.atoms.x[outlier->index],
                                             double(s.atoms.y[i]) - s.atoms.y[outlier->index],
                                             double(s.atoms.z[i]) - s.atoms.z[outlier->index]));
  EXPECT_NEAR(outlier->nearest_distance, nearest, 1e-6 * nearest);

  // Nothing flagged in the real structure, a water box, or two atoms far apart.
  EXPECT_FALSE(io::find_outlier(io::read_structure(data_file("1hpv.pdb"), options).atoms));
  EXPECT_FALSE(io::find_outlier(water_box_atoms(30000)));
  AtomSet pair;
  pair.push_back(0, 0, 0, 1);
  pair.push_back(1000, 0, 0, -1);
  EXPECT_FALSE(io::find_outlier(pair));
  fs::remove_all(dir);
}

// Among 2·10^5 atoms (past the size where the search runs on every core): far atoms up to the
// tail the check looks at are found, whatever their number, and those beyond it are not; a far
// group of identical positions (ties at the tail's edge) counts whole or not at all.
TEST(ReadHostile, FarAtomsAmongManyAreCountedUpToTheTail) {
  const AtomSet box = water_box_atoms(200000);
  const auto with_far = [&](std::size_t count, bool identical) {
    AtomSet atoms = box;
    for (std::size_t k = 0; k < count; ++k)
      atoms.push_back(5000.0f + (identical ? 0.0f : 0.01f * float(k)), 0, 0, 0);
    return atoms;
  };
  // tail = max(16, n/1000) + 1 outermost atoms: n = 200,000 + count.
  for (const std::size_t count : {std::size_t(1), std::size_t(150), std::size_t(200)}) {
    const AtomSet atoms = with_far(count, false);
    const auto outlier = io::find_outlier(atoms);
    ASSERT_TRUE(outlier.has_value()) << count;
    EXPECT_EQ(outlier->count, count);
    EXPECT_EQ(outlier->index, atoms.size() - 1);  // the farthest placed last
    // Its nearest neighbour: the far atom placed before it, or the box's farthest along x.
    double nearest = 1e300;
    for (std::size_t i = 0; i + 1 < atoms.size(); ++i)
      nearest = std::min(nearest, std::hypot(double(atoms.x[i]) - atoms.x.back(), double(atoms.y[i]) - atoms.y.back(),
                                             double(atoms.z[i]) - atoms.z.back()));
    EXPECT_NEAR(outlier->nearest_distance, nearest, 1e-12 * nearest) << count;
  }
  EXPECT_FALSE(io::find_outlier(with_far(260, false)));  // more than the tail: a second cluster
  const auto tied = io::find_outlier(with_far(200, true));
  ASSERT_TRUE(tied.has_value());
  EXPECT_EQ(tied->count, 200u);
  EXPECT_EQ(tied->nearest_distance, 0.0);  // its twins
  EXPECT_FALSE(io::find_outlier(with_far(202, true)));
}

// Issue 35 group 10: a name announcing a compression the content lacks is refused, for every
// text reader (structures, maps), saying what the file holds.
TEST(ReadCompressed, MislabelledCompressionIsRefused) {
  const fs::path dir = temp_dir("mislabelled");
  const std::string text = read_text(data_file("1d7h-min.pqr"));
  for (const char* suffix : {".gz", ".bz2", ".xz", ".GZ"}) {
    SCOPED_TRACE(suffix);
    write_text(dir / (std::string("plain.pqr") + suffix), text);
    expect_read_error(dir / (std::string("plain.pqr") + suffix), 0, "holds uncompressed data");
  }
  write_gz(dir / "gzipped.pqr.bz2", text);
  expect_read_error(dir / "gzipped.pqr.bz2", 0, "named as bzip2 data but is not: it holds gzip data");
  // The content still decides where the name says nothing of compression.
  write_gz(dir / "gzipped.pqr", text);
  EXPECT_EQ(io::read_structure(dir / "gzipped.pqr").atoms.size(), io::read_structure(data_file("1d7h-min.pqr")).atoms.size());
  // A map: a plain OpenDX text named .dx.gz.
  const GridSpec grid = grid_from_origin({0, 0, 0}, {2, 2, 2}, 1.0);
  const std::vector<float> values(grid.point_count(), 1.5f);
  io::write_map(dir / "m.dx", grid, values.data(), {});
  fs::copy_file(dir / "m.dx", dir / "m.dx.gz");
  try {
    io::read_map(dir / "m.dx.gz", io::map_format_from_path("m.dx.gz"), {});
    ADD_FAILURE() << "a plain map named .dx.gz was read";
  } catch (const InputError& e) {
    EXPECT_NE(e.problem.find("named as gzip data but is not"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

namespace {

// Writes `head` and then `filler` bytes (in 1 MiB pieces) into a pipe until the reader closes it;
// returns how many bytes went in.
std::size_t feed_pipe(int fd, const std::string& head, char filler, std::size_t filler_bytes) {
  std::size_t written = 0;
  const std::string piece(std::size_t(1) << 20, filler);
  const auto put = [&](const char* p, std::size_t n) {
    for (std::size_t done = 0; done < n;) {
      const ssize_t got = ::write(fd, p + done, n - done);
      if (got <= 0) return false;  // EPIPE: the reader is gone
      done += std::size_t(got);
      written += std::size_t(got);
    }
    return true;
  };
  if (put(head.data(), head.size()))
    for (std::size_t left = filler_bytes; left > 0 && put(piece.data(), std::min(left, piece.size()));)
      left -= std::min(left, piece.size());
  ::close(fd);
  return written;
}

// read_structure("-", pqr) on a pipe fed by feed_pipe; the InputError's problem, and the bytes
// the writer put in before the reader stopped.
std::pair<std::string, std::size_t> read_fed_pipe(const std::string& head, char filler,
                                                  std::size_t filler_bytes) {
  ::signal(SIGPIPE, SIG_IGN);
  int fds[2];
  if (::pipe(fds) != 0) return {"pipe failed", 0};
  std::size_t written = 0;
  std::thread writer([&] { written = feed_pipe(fds[1], head, filler, filler_bytes); });
  io::ReadOptions pqr;
  pqr.format = io::Format::pqr;
  std::string problem = "read without an error";
  try {
    read_stdin_from(fds[0], pqr);  // closes the read end when it returns
  } catch (const InputError& e) {
    problem = e.problem;
  }
  writer.join();
  return {problem, written};
}

struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name); }
  const char* name;
};

// fuzz_pdb_chunks' finding (fuzz/regressions/pdb_chunks): gemmi 0.5 read an SSBOND's distance
// (columns 74-78) past the end of a record of 73-79 characters, LINK's too. Such
// records, named in any case as gemmi names them, are padded to 80 columns before gemmi reads
// them; only a sanitizer build (tools/sanitize.sh) fails without it.
TEST(ReadHostile, ShortSsbondRecordsAreReadWithinTheirLine) {
  const std::string pdb = read_text(data_file("pept.pdb"));
  const std::string ssbond = "SSBOND   1 CYS A    1    CYS A    2                          1555   1555  2.04";
  const fs::path dir = temp_dir("pdb-ssbond");
  const io::Structure plain = [&] {
    write_text(dir / "plain.pdb", pdb);
    return io::read_structure(dir / "plain.pdb");
  }();
  // gemmi names records by their first four letters in any case.
  const std::string link = "LINK         O   HOH A   1                 O   HOH A   2                  2.50  ";
  for (const std::string& record : {ssbond, "ssbOxx" + ssbond.substr(6), link}) {
    for (std::size_t length = 73; length <= record.size(); ++length) {
      SCOPED_TRACE(record.substr(0, 6) + " " + std::to_string(length));
      write_text(dir / "short.pdb", record.substr(0, length) + "\n" + pdb);
      const io::Structure read = io::read_structure(dir / "short.pdb");
      EXPECT_EQ(read.atoms.x, plain.atoms.x);
      EXPECT_EQ(read.atoms.q, plain.atoms.q);
    }
  }
  // The fuzzer's input itself reads to atoms or a clean error.
  try {
    (void)io::read_structure(source_dir() / "fuzz/regressions/pdb_chunks/ssbond_distance_past_the_record.pdb");
  } catch (const InputError&) {
  }
  fs::remove_all(dir);
}

}  // namespace

// Issue 35 group 4: binary data is refused in the first piece read, naming its byte offset, so a
// stream of zeros after it is never read (the old reader took all of it first).
TEST(ReadStreamed, BinaryIsRefusedBeforeTheRestIsRead) {
  const auto [problem, written] = read_fed_pipe(std::string("REMARK x\n\0", 10), 'A', std::size_t(512) << 20);
  EXPECT_NE(problem.find("binary data (byte 0x00 at byte offset 9)"), std::string::npos) << problem;
  EXPECT_LT(written, std::size_t(64) << 20) << "the reader went on after the binary byte";
}

// A regular file past its first MiB is read by every core in blocks of 8 MiB: the text comes back
// byte for byte, and a binary byte deep in a later block is named by its own offset and line.
TEST(ReadStreamed, LargeFilesReadInParallelBlocksAsWritten) {
  const fs::path dir = temp_dir("parallel-read");
  std::string text;
  for (std::size_t line = 0; text.size() < (std::size_t(29) << 20); ++line)
    text += "REMARK " + std::to_string(line * 7919 % 100003) + " line " + std::to_string(line) + "\n";
  write_text(dir / "big.txt", text);
  EXPECT_EQ(io::read_text_input(dir / "big.txt").view(), text);

  const std::size_t at = (std::size_t(21) << 20) + 12345;  // in the third block after the first MiB
  std::string bad = text;
  bad[at] = '\x01';
  write_text(dir / "bad.txt", bad);
  const std::size_t line = 1 + std::size_t(std::count(bad.begin(), bad.begin() + std::ptrdiff_t(at), '\n'));
  try {
    io::read_text_input(dir / "bad.txt");
    ADD_FAILURE() << "a binary byte was read as text";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("byte 0x01 at byte offset " + std::to_string(at)), std::string::npos) << what;
    EXPECT_NE(what.find(":" + std::to_string(line) + ":"), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

// Devices never end (/dev/zero) and are refused by name, as standard input too; a named pipe
// is read as before.
TEST(ReadStreamed, DevicesAreRefusedAndNamedPipesRead) {
  expect_read_error("/dev/zero", 0, "is a character device", [] {
    io::ReadOptions o;
    o.format = io::Format::pqr;
    return o;
  }());
  io::ReadOptions pqr;
  pqr.format = io::Format::pqr;
  try {
    read_stdin_from(::open("/dev/zero", O_RDONLY), pqr);
    ADD_FAILURE() << "standard input from /dev/zero was read";
  } catch (const InputError& e) {
    EXPECT_NE(e.problem.find("is a character device"), std::string::npos) << e.what();
  }
  const fs::path dir = temp_dir("fifo");
  const fs::path fifo = dir / "atoms.pqr";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string text = read_text(data_file("1d7h-min.pqr"));
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    feed_pipe(fd, text, ' ', 0);
  });
  const io::Structure s = io::read_structure(fifo);
  writer.join();
  expect_same_atoms(s.atoms, io::read_structure(data_file("1d7h-min.pqr")).atoms);
  fs::remove_all(dir);
}

// Opening a named pipe waits for its writer; a signal caught meanwhile (a handler without
// SA_RESTART, as libFuzzer's timer and many programs' are) interrupts that wait, which is no
// reason to refuse the input: the open is tried again (fuzz_stream's finding, where the file
// and the pipe disagreed only under load).
TEST(ReadStreamed, SignalsWhileWaitingForAPipesWriterAreNotErrors) {
  struct sigaction tick {}, before {};
  tick.sa_handler = [](int) {};
  sigemptyset(&tick.sa_mask);
  tick.sa_flags = 0;  // no SA_RESTART
  ASSERT_EQ(::sigaction(SIGALRM, &tick, &before), 0);
  const fs::path dir = temp_dir("fifo-signal");
  const fs::path fifo = dir / "atoms.pqr";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Small enough for the pipe's buffer, so a writer released after a failed read never blocks.
  const std::string text =
      "ATOM      1  N   ALA A   1       1.000   2.000   3.000  0.1000 1.5000\n"
      "ATOM      2  CA  ALA A   1       2.000   2.000   3.000 -0.1000 1.7000\n";
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the reader is waiting in open
    int fd = -1;
    while ((fd = ::open(fifo.c_str(), O_WRONLY)) < 0 && errno == EINTR) {
    }
    feed_pipe(fd, text, ' ', 0);
  });
  // SIGALRM to this (the reading) thread 100 ms into its wait.
  std::thread alarm([reader = ::pthread_self()] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::pthread_kill(reader, SIGALRM);
  });
  std::optional<io::Structure> read;
  std::string problem;
  try {
    read = io::read_structure(fifo);
  } catch (const InputError& e) {
    problem = e.what();
  }
  alarm.join();
  // A reader that gave up leaves the writer waiting in its open: open the pipe to release it.
  const int release = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  writer.join();
  if (release >= 0) ::close(release);
  ::sigaction(SIGALRM, &before, nullptr);
  ASSERT_TRUE(read) << problem;
  EXPECT_EQ(read->atoms.x, (std::vector<float>{1, 2}));
  EXPECT_EQ(read->atoms.q, (std::vector<float>{0.1f, -0.1f}));
  fs::remove_all(dir);
}

// The input limit bounds a stream of valid text, and the expansion bound a decompression bomb
// (200 MiB of blanks in a 200 kB gzip file), each refused with the variable that raises it.
TEST(ReadStreamed, InputLimitAndDecompressionBombAreRefused) {
  {
    const ScopedEnv limit("DCSGRID_MAX_INPUT_BYTES", "1M");
    const auto [problem, written] = read_fed_pipe("REMARK\n", '\n', std::size_t(256) << 20);
    EXPECT_NE(problem.find("more than the input limit of 1048576 bytes"), std::string::npos) << problem;
    EXPECT_NE(problem.find("DCSGRID_MAX_INPUT_BYTES"), std::string::npos) << problem;
    EXPECT_LT(written, std::size_t(64) << 20);
  }
  {
    const ScopedEnv limit("DCSGRID_MAX_INPUT_BYTES", "12 apples");
    EXPECT_THROW(io::read_structure(data_file("1d7h-min.pqr")), Error);
  }
  const fs::path dir = temp_dir("bomb");
  const fs::path bomb = dir / "bomb.pqr.gz";
  gzFile gz = gzopen(bomb.c_str(), "wb9");
  ASSERT_NE(gz, nullptr);
  const std::string blanks(std::size_t(1) << 20, ' ');
  for (int i = 0; i < 200; ++i) ASSERT_EQ(gzwrite(gz, blanks.data(), unsigned(blanks.size())), int(blanks.size()));
  gzclose(gz);
  ASSERT_LT(fs::file_size(bomb), std::uintmax_t(1) << 20);
  expect_read_error(bomb, 0, "decompresses to more than 100 times its size");
  {
    const ScopedEnv ratio("DCSGRID_MAX_EXPANSION", "100000");
    expect_read_error(bomb, 0, "no atoms");  // allowed: blanks hold no atom
  }
  fs::remove_all(dir);
}
