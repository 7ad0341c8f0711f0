// dcsgrid convert: the PQR it writes, read back by a reader of its own (tests/check_pqr.py), holds
// the input PQR's atoms unchanged; for a PDB input, the same total and per-residue net charges,
// heavy-atom positions and heavy-atom radii as pdb2pqr's own output for that file
// (data/1hpv_pdb2pqr_amber.pqr.gz); mmCIF names the same atoms as PDB. The force-field tables are
// the bundled ones (data/pdb2pqr).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers.hpp"

using namespace dcsgrid;
namespace fs = std::filesystem;

namespace {

test::CommandResult convert(const std::string& args) {
  return test::run_command(test::dcsgrid_binary() + " convert " + args + " --forcefield-dir " +
                           test::data_file("pdb2pqr").string());
}

// check_pqr.py's verdict: "ok\n" or what differs.
std::string check(const std::string& how, const fs::path& reference, const fs::path& output) {
  return test::run_command("/usr/bin/python3 " + (test::source_dir() / "tests" / "check_pqr.py").string() + " " +
                           how + " " + reference.string() + " " + output.string())
      .output;
}

}  // namespace

TEST(Convert, PqrInputComesBackUnchanged) {
  const fs::path dir = test::temp_dir("convert_pqr");
  const fs::path in = test::data_file("1hpv_pdb2pqr_amber.pqr.gz");
  const auto r = convert(in.string() + " -o " + (dir / "out.pqr").string() + " --json");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(check("same", in, dir / "out.pqr"), "ok\n");
  const auto json = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(json["atoms"], 3368);
  EXPECT_EQ(json["radii"], true);
  EXPECT_EQ(test::listing(dir), std::vector<std::string>{"out.pqr"});
}

TEST(Convert, PdbChargesMatchPdb2pqr) {
  const fs::path dir = test::temp_dir("convert_pdb");
  // The inhibitor (residue 478) is in no force-field table: pdb2pqr leaves it out, dcsgrid zeroes it.
  const auto r = convert(test::data_file("1hpv.pdb").string() + " -o " + (dir / "out.pqr").string() + " --unknown zero");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("total charge 4.0000 e (amber charges)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("radii from AMBER.DAT; van der Waals radii of the elements"), std::string::npos)
      << r.output;
  EXPECT_EQ(check("totals", test::data_file("1hpv_pdb2pqr_amber.pqr.gz"), dir / "out.pqr"), "ok\n");
  EXPECT_EQ(check("radii", test::data_file("1hpv_pdb2pqr_amber.pqr.gz"), dir / "out.pqr"), "ok\n");
  // mmCIF's atoms carry the same names, residues, chains and numbers.
  const auto c = convert(test::data_file("1hpv.cif.gz").string() + " -o " + (dir / "cif.pqr").string() + " --unknown zero -q");
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(check("same", dir / "out.pqr", dir / "cif.pqr"), "ok\n");
}

TEST(Convert, RefusesWhatItCannotWrite) {
  const fs::path dir = test::temp_dir("convert_refused");
  const std::string pqr = test::data_file("1hpv_pdb2pqr_amber.pqr.gz").string();
  auto r = convert(pqr + " -o " + (dir / "out.txt").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("out.txt: convert writes PQR"), std::string::npos) << r.output;
  std::ofstream(dir / "there.pqr") << "keep me\n";
  r = convert(pqr + " -o " + (dir / "there.pqr").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("--overwrite"), std::string::npos) << r.output;
  EXPECT_EQ(convert(pqr + " -o " + (dir / "there.pqr").string() + " --overwrite -q").status, 0);
  r = convert((dir / "there.pqr").string() + " -o " + (dir / "there.pqr").string() + " --overwrite");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("the input would be replaced"), std::string::npos) << r.output;
  r = convert(test::data_file("1hpv.pdb").string() + " -o " + (dir / "x.pqr").string());  // the inhibitor
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("--unknown zero"), std::string::npos) << r.output;
  EXPECT_EQ(test::listing(dir), std::vector<std::string>{"there.pqr"});
}

// Inputs without radii take their elements' (PDBQT here); an input that names no element still
// converts, radius 0, with the warning that says why.
TEST(Convert, RadiiFromElementsOrAWarning) {
  const fs::path dir = test::temp_dir("convert_elements");
  auto r = convert(test::data_file("1pgp_lig.pdbqt").string() + " -o " + (dir / "lig.pqr").string() + " --json");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output.substr(r.output.find('{')))["radii"], true);
  r = test::run_command("grep -c ' 1.52$' " + (dir / "lig.pqr").string());  // the 10 OA oxygens
  EXPECT_EQ(r.output, "10\n");
  r = convert(test::data_file("nacl_plain.xyz").string() + " -o " + (dir / "plain.pqr").string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("nacl_plain.xyz:2: atom 1 names no element"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the radius column is 0"), std::string::npos) << r.output;
}
