// read_each_model: a multi-model file with one broken model gives that model's error (its line as
// in the file) and the other models as read_all_models reads them from a file without it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"

using namespace dcsgrid;
namespace fs = std::filesystem;

namespace {

std::string atom_line(int serial, double x, double charge) {
  char line[100];
  std::snprintf(line, sizeof line, "ATOM  %5d  C   MOL A   1    %8.3f%8.3f%8.3f %7.4f 1.7000\n",
                serial, x, 1.0, 2.0, charge);
  return line;
}

// Three models of two atoms; model `broken` (0: none) has an unreadable x in its second atom.
std::string three_models(int broken) {
  std::string text = "REMARK three models\n";
  for (int m = 1; m <= 3; ++m) {
    text += "MODEL        " + std::to_string(m) + "\n";
    text += atom_line(1, m, 0.5);
    std::string second = atom_line(2, m + 1.5, -0.25);
    if (m == broken) second.replace(30, 8, "   x.000");
    text += second + "ENDMDL\n";
  }
  return text + "END\n";
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST(ReadEachModel, BrokenModelFailsAloneWithItsLine) {
  const fs::path dir = test::temp_dir("each-model");
  for (const char* extension : {".pqr", ".pdb"}) {
    const fs::path good = dir / (std::string("good") + extension), bad = dir / (std::string("bad") + extension);
    write(good, three_models(0));
    write(bad, three_models(2));
    io::ReadOptions options;
    options.unknown_zero = true;  // PDB: MOL is in no force field; positions are what count here
    options.forcefield_dir = test::data_file("pdb2pqr");  // the bundled tables, not the installed ones
    const auto whole = io::read_all_models(good, options);
    ASSERT_EQ(whole.size(), 3u);
    EXPECT_THROW(io::read_all_models(bad, options), InputError);

    const auto each = io::read_each_model(bad, options);
    ASSERT_EQ(each.size(), 3u) << extension;
    for (int m : {0, 2}) {
      ASSERT_TRUE(each[m].structure) << extension << " model " << m + 1 << ": " << each[m].error;
      EXPECT_EQ(each[m].model, m + 1);
      EXPECT_EQ(each[m].structure->atoms.x, whole[m].atoms.x) << extension;
      EXPECT_EQ(each[m].structure->atoms.q, whole[m].atoms.q) << extension;
      EXPECT_EQ(each[m].structure->lines, whole[m].lines) << extension;
    }
    EXPECT_FALSE(each[1].structure);
    // Line 1 REMARK, model 1 on lines 2-5, model 2's MODEL on 6: its second atom is line 8.
    EXPECT_NE(each[1].error.find("model 2: " + bad.string() + ":8:"), std::string::npos)
        << each[1].error;

    // A file that reads whole gives the same models.
    const auto each_good = io::read_each_model(good, options);
    ASSERT_EQ(each_good.size(), 3u);
    EXPECT_EQ(each_good[2].structure->atoms.x, whole[2].atoms.x);
  }
  // Models that are not MODEL blocks cannot be told apart: the file's error, as before.
  write(dir / "bad.xyz", "1\na\nC 0 0 0 1\n1\nb\nC x 0 0 1\n");
  EXPECT_THROW(io::read_each_model(dir / "bad.xyz"), InputError);
  fs::remove_all(dir);
}

// Issue 35, group 7: `batch --models all` read a PDB with two MODEL 1 records block by block,
// around the error the main command gives (gemmi's "duplicate MODEL number").
TEST(ReadEachModel, DuplicateModelNumbersAreTheFilesError) {
  const fs::path dir = test::temp_dir("each-model-dup");
  std::string text = three_models(0);
  text.replace(text.find("MODEL        2"), 14, "MODEL        1");
  write(dir / "dup.pdb", text);
  io::ReadOptions options;
  options.unknown_zero = true;
  options.forcefield_dir = test::data_file("pdb2pqr");
  std::string main_error, batch_error;
  try {
    io::read_all_models(dir / "dup.pdb", options);
  } catch (const InputError& e) {
    main_error = e.what();
  }
  try {
    io::read_each_model(dir / "dup.pdb", options);
  } catch (const InputError& e) {
    batch_error = e.what();
  }
  EXPECT_NE(main_error.find("duplicate MODEL number"), std::string::npos) << main_error;
  EXPECT_EQ(batch_error, main_error);
  fs::remove_all(dir);
}
