// The periodic methods end to end through the dcsgrid binary: where the cell comes from, the
// default grid over the cell, a neutral system in a huge cell against Coulomb's law, the
// comparison of pme with ewald, the metadata, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"
#include "periodic_reference.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;
using dcsgrid::test::run_command;

namespace {

// PDB inputs take their charges from the bundled pdb2pqr tables (data/pdb2pqr), not the installed ones.
std::string tables() { return " --forcefield-dir " + test::data_file("pdb2pqr").string(); }
std::string dcsgrid_cmd() { return test::dcsgrid_binary() + " --device cpu"; }

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

class CliPeriodic : public ::testing::Test {
 protected:
  void SetUp() override { dir = test::temp_dir("cli-periodic"); }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

// A neutral pair in a 150 Å cell: its periodic images and the tin-foil term change the potential
// near it by about 5e-4 of its value (the images' fields fall as p/L³), so the Ewald and PME maps
// match Coulomb's law of the lone pair to 2e-3; the run stores pme's error against ewald.
TEST_F(CliPeriodic, NeutralPairInAHugeCellApproachesCoulombsLaw) {
  write_text(dir / "pair.xyz", "2\nion pair\nNa 0 0 1.5 1.0\nCl 0 0 -1.5 -1.0\n");
  const fs::path out = dir / "p.h5";
  const auto r = run_command(dcsgrid_cmd() + " " + (dir / "pair.xyz").string() + " -o " + out.string() +
                             " --method ewald,pme --cell 150,150,150 --center 0,0,0 --size 16,16,16 "
                             "--spacing 2 --units kcal/mol/e -q");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* dataset : {"potential", "potential_pme"}) {
    const io::MapFile map = io::read_hdf5(out, dataset);
    double err2 = 0, ref2 = 0;
    for (std::size_t n = 0; n < map.data.size(); ++n) {
      const auto ijk = map.grid.ijk(n);
      const auto p = map.grid.position(ijk[0], ijk[1], ijk[2]);
      const double r1 = std::max(0.5, std::hypot(p[0], p[1], p[2] - 1.5));
      const double r2 = std::max(0.5, std::hypot(p[0], p[1], p[2] + 1.5));
      const double coulomb = 332.0637 * (1 / r1 - 1 / r2);
      err2 += (map.data[n] - coulomb) * (map.data[n] - coulomb);
      ref2 += coulomb * coulomb;
    }
    EXPECT_LT(std::sqrt(err2 / ref2), 2e-3) << dataset;
    EXPECT_EQ(map.meta.parameters.at("cell"), "150 150 150 90 90 90") << dataset;
  }
  EXPECT_EQ(io::read_hdf5(out, "potential").meta.method, "ewald");
  const io::MapFile pme = io::read_hdf5(out, "potential_pme");
  EXPECT_EQ(pme.meta.method, "pme");
  EXPECT_EQ(pme.meta.parameters.at("pme_order"), "6");
  EXPECT_EQ(pme.meta.parameters.at("pme_mesh"), "150 150 150");
  const auto info = run_command(test::dcsgrid_binary() + " info " + out.string());
  EXPECT_NE(info.output.find("cell=150 150 150 90 90 90"), std::string::npos) << info.output;
}

// A PDB's CRYST1 is the cell when --cell is absent; the grid tiles the cell by default.
TEST_F(CliPeriodic, TheInputsCellAndTheCellsGrid) {
  std::ifstream in(test::data_file("pept.pdb"));
  std::ofstream pdb(dir / "boxed.pdb");
  pdb << "CRYST1   40.000   36.000   30.000  90.00  90.00  90.00 P 1           1\n" << in.rdbuf();
  pdb.close();
  const fs::path out = dir / "s.h5";
  const auto r = run_command(dcsgrid_cmd() + " " + (dir / "boxed.pdb").string() + " -o " + out.string() +
                             " --method pme --smooth 0.25 --spacing 1.5 -q" + tables());
  ASSERT_EQ(r.status, 0) << r.output;
  const io::MapFile map = io::read_hdf5(out);
  EXPECT_EQ(map.grid.dims, (std::array<std::int64_t, 3>{27, 24, 20}));  // ⌈L/1.5⌉ points a period
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(map.grid.origin[a], 0.0);
    EXPECT_NEAR(map.grid.spacing[a] * double(map.grid.dims[a]), (std::array{40.0, 36.0, 30.0})[a], 1e-9);
  }
  EXPECT_EQ(map.meta.parameters.at("cell"), "40 36 30 90 90 90");
  EXPECT_EQ(map.meta.parameters.at("smooth_beta"), "0.25");
  EXPECT_EQ(map.meta.parameters.at("neutralising_background"), "no");
}

// --grid cell: the map on a triclinic CRYST1 cell's own lattice, written as HDF5, CCP4, cube and
// OpenDX: the grid is the cell's fractional lattice (positions made here from the cell), the values
// a float64 Ewald sum at those points, every format read back with the same grid and values, and
// other people's readers (tests/python/check_cell_maps.py: h5py, gemmi, ASE, a plain DX parse)
// place it where the cell says.
TEST_F(CliPeriodic, GridOnTheCellsOwnLatticeInEveryFormat) {
  std::ifstream in(test::data_file("pept.pdb"));
  std::ofstream pdb(dir / "tric.pdb");
  pdb << "CRYST1   30.000   32.000   28.000  80.00  95.00 105.00 P 1           1\n" << in.rdbuf();
  pdb.close();
  std::string outputs;
  for (const char* name : {"cell.h5", "cell.ccp4", "cell.cube", "cell.dx"}) outputs += " -o " + (dir / name).string();
  const auto r = run_command(dcsgrid_cmd() + " " + (dir / "tric.pdb").string() + outputs +
                             " --method ewald --grid cell --spacing 2 --min-distance 0.01 -q" + tables());
  ASSERT_EQ(r.status, 0) << r.output;
  const UnitCell cell = make_cell({30, 32, 28}, {80, 95, 105});
  const io::MapFile h5 = io::read_map(dir / "cell.h5");
  ASSERT_EQ(h5.grid.dims, (std::array<std::int64_t, 3>{15, 16, 14}));  // ⌈length/2⌉
  for (const auto& [i, j, k] : {std::array<std::int64_t, 3>{0, 0, 0}, {14, 3, 7}, {5, 15, 13}}) {
    const Vec3 f{double(i) / 15, double(j) / 16, double(k) / 14};
    const auto p = h5.grid.position(i, j, k);
    for (int d = 0; d < 3; ++d)
      EXPECT_NEAR(p[d], f[0] * cell.vectors[0][d] + f[1] * cell.vectors[1][d] + f[2] * cell.vectors[2][d], 1e-9);
  }
  io::ReadOptions read;
  read.forcefield_dir = test::data_file("pdb2pqr");
  const AtomSet atoms = io::read_structure(dir / "tric.pdb", read).atoms;
  const std::vector<double> ref = test::reference_ewald(atoms, cell, h5.grid);
  EXPECT_LT(test::relative_l2(h5.data, ref), 1e-5);
  for (const char* name : {"cell.ccp4", "cell.cube", "cell.dx"}) {
    const io::MapFile back = io::read_map(dir / name);
    EXPECT_TRUE(back.grid.same_as(h5.grid, 1e-4)) << name << ": " << back.grid.describe() << " vs " << h5.grid.describe();
    double worst = 0;
    for (std::size_t p = 0; p < ref.size(); ++p) worst = std::max(worst, double(std::abs(back.data[p] - h5.data[p])));
    EXPECT_LT(worst, 1e-4) << name;
  }
  EXPECT_FALSE(fs::exists(dir / "cell.xmf"));  // XDMF has no skewed grids
  const auto info = run_command(test::dcsgrid_binary() + " info " + (dir / "cell.h5").string());
  EXPECT_NE(info.output.find("steps a (2, 0, 0)"), std::string::npos) << info.output;
  std::ofstream(dir / "expect.txt") << "30 32 28 80 95 105\n0 0 0\n14 3 7\n5 15 13\n7 8 0\n";
  const std::string script = std::string(DCSGRID_SOURCE_DIR) + "/tests/python/check_cell_maps.py";
  const auto check = run_command("/usr/bin/python3 " + script + " " + dir.string());
  if (check.status == 77) GTEST_SKIP() << check.output;
  EXPECT_EQ(check.status, 0) << check.output;
  // Not without a periodic method, nor with a box.
  const std::string base = dcsgrid_cmd() + " " + (dir / "tric.pdb").string() + " -o " + (dir / "x.h5").string() + tables();
  auto refused = run_command(base + " --method direct --grid cell");
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.output.find("needs a periodic method"), std::string::npos) << refused.output;
  refused = run_command(base + " --method pme --grid cell --center 0,0,0 --size 5,5,5");
  EXPECT_NE(refused.status, 0);
  EXPECT_FALSE(fs::exists(dir / "x.h5"));
}

TEST_F(CliPeriodic, RefusalsSayWhatIsWrongAndLeaveNothing) {
  write_text(dir / "one.xyz", "1\none\nNa 0 0 0 1.0\n");
  const std::string base = dcsgrid_cmd() + " " + (dir / "one.xyz").string() + " -o " + (dir / "o.h5").string();
  auto r = run_command(base + " --method pme");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("records no unit cell"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--cell"), std::string::npos) << r.output;
  r = run_command(base + " --method ewald --cell 10,10,10,150,60,60");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("enclose no volume"), std::string::npos) << r.output;
  r = run_command(base + " --method ewald --cell 10,0,10");
  EXPECT_NE(r.status, 0);
  r = run_command(base + " --method direct,pme --cell 10,10,10");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("mixes periodic"), std::string::npos) << r.output;
  r = run_command(base + " --method pme --cell 10,10,10 --ddd");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(test::listing(dir) == std::vector<std::string>{"one.xyz"}) << r.output;
}

}  // namespace

namespace {

// The peptide with a CRYST1 record of the cell a × b × c (orthorhombic).
void write_boxed_peptide(const fs::path& path, const std::string& cryst1) {
  std::ifstream in(test::data_file("pept.pdb"));
  std::ofstream pdb(path);
  if (!cryst1.empty()) pdb << cryst1 << "\n";
  pdb << in.rdbuf();
}

}  // namespace

// batch computes each frame in its own cell (here structure files with different CRYST1), each
// frame equal to the main command's map with that cell on the same grid; a frame without a cell
// fails alone, naming its file.
// batch --average over periodic frames (an explicit grid, two workers): the first frame gives the
// reference cell whichever worker computes first; frames of that cell are averaged, a frame
// of another cell fails naming its file and both cells, and the mean is theirs alone.
TEST_F(CliPeriodic, AverageRefusesFramesOfAnotherCell) {
  const std::string cell = "CRYST1   40.000   40.000   40.000  90.00  90.00  90.00 P 1           1";
  write_boxed_peptide(dir / "a.pdb", cell);
  write_boxed_peptide(dir / "b.pdb", "CRYST1   44.000   42.000   38.000  90.00  90.00 100.00 P 1           1");
  write_boxed_peptide(dir / "c.pdb", cell);
  const std::string grid = " --origin -6,-24,16 --dims 10,9,8 --spacing 1.5";
  const fs::path mean = dir / "mean.dx";
  const auto r = run_command(test::dcsgrid_binary() + " batch " + (dir / "a.pdb").string() + " " +
                             (dir / "b.pdb").string() + " " + (dir / "c.pdb").string() + " -o " + mean.string() +
                             " --device cpu --frame-workers 2 --method pme --average" + grid + " -q" + tables());
  EXPECT_EQ(r.status, 3) << r.output;  // written, one frame failed
  EXPECT_NE(r.output.find("b.pdb"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("differs from the first frame's (40.0000,40.0000,40.0000"), std::string::npos) << r.output;
  const io::MapFile single = [&] {
    const fs::path a = dir / "a.h5";
    const auto m = run_command(dcsgrid_cmd() + " " + (dir / "a.pdb").string() + " -o " + a.string() +
                               " --method pme" + grid + " -q" + tables());
    EXPECT_EQ(m.status, 0) << m.output;
    return io::read_hdf5(a);
  }();
  const io::MapFile got = io::read_map(mean);  // a and c are one structure in one cell: their mean is a's map
  ASSERT_EQ(got.data.size(), single.data.size());
  for (std::size_t p = 0; p < got.data.size(); ++p)
    ASSERT_NEAR(got.data[p], single.data[p], 1e-6 * std::abs(single.data[p]) + 1e-12) << p;
  EXPECT_FALSE(fs::exists(dir / "batch.h5"));
}

// Under NPT the box changes: --average takes each frame at the grid's fractional coordinates in its
// own cell (the grid laid over the first frame's cell, then scaled along x, y and z into each one)
// and writes the mean in the mean cell, as PMEpot does. Checked against a float64 Ewald sum of each
// frame on its scaled grid, averaged in the test.
TEST_F(CliPeriodic, AverageTakesNptFramesAtTheirFractionalCoordinates) {
  const std::vector<Vec3> lengths = {{40, 40, 40}, {42, 41, 40}, {41, 40, 39.5}};
  std::string inputs;
  for (std::size_t f = 0; f < lengths.size(); ++f) {
    const fs::path pdb = dir / ("f" + std::to_string(f) + ".pdb");
    char cryst1[81];
    std::snprintf(cryst1, sizeof cryst1, "CRYST1%9.3f%9.3f%9.3f  90.00  90.00  90.00 P 1           1",
                  lengths[f][0], lengths[f][1], lengths[f][2]);
    write_boxed_peptide(pdb, cryst1);
    inputs += " " + pdb.string();
  }
  const fs::path mean = dir / "mean.h5";
  const auto r = run_command(test::dcsgrid_binary() + " batch" + inputs + " -o " + mean.string() +
                             " --device cpu --frame-workers 2 --method ewald --average --spacing 5 -q" + tables());
  ASSERT_EQ(r.status, 0) << r.output;
  const io::MapFile got = io::read_hdf5(mean);

  io::ReadOptions read;
  read.forcefield_dir = test::data_file("pdb2pqr");
  const AtomSet atoms = io::read_structure(dir / "f0.pdb", read).atoms;
  const GridSpec laid = dcsgrid::grid_over_cell(make_cell(lengths[0]), 5);  // the first frame's cell, tiled
  std::vector<double> expected(laid.point_count(), 0.0);
  Vec3 mean_lengths{};
  for (const Vec3& l : lengths) {
    GridSpec frame_grid = laid;
    for (int d = 0; d < 3; ++d) {
      frame_grid.origin[d] *= l[d] / lengths[0][d];
      frame_grid.spacing[d] *= l[d] / lengths[0][d];
      mean_lengths[d] += l[d] / double(lengths.size());
    }
    const std::vector<double> v = test::reference_ewald(atoms, make_cell(l), frame_grid);
    for (std::size_t p = 0; p < v.size(); ++p) expected[p] += v[p] / double(lengths.size());
  }
  ASSERT_EQ(got.grid.dims, laid.dims);
  for (int d = 0; d < 3; ++d)  // the mean in the mean cell: the grid at the mean scaling
    EXPECT_NEAR(got.grid.spacing[d], laid.spacing[d] * mean_lengths[d] / lengths[0][d], 1e-9) << d;
  EXPECT_EQ(got.meta.parameters.at("cell"), "41.0000,40.3333,39.8333,90.000,90.000,90.000");
  EXPECT_EQ(got.meta.parameters.at("frames_averaged"), "3");
  EXPECT_TRUE(got.meta.parameters.contains("cell_averaging"));
  EXPECT_LT(test::relative_l2(got.data, expected), 1e-5);
}

// Triclinic NPT frames whose cells change shape a little (lengths and angles), averaged on the cell's
// own lattice (--grid cell): each frame is computed on its own cell's lattice (the first frame's
// fractional points), and the mean, placed on the mean cell's lattice, equals the mean of float64
// Ewald sums made here on each frame's lattice.
TEST_F(CliPeriodic, AverageTakesTriclinicFramesOfChangingShapeOnTheirLattices) {
  const std::vector<std::array<double, 6>> cells = {
      {40, 41, 39, 85, 95, 100}, {40.5, 41.2, 38.7, 85.4, 94.8, 100.6}, {39.6, 40.8, 39.3, 84.7, 95.3, 99.5}};
  std::string inputs;
  for (std::size_t f = 0; f < cells.size(); ++f) {
    const fs::path pdb = dir / ("t" + std::to_string(f) + ".pdb");
    char cryst1[81];
    std::snprintf(cryst1, sizeof cryst1, "CRYST1%9.3f%9.3f%9.3f%7.2f%7.2f%7.2f P 1           1", cells[f][0],
                  cells[f][1], cells[f][2], cells[f][3], cells[f][4], cells[f][5]);
    write_boxed_peptide(pdb, cryst1);
    inputs += " " + pdb.string();
  }
  const fs::path mean = dir / "mean.h5";
  const auto r = run_command(test::dcsgrid_binary() + " batch" + inputs + " -o " + mean.string() +
                             " --device cpu --frame-workers 2 --method ewald --average --grid cell --spacing 5 -q" +
                             tables());
  ASSERT_EQ(r.status, 0) << r.output;
  const io::MapFile got = io::read_hdf5(mean);
  io::ReadOptions read;
  read.forcefield_dir = test::data_file("pdb2pqr");
  const AtomSet atoms = io::read_structure(dir / "t0.pdb", read).atoms;
  const std::array<std::int64_t, 3> dims = dcsgrid::grid_on_cell(make_cell({40, 41, 39}, {85, 95, 100}), 5).dims;
  std::vector<double> expected;
  Mat3 mean_vectors{};
  for (const auto& c : cells) {
    const UnitCell cell = make_cell({c[0], c[1], c[2]}, {c[3], c[4], c[5]});
    const std::vector<double> v = test::reference_ewald(atoms, cell, dcsgrid::grid_on_cell(cell, dims));
    expected.resize(v.size(), 0.0);
    for (std::size_t p = 0; p < v.size(); ++p) expected[p] += v[p] / double(cells.size());
    for (int row = 0; row < 3; ++row)
      for (int d = 0; d < 3; ++d) mean_vectors[row][d] += cell.vectors[row][d] / double(cells.size());
  }
  const GridSpec mean_grid = dcsgrid::grid_on_cell(*cell_from_vectors(mean_vectors), dims);
  EXPECT_TRUE(got.grid.same_as(mean_grid, 1e-9)) << got.grid.describe() << " vs " << mean_grid.describe();
  EXPECT_TRUE(got.meta.parameters.contains("cell_averaging"));
  EXPECT_LT(test::relative_l2(got.data, expected), 1e-5);
}

TEST_F(CliPeriodic, BatchTakesEachFramesCell) {
  write_boxed_peptide(dir / "a.pdb", "CRYST1   40.000   40.000   40.000  90.00  90.00  90.00 P 1           1");
  write_boxed_peptide(dir / "b.pdb", "CRYST1   44.000   42.000   38.000  90.00  90.00 100.00 P 1           1");
  write_boxed_peptide(dir / "c.pdb", "");
  const std::string grid = " --origin -6,-24,16 --dims 10,9,8 --spacing 1.5";
  const fs::path out = dir / "batch.h5";
  const auto r = run_command(test::dcsgrid_binary() + " batch " + (dir / "a.pdb").string() + " " +
                             (dir / "b.pdb").string() + " " + (dir / "c.pdb").string() + " -o " + out.string() +
                             " --device cpu --method pme" + grid + " -q" + tables());
  EXPECT_NE(r.status, 0);  // frame c failed
  EXPECT_NE(r.output.find("c.pdb frame"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("has no unit cell"), std::string::npos) << r.output;
  for (const char* name : {"a", "b"}) {
    const fs::path single = dir / (std::string(name) + ".h5");
    const auto m = run_command(dcsgrid_cmd() + " " + (dir / (std::string(name) + ".pdb")).string() + " -o " +
                               single.string() + " --method pme" + grid + " -q" + tables());
    ASSERT_EQ(m.status, 0) << m.output;
    const io::MapFile want = io::read_hdf5(single);
    const io::MapFile got = io::read_hdf5_frame(out, name[0] == 'a' ? 0 : 1);
    ASSERT_EQ(got.data.size(), want.data.size());
    EXPECT_EQ(got.data, want.data) << name;
  }
  const io::MapFile a = io::read_hdf5_frame(out, 0), b = io::read_hdf5_frame(out, 1);
  EXPECT_NE(a.data, b.data);  // two cells, two maps
}
