// The PDB text parsed by gemmi in pieces and merged (io/structure/pdb_chunks.hpp) against gemmi's own
// serial parse of the whole text, gemmi::read_pdb_from_memory, field by field: the data files,
// and synthetic texts made for the places where a cut changes gemmi's reading (residue numbers
// wrapping within a chain, a chain's runs, TER records and the entity types they set, ANISOU,
// insertion codes, altlocs, segments, CRLF, no final line end, long lines, header and trailer).
// Piece counts are forced with a minimum of one byte a piece so that cuts fall everywhere, one
// count cutting at every line where a cut is allowed. Where the pieces do not apply (models, a
// failing piece, a small text) the answer must be std::nullopt.
#include <gtest/gtest.h>

#include <cstdio>
#include <gemmi/pdb.hpp>
#include <optional>
#include <string>

#include "gemmi_structure_diff.hpp"
#include "helpers.hpp"
#include "io/text/chunks.hpp"
#include "io/structure/pdb_chunks.hpp"
#include "test_io_read_files.hpp"

using namespace dcsgrid;
using dcsgrid::io::detail::read_pdb_in_chunks;
using dcsgrid::test::first_difference;
namespace fs = std::filesystem;

namespace {

// 100000: more pieces than the small test texts have lines, so a cut at every allowed line.
constexpr std::size_t kPieceCounts[] = {2, 3, 4, 7, 16, 100000};
constexpr std::size_t kEveryLineUpTo = 1 << 20;  // bytes: larger texts take the others only

gemmi::Structure serial_parse(const std::string& text) {
  return gemmi::read_pdb_from_memory(text.data(), text.size(), "test");
}

// Every forced piece count gives gemmi's serial structure; `must_apply`: and not std::nullopt.
void expect_as_serial(const std::string& text, bool must_apply = true) {
  const gemmi::Structure serial = serial_parse(text);
  for (std::size_t pieces : kPieceCounts) {
    if (pieces > 16 && text.size() > kEveryLineUpTo) continue;
    SCOPED_TRACE("pieces " + std::to_string(pieces));
    const std::optional<gemmi::Structure> chunked = read_pdb_in_chunks(text, "test", pieces, 1);
    if (must_apply) {
      ASSERT_TRUE(chunked.has_value());
    } else if (!chunked) {
      continue;
    }
    EXPECT_EQ(first_difference(*chunked, serial), "");
  }
}

void expect_not_applied(const std::string& text) {
  for (std::size_t pieces : kPieceCounts)
    EXPECT_FALSE(read_pdb_in_chunks(text, "test", pieces, 1).has_value()) << pieces << " pieces";
}

// One atom record in the PDB columns; extra: what follows column 80.
struct AtomLine {
  const char* record = "ATOM";
  int serial = 1;
  const char* name = " CA ";
  char altloc = ' ';
  const char* residue = "ALA";
  const char* chain = " A";  // columns 21-22, as gemmi reads them
  int number = 1;
  char icode = ' ';
  double x = 0, y = 0, z = 0, occ = 1, b = 20;
  const char* segment = "";
  const char* element = "C";
  const char* charge = "";
  std::string extra;
};

std::string atom_line(const AtomLine& a) {
  char buf[128];
  std::snprintf(buf, sizeof buf,
                "%-6s%5d %-4s%c%-3s%2s%4d%c   %8.3f%8.3f%8.3f%6.2f%6.2f      %-4s%2s%-2s",
                a.record, a.serial % 100000, a.name, a.altloc, a.residue, a.chain, a.number % 10000,
                a.icode, a.x, a.y, a.z, a.occ, a.b, a.segment, a.element, a.charge);
  return buf + a.extra + "\n";
}

std::string anisou_line(const AtomLine& a) {
  std::string line = atom_line(a);
  line.replace(0, 6, "ANISOU");
  line.replace(28, 42, "    120    130    140     10     20     30");
  return line;
}

// A water box of one chain, gemmi's "MD file": residue numbers wrap at 10000 and serials at
// 100000, several times, so gemmi files later waters under the residues of the first ones.
std::string water_box(std::size_t waters, const char* chain = " W", const char* segment = "") {
  std::string text = "CRYST1  100.000  100.000  100.000  90.00  90.00  90.00 P 1           1\n";
  const char* names[3] = {" O  ", " H1 ", " H2 "};
  const char* elements[3] = {"O", "H", "H"};
  for (std::size_t i = 0; i < 3 * waters; ++i) {
    AtomLine a{.record = "HETATM", .serial = int(i + 1), .name = names[i % 3], .residue = "WAT",
               .chain = chain, .number = int(i / 3 + 1), .x = 0.001 * double(i % 99991),
               .y = -0.5 * double(i % 7), .z = double(i % 1000), .b = 0, .segment = segment,
               .element = elements[i % 3]};
    text += atom_line(a);
  }
  return text + "END\n";
}

// A data file's text as our reader hands it to gemmi: columns 79-80 (formal charge) of atom
// records blanked, where old files keep a line serial that gemmi rejects ("1HPV1704").
std::string data_text(const char* name) {
  std::string text;
  for (std::string line : test::lines_of(test::read_text(test::data_file(name)))) {
    if (test::is_atom_line(line))
      for (std::size_t c = 78; c < std::min<std::size_t>(line.size(), 80); ++c) line[c] = ' ';
    text += line + "\n";
  }
  return text;
}

std::string with_crlf(const std::string& text) {
  std::string out;
  for (const std::string& line : test::lines_of(text)) out += line + "\r\n";
  return out;
}

}  // namespace

TEST(IoReadPdbChunks, DataFilesAsGemmiReadsThem) {
  for (const char* name : {"1a1p.pdb", "1hpv.pdb", "1tii.pdb.gz", "pept.pdb"}) {
    SCOPED_TRACE(name);
    const std::string text = data_text(name);
    expect_as_serial(text);
    expect_as_serial(with_crlf(text));
    expect_as_serial(text.substr(0, text.size() - 1));  // no final line end
  }
  // As it is, 1hpv.pdb fails in gemmi (a line serial in its charge columns): so do the pieces.
  const std::string raw = test::read_text(test::data_file("1hpv.pdb"));
  ASSERT_ANY_THROW(serial_parse(raw));
  expect_not_applied(raw);
}

TEST(IoReadPdbChunks, WaterBoxWithWrappingNumbers) {
  const std::string text = water_box(40000);  // 120000 atoms: 4 residue and 1 serial wraps
  const gemmi::Structure serial = serial_parse(text);
  // The case is what it should be: one chain, waters regrouped under 10000 residues.
  ASSERT_EQ(serial.models[0].chains.size(), 1u);
  ASSERT_EQ(serial.models[0].chains[0].residues.size(), 10000u);
  EXPECT_EQ(serial.models[0].chains[0].residues[1].atoms.size(), 12u);
  expect_as_serial(text);
  // And by segments: then no residue comes again.
  expect_as_serial(water_box(12000, "  ", "W1"));
}

TEST(IoReadPdbChunks, DefaultMinimumCutsLargeTextsOnly) {
  const std::string large = water_box(40000);  // 9.8 MB
  ASSERT_GT(large.size(), 4 * io::detail::kMinPdbPieceBytes);
  const auto chunked = read_pdb_in_chunks(large, "test", 4);
  ASSERT_TRUE(chunked.has_value());
  EXPECT_EQ(first_difference(*chunked, serial_parse(large)), "");
  EXPECT_TRUE(read_pdb_in_chunks(large, "test", io::detail::chunk_count(large.size(), 0)));

  const std::string small = test::read_text(test::data_file("1hpv.pdb"));
  EXPECT_FALSE(read_pdb_in_chunks(small, "test", 4).has_value());
  EXPECT_FALSE(read_pdb_in_chunks(large, "test", 1, 1).has_value());
  EXPECT_FALSE(read_pdb_in_chunks(large, "test", 0, 1).has_value());
}

namespace {

// Residues of `count` atoms each (N CA C O CB), numbered from `first`.
std::string residues(AtomLine a, int first, int count, int* serial, const char* names = "ALA") {
  static const char* kNames[5] = {" N  ", " CA ", " C  ", " O  ", " CB "};
  std::string text;
  a.residue = names;
  for (int r = first; r < first + count; ++r)
    for (int k = 0; k < 5; ++k) {
      a.serial = (*serial)++, a.name = kNames[k], a.number = r, a.x = r + 0.1 * k;
      a.y = -r, a.z = 0.25 * k, a.element = k == 0 ? "N" : k == 3 ? "O" : "C";
      text += atom_line(a);
    }
  return text;
}

std::string waters(const char* chain, int first, int count, int* serial,
                   const char* record = "HETATM") {
  std::string text;
  for (int r = first; r < first + count; ++r)
    text += atom_line({.record = record, .serial = (*serial)++, .name = " O  ", .residue = "HOH",
                       .chain = chain, .number = r, .x = 0.5 * r, .y = 1, .z = 2, .b = 30,
                       .element = "O"});
  return text;
}

// Chains in several runs, TER records (between chains and inside one, followed by waters of the
// chain), ANISOU records, insertion codes, altlocs, segments, charges, a ligand, lowercase records,
// lines longer than 80 and than 120 bytes, a header and a CONECT/MASTER/END trailer.
std::string mixed_chains() {
  int serial = 1;
  std::string text =
      "HEADER    SYNTHETIC                               01-JAN-20   1ABC\n"
      "TITLE     CHAINS IN RUNS\n"
      "REMARK   2 RESOLUTION.    1.80 ANGSTROMS.\n"
      "SEQRES   1 A    3  ALA ALA ALA\n"
      "CRYST1   50.000   60.000   70.000  90.00  95.00  90.00 P 1 21 1      2\n";
  AtomLine a{.chain = " A", .segment = "PROA"};
  text += residues(a, 1, 8, &serial);
  for (char icode : {' ', 'A', 'B'}) {  // 9, 9A, 9B
    AtomLine ins = a;
    ins.serial = serial++, ins.number = 9, ins.icode = icode, ins.x = 9;
    text += atom_line(ins) + anisou_line(ins);
  }
  for (char alt : {'A', 'B'}) {  // a side chain in two conformations
    AtomLine cb = a;
    cb.serial = serial++, cb.name = " CB ", cb.altloc = alt, cb.number = 10, cb.occ = 0.5;
    cb.x = alt == 'A' ? 10 : 10.5, cb.charge = alt == 'A' ? "1+" : "";
    text += atom_line(cb) + anisou_line(cb);
  }
  AtomLine longer = a;
  longer.extra = "   columns after 80";
  text += residues(longer, 11, 4, &serial);
  longer.extra = std::string(60, 'x');  // 140 bytes: gemmi reads 120 and skips the rest
  text += residues(longer, 15, 3, &serial) + "TER\n";
  text += residues({.chain = " B"}, 1, 6, &serial) + "TER     200      ALA B   6\n";
  // Chain A again (a new run, after a TER of chain A): a ligand and waters.
  for (int k = 0; k < 4; ++k)
    text += atom_line({.record = "HETATM", .serial = serial++, .name = " C1 ", .residue = "LIG",
                       .number = 401, .x = double(k), .element = "C"});
  text += waters(" A", 501, 10, &serial) + waters(" A", 511, 3, &serial, "hetatm");
  // Chain C: no TER, waters in the same run.
  text += residues({.chain = " C"}, 1, 5, &serial) + waters(" C", 301, 6, &serial);
  // Chain D: TER inside the run, then waters and residues already seen (regrouped, polymer).
  text += residues({.chain = " D"}, 1, 5, &serial) + "TER\n" + waters(" D", 301, 6, &serial);
  text += residues({.chain = " D"}, 2, 2, &serial) + waters(" D", 307, 4, &serial) + "TER\n";
  text += waters(" B", 601, 5, &serial) + waters("XY", 1, 4, &serial);  // 2-letter chain name
  text += "CONECT    1    2\nCONECT    2    1\nMASTER        0    0    0\nEND\n";
  return text;
}

}  // namespace

TEST(IoReadPdbChunks, MixedChainsAsGemmiReadsThem) {
  const std::string text = mixed_chains();
  const gemmi::Structure serial = serial_parse(text);
  // The cases are there: chain runs A B A C D B XY, residue 9 with insertion codes, D's
  // residues 2 and 3 regrouped, entity types set by TER records.
  std::string runs;
  for (const gemmi::Chain& ch : serial.models[0].chains) runs += ch.name + " ";
  ASSERT_EQ(runs, "A B A C D B XY ");
  const gemmi::Chain& d = serial.models[0].chains[4];
  EXPECT_EQ(d.residues[1].atoms.size(), 10u);
  EXPECT_EQ(d.residues[1].entity_type, gemmi::EntityType::Polymer);
  EXPECT_EQ(d.residues.back().entity_type, gemmi::EntityType::Water);
  EXPECT_EQ(serial.models[0].chains[2].residues[0].entity_type, gemmi::EntityType::NonPolymer);
  expect_as_serial(text);
  expect_as_serial(with_crlf(text));
  std::string unended = text.substr(0, text.size() - 1);  // no final line end
  expect_as_serial(unended);
  const std::string crlf = with_crlf(text);
  expect_as_serial(crlf.substr(0, crlf.size() - 2));
}

TEST(IoReadPdbChunks, TerInALaterRunOfAChainWhoseFirstRunHadNone) {
  // Serially the third run of C reads with after_ter unset (C's first run had no TER); a piece
  // holding the second and third run cannot tell where that run's residues stand: such pieces
  // answer std::nullopt, cuts between the runs give gemmi's structure.
  int serial = 1;
  const std::string text =
      residues({.chain = " C"}, 1, 4, &serial) + residues({.chain = " E"}, 1, 4, &serial) +
      residues({.chain = " C"}, 5, 4, &serial) + "TER\n" +
      residues({.chain = " E"}, 5, 4, &serial) +
      residues({.chain = " C"}, 9, 2, &serial) + "TER\n" + waters(" C", 100, 3, &serial) + "END\n";
  const gemmi::Structure reference = serial_parse(text);
  EXPECT_EQ(reference.models[0].chains[4].residues[0].entity_type, gemmi::EntityType::Polymer);
  expect_as_serial(text, false);
  const auto every_line = read_pdb_in_chunks(text, "test", 100000, 1);
  ASSERT_TRUE(every_line.has_value());
  EXPECT_EQ(first_difference(*every_line, reference), "");
}

TEST(IoReadPdbChunks, EndRecordStopsTheReading) {
  // gemmi reads nothing after END: neither atoms nor a second model nor a bad line.
  const std::string box = water_box(3000);
  const std::string text = box + water_box(2000).substr(71) + "MODEL        2\nATOM  bad\n";
  expect_as_serial(text);
  // A line gemmi reads as two, END the second: 120 bytes are read, the rest skipped up to a byte
  // >= 0x80, after which "END" reads as a line.
  const std::size_t line_end = box.find('\n', box.size() / 2);
  const std::string split_end = box.substr(0, line_end) + std::string(45, ' ') + "\xC3" "END" +
                                box.substr(line_end);
  ASSERT_LT(serial_parse(split_end).models[0].chains[0].residues.size(), 3000u);
  expect_as_serial(split_end);
}

TEST(IoReadPdbChunks, OneModelInModelRecords) {
  const std::string atoms = water_box(2000).substr(71);  // no CRYST1
  expect_as_serial("MODEL        5\n" + atoms.substr(0, atoms.size() - 4) + "TER\nENDMDL\nEND\n");
}

TEST(IoReadPdbChunks, NotAppliedWithModelsFailuresOrHeaderRecordsInPieces) {
  expect_not_applied(test::read_text(test::data_file("pept_3models.pdb")));
  const std::string atoms = water_box(1000).substr(71);
  const std::string body = atoms.substr(0, atoms.size() - 4);
  expect_not_applied("MODEL        1\n" + body + "ENDMDL\nMODEL        2\n" + body + "ENDMDL\n");
  expect_not_applied(body + "ENDMDL\n" + body + "ENDMDL\n");  // MD frames without MODEL records
  // A line gemmi fails on, in the last piece (a too short atom record, a bad charge).
  for (const std::string bad : {"ATOM      1  CA  ALA A   1       1.000   2.0\n",
                                "ATOM      1  CA  ALA A   1       1.000   2.000   3.000  1.00"
                                "  0.00           C1x\n"}) {
    ASSERT_ANY_THROW(serial_parse(body + bad));
    expect_not_applied(body + bad);
  }
  // Header records after the first cut; a NUL byte; no place to cut.
  const std::size_t late = body.size() / 10 * 9 / 81 * 81;
  EXPECT_FALSE(read_pdb_in_chunks(body.substr(0, late) + "REMARK 1\n" + body.substr(late), "test",
                                  2, 1));
  EXPECT_FALSE(read_pdb_in_chunks(body.substr(0, late) + "CRYST1\n" + body.substr(late), "test",
                                  2, 1));
  std::string with_nul = body;
  with_nul[late + 75] = '\0';
  expect_not_applied(with_nul);
  std::string no_cut;
  for (const std::string& line : test::lines_of(body)) no_cut += line + "\nTER\n";
  expect_not_applied(no_cut);
}

// gemmi keeps a connection record up to its first NUL, '\r' and '\n' included, and reads its
// distance (columns 74-78) when it keeps more than 73 bytes: such a record is padded to 80
// columns before its end, so that read stays inside it (fuzz_pdb_chunks: a NUL at byte 74 of a
// long SSBOND line; a 72-character record ending "\r\n" is the same case in a text file).
TEST(IoReadPdbChunks, ConnectionRecordsArePaddedAsGemmiKeepsThem) {
  const std::string head = "SSBOND   1 CYS A    1    CYS A    2";
  const auto record = [&](std::size_t columns) { return head + std::string(columns - head.size(), ' '); };
  // The bytes gemmi keeps of the text's first line: up to its NUL, or up to and with its '\n'.
  const auto kept = [](const std::string& text) {
    const std::size_t newline = text.find('\n');
    return std::min(text.find('\0'), newline == std::string::npos ? text.size() : newline + 1);
  };
  struct Case {
    std::string line;
    std::size_t kept_after;  // what gemmi keeps once padded
  } cases[] = {
      {record(72) + "\r\n", 82},                                     // 74 kept: padded before "\r\n"
      {record(74) + std::string("\0tail of the line\n", 18), 80},   // 74 kept: padded before the NUL
      {record(73) + "\n", 81},
      {record(71) + "\r\n", 73},                                     // 73 kept: no distance read
      {record(90) + "\n", 91},
      {record(74) + std::string("\0", 1) + std::string(30, 'y') + "\n", 80},
  };
  // An empty text stays empty (UBSan, tools/sanitize.sh, once caught a copy from it into no buffer).
  io::TextBuffer empty{std::string_view()};
  io::detail::pad_short_connection_records(empty);
  EXPECT_EQ(empty.size(), 0u);
  for (const Case& c : cases) {
    io::TextBuffer buffer(c.line + "END\n");
    io::detail::pad_short_connection_records(buffer);
    const std::string text(buffer.view());
    EXPECT_EQ(kept(text), c.kept_after) << kept(c.line) << " bytes kept before";
    EXPECT_EQ(text.substr(0, head.size()), head);
    EXPECT_EQ(text.substr(text.size() - 4), "END\n");
  }
}
