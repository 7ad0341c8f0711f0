// --method pb end to end through the dcsgrid binary: APBS's own map of the same PQR, grid and
// settings (--preset apbs-pb), the metadata, a list with direct, a batch's energies, and the
// refusals.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/engine/pb.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"
#include "test_pb_apbs.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;
using dcsgrid::test::run_command;

namespace {

class CliPb : public ::testing::Test {
 protected:
  void SetUp() override { dir = test::temp_dir("cli-pb"); }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

double relative_l2(const std::vector<float>& a, const std::vector<float>& ref) {
  double err = 0, norm = 0;
  for (std::size_t n = 0; n < a.size(); ++n) {
    err += (double(a[n]) - ref[n]) * (double(a[n]) - ref[n]);
    norm += double(ref[n]) * ref[n];
  }
  return std::sqrt(err / norm);
}

// 1D7H on APBS's 97 × 65 × 65 grid at 0.75 Å: `dcsgrid --method pb --preset apbs-pb --boundary mdh`
// writes the map APBS's mg-manual writes for pdie 2, sdie 78.54, 0.15 M salt of radius 2 Å, srad
// 1.4, smol, spl2, mdh (without --boundary this grid is tight enough to focus).
TEST_F(CliPb, PresetApbsPbGivesApbsMap) {
  if (!test::have_apbs()) GTEST_SKIP() << "apbs is not installed (Debian: apt-get install apbs)";
  const fs::path pqr = test::data_file("1d7h-min.pqr");
  const auto centre = bounding_box(io::read_structure(pqr).atoms).center();
  std::array<double, 3> origin;
  for (int d = 0; d < 3; ++d) origin[d] = centre[d] - 0.375 * double((d == 0 ? 97 : 65) - 1);
  const GridSpec grid = grid_from_origin(origin, {97, 65, 65}, 0.75);
  const auto r = run_command(test::dcsgrid_binary() + " " + pqr.string() + " -o " + (dir / "pb.dx").string() +
                             " -o " + (dir / "pb.h5").string() + " --method pb --preset apbs-pb --origin " +
                             std::to_string(origin[0]) + "," + std::to_string(origin[1]) + "," +
                             std::to_string(origin[2]) + " --dims 97,65,65 --spacing 0.75 --boundary mdh -q");
  ASSERT_EQ(r.status, 0) << r.output;
  engine::PbOptions apbs;
  apbs.ions = {{1, 0.15, 2.0}, {-1, 0.15, 2.0}};
  double seconds = 0;
  const auto [reference, energy] = test::run_apbs(pqr, grid, apbs, dir, &seconds);
  const io::MapFile ours = io::read_dx(dir / "pb.dx");
  ASSERT_TRUE(ours.grid.same_as(reference.grid, 1e-4)) << ours.grid.describe() << " vs " << reference.grid.describe();
  EXPECT_LT(relative_l2(ours.data, reference.data), 1e-3);
  const io::MapFile h5 = io::read_hdf5(dir / "pb.h5");
  EXPECT_EQ(h5.meta.method, "pb");
  EXPECT_NE(h5.meta.parameters.at("pb").find("smol"), std::string::npos) << h5.meta.parameters.at("pb");
  EXPECT_NE(h5.meta.parameters.at("pb").find("0.15"), std::string::npos) << h5.meta.parameters.at("pb");
}

// pb beside direct: both maps stored, pb's difference from direct reported; the default grid is
// grown to counts the multigrid coarsens (16c + 1).
TEST_F(CliPb, ListWithDirectAndTheDefaultGrid) {
  const fs::path pqr = test::data_file("1d7h-min.pqr");
  const fs::path out = dir / "both.h5";
  const auto r = run_command(test::dcsgrid_binary() + " " + pqr.string() + " -o " + out.string() +
                             " --method direct,pb --preset apbs-pb --spacing 1.5 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("pb against direct"), std::string::npos) << r.output;
  const io::MapFile pb = io::read_hdf5(out, "potential_pb");
  for (const std::int64_t n : pb.grid.dims) EXPECT_EQ((n - 1) % 16, 0) << pb.grid.describe();
  EXPECT_TRUE(io::read_hdf5(out).grid.same_as(pb.grid));
}

TEST_F(CliPb, RefusalsNameTheProblem) {
  std::ofstream(dir / "one.xyz") << "1\none\nNa 0 0 0 1.0\n";
  std::ofstream(dir / "plain.xyz") << "0 0 0 1.0\n";  // no element, so no radius
  const std::string base = test::dcsgrid_binary() + " " + (dir / "one.xyz").string() + " -o " + (dir / "o.h5").string();
  auto r = run_command(test::dcsgrid_binary() + " " + (dir / "plain.xyz").string() + " -o " + (dir / "o.h5").string() +
                       " --method pb");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("plain.xyz:1: atom 1 names no element, and radii"), std::string::npos) << r.output;
  r = run_command(test::dcsgrid_binary() + " " + test::data_file("1d7h-min.pqr").string() + " -o " +
                  (dir / "o.h5").string() + " --method pb --ddd");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--ddd"), std::string::npos) << r.output;
  r = run_command(base + " --method pb --ion 1,0.15");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("CHARGE,CONC,RADIUS"), std::string::npos) << r.output;
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"one.xyz", "plain.xyz"}));
}

// --surface-density and --spline-window (APBS sdens, swin) reach the solver: the metadata records
// them, the spl2 map changes with the window, and values that are not positive are refused.
TEST_F(CliPb, SurfaceDensityAndSplineWindowReachTheSolver) {
  std::ofstream(dir / "one.xyz") << "1\none\nNa 0 0 0 1.0\n";
  const std::string base = test::dcsgrid_binary() + " " + (dir / "one.xyz").string() +
                           " --method pb --device cpu --boundary mdh --spacing 0.5 -q -o ";
  auto r = run_command(base + (dir / "w3.h5").string() + " --surface spl2");
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_command(base + (dir / "w6.h5").string() + " --surface spl2 --spline-window 0.6");
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_command(base + (dir / "d5.h5").string() + " --surface-density 5");
  ASSERT_EQ(r.status, 0) << r.output;
  const io::MapFile w3 = io::read_hdf5(dir / "w3.h5"), w6 = io::read_hdf5(dir / "w6.h5");
  EXPECT_NE(w6.meta.parameters.at("pb").find("swin 0.6"), std::string::npos) << w6.meta.parameters.at("pb");
  EXPECT_GT(relative_l2(w6.data, w3.data), 1e-4);
  const io::MapFile d5 = io::read_hdf5(dir / "d5.h5");
  EXPECT_NE(d5.meta.parameters.at("pb").find("sdens 5"), std::string::npos) << d5.meta.parameters.at("pb");
  for (const std::string bad : {" --surface-density 0", " --spline-window -1"}) {
    r = run_command(base + (dir / "bad.h5").string() + bad);
    EXPECT_NE(r.status, 0) << bad;
    EXPECT_NE(r.output.find(bad.find("density") != std::string::npos ? "sdens" : "swin"), std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(dir / "bad.h5"));
  }
}

// An XYZ input's atoms take their elements' radii: the map of a PQR that gives Na Bondi's 2.27 Å.
TEST_F(CliPb, XyzAtomsTakeTheirElementsRadii) {
  std::ofstream(dir / "one.xyz") << "1\none\nNa 0 0 0 1.0\n";
  std::ofstream(dir / "one.pqr") << "ATOM      1  NA   NA     1       0.000   0.000   0.000  1.0000 2.2700\n";
  const std::string options = " --method pb --spacing 1 --padding 8 --device cpu -q";
  for (const char* input : {"one.xyz", "one.pqr"}) {
    const auto r = run_command(test::dcsgrid_binary() + " " + (dir / input).string() + " -o " +
                               (dir / (std::string(input) + ".h5")).string() + options);
    ASSERT_EQ(r.status, 0) << r.output;
  }
  const io::MapFile xyz = io::read_hdf5(dir / "one.xyz.h5"), pqr = io::read_hdf5(dir / "one.pqr.h5");
  ASSERT_TRUE(xyz.grid.same_as(pqr.grid));
  EXPECT_EQ(xyz.data, pqr.data);
}

// 1D7H's 97 × 65 × 65 grid at 0.75 Å is shorter than 1.7 × its extent: the run focuses by itself
// and says so; --json holds solve_pb's energies and residual history, and each grid solved (the
// reference medium's too, with --solvation); the metadata names the grids.
TEST_F(CliPb, FocusingAndTheSolverReportInJson) {
  const fs::path pqr = test::data_file("1d7h-min.pqr");
  const AtomSet atoms = io::read_structure(pqr).atoms;
  const auto centre = bounding_box(atoms).center();
  std::array<double, 3> origin;
  for (int d = 0; d < 3; ++d) origin[d] = centre[d] - 0.375 * double((d == 0 ? 97 : 65) - 1);
  const GridSpec grid = grid_from_origin(origin, {97, 65, 65}, 0.75);
  const auto r = run_command("{ " + test::dcsgrid_binary() + " " + pqr.string() + " -o " + (dir / "pb.h5").string() +
                             " --method pb --preset apbs-pb --solvation --device cpu --origin " +
                             fmt::format("{:.17g},{:.17g},{:.17g}", origin[0], origin[1], origin[2]) +
                             " --dims 97,65,65 --spacing 0.75 --json > " + (dir / "run.json").string() + "; }");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("pb focusing (as APBS mg-auto), the grid being shorter than 1.7"), std::string::npos)
      << r.output;
  std::ifstream in(dir / "run.json");
  const nlohmann::json solver = nlohmann::json::parse(in).at("passes").at(0).at("solver");

  engine::PbOptions options;
  options.ions = {{1, 0.15, 2.0}, {-1, 0.15, 2.0}};
  options.solvation = true;
  const engine::PbResult ours =
      engine::solve_pb(atoms, grid, options, kCoulomb * unit_factor(Unit::kT_per_e, options.temp));
  EXPECT_NEAR(solver.at("energy").at("kJ_per_mol").get<double>(), ours.energy_kj_per_mol,
              1e-9 * std::abs(ours.energy_kj_per_mol));
  EXPECT_NEAR(solver.at("solvation_energy").at("kJ_per_mol").get<double>(), *ours.solvation_kj_per_mol,
              1e-9 * std::abs(*ours.solvation_kj_per_mol));
  EXPECT_NEAR(solver.at("energy").at("kT").get<double>(),
              ours.energy_kj_per_mol / (kGasConstant * 4.184 * options.temp), 1e-6);
  const auto history = solver.at("residual_history").get<std::vector<double>>();
  ASSERT_EQ(history.size(), ours.residual_history.size());
  for (std::size_t n = 0; n < history.size(); ++n)
    EXPECT_NEAR(history[n], ours.residual_history[n], 1e-6 * ours.residual_history[n]) << n;
  EXPECT_LT(history.back(), options.tolerance);
  std::vector<std::string> boundaries;
  for (const auto& g : solver.at("grids")) boundaries.push_back(g.at("boundary").get<std::string>());
  EXPECT_EQ(boundaries, (std::vector<std::string>{"mdh", "focus", "mdh", "focus"}));
  EXPECT_TRUE(solver.at("grids").at(2).at("reference_medium").get<bool>());
  const io::MapFile h5 = io::read_hdf5(dir / "pb.h5");
  EXPECT_EQ(h5.meta.parameters.at("pb_grids").rfind("2 grids: 97x65x65 points", 0), 0u) << h5.meta.parameters.at("pb_grids");
  EXPECT_NE(h5.meta.parameters.at("pb").find("focusing auto"), std::string::npos) << h5.meta.parameters.at("pb");
}

// The summary prints the energies (APBS's kJ/mol and kT).
TEST_F(CliPb, SummaryPrintsTheEnergies) {
  std::ofstream(dir / "one.pqr") << "ATOM      1  NA   NA     1       0.000   0.000   0.000  1.0000 2.2700\n";
  const auto r = run_command(test::dcsgrid_binary() + " " + (dir / "one.pqr").string() + " -o " +
                             (dir / "o.h5").string() + " --method pb --spacing 1 --padding 8 --device cpu --solvation");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("pb: one grid, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("total electrostatic energy "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("electrostatic solvation energy -"), std::string::npos) << r.output;
}

TEST_F(CliPb, FocusingRefusalsNameTheProblem) {
  const fs::path pqr = test::data_file("1d7h-min.pqr");
  const std::string base = test::dcsgrid_binary() + " " + pqr.string() + " -o " + (dir / "o.h5").string() +
                           " --device cpu --spacing 1.5";
  const auto refused = [&](const std::string& options, const std::string& message) {
    const auto r = run_command(base + options);
    EXPECT_NE(r.status, 0) << options;
    EXPECT_NE(r.output.find(message), std::string::npos) << options << ": " << r.output;
  };
  refused(" --method direct --solvation", "--solvation is the Poisson–Boltzmann solvation energy");
  refused(" --method pb --coarse-size 20,20,20", "is shorter than the grid");
  refused(" --method pb --boundary mdh --coarse-size 200,200,200", "--coarse-size focuses from a coarse grid");
  refused(" --method pb --boundary sdh --coarse-boundary zero", "--coarse-boundary sets the coarse grid");
  // A grid beside the molecule: focusing needs the molecule inside the grid.
  refused(" --method pb --boundary focus --origin 100,100,100 --dims 33,33,33", "must contain the molecule");
  EXPECT_EQ(test::listing(dir), std::vector<std::string>{});
}

}  // namespace

// `dcsgrid batch --method pb` keeps each frame's energies in its table (/frames/energy_kj_per_mol
// and solvation_kj_per_mol): each equals solve_pb's on that frame alone; a method that solves
// nothing leaves them NaN.
TEST_F(CliPb, BatchStoresEachFramesEnergies) {
  const std::vector<std::array<double, 3>> positions{{0.0, 0.0, 0.0}, {0.3, -0.2, 0.1}};
  std::vector<fs::path> frames;
  for (std::size_t k = 0; k < positions.size(); ++k) {
    frames.push_back(dir / fmt::format("frame{}.pqr", k));
    std::ofstream(frames.back()) << fmt::format("ATOM      1  NA   NA     1    {:8.3f}{:8.3f}{:8.3f}  1.0000 2.2700\n",
                                                positions[k][0], positions[k][1], positions[k][2]);
  }
  const GridSpec grid = grid_from_origin({-8, -8, -8}, {33, 33, 33}, 0.5);
  const std::string common = " --device cpu --origin -8,-8,-8 --dims 33,33,33 --spacing 0.5 --dielectric 2";
  const auto r = run_command(test::dcsgrid_binary() + " batch " + frames[0].string() + " " + frames[1].string() +
                             " -o " + (dir / "pb.h5").string() + " --method pb --boundary mdh --solvation" + common);
  ASSERT_EQ(r.status, 0) << r.output;
  const analysis::FrameTable table = analysis::BatchFile(dir / "pb.h5").frames();
  ASSERT_EQ(table.size(), 2u);
  engine::PbOptions options;
  options.pdie = 2;
  options.bcfl = engine::PbBoundary::mdh;
  options.solvation = true;
  for (std::size_t k = 0; k < positions.size(); ++k) {
    AtomSet atoms;
    atoms.push_back(float(positions[k][0]), float(positions[k][1]), float(positions[k][2]), 1.0f);
    atoms.r = {2.27f};
    const engine::PbResult alone =
        engine::solve_pb(atoms, grid, options, kCoulomb * unit_factor(Unit::kT_per_e, options.temp));
    EXPECT_NEAR(table.energy_kj_per_mol(k), alone.energy_kj_per_mol, 1e-9 * std::abs(alone.energy_kj_per_mol)) << k;
    EXPECT_NEAR(table.solvation_kj_per_mol(k), *alone.solvation_kj_per_mol,
                1e-9 * std::abs(*alone.solvation_kj_per_mol)) << k;
  }
  EXPECT_NE(table.energy_kj_per_mol(0), table.energy_kj_per_mol(1));

  const auto direct = run_command(test::dcsgrid_binary() + " batch " + frames[0].string() + " " +
                                  frames[1].string() + " -o " + (dir / "direct.h5").string() + common);
  ASSERT_EQ(direct.status, 0) << direct.output;
  const analysis::FrameTable plain = analysis::BatchFile(dir / "direct.h5").frames();
  for (std::size_t k = 0; k < plain.size(); ++k)
    EXPECT_TRUE(std::isnan(plain.energy_kj_per_mol(k)) && std::isnan(plain.solvation_kj_per_mol(k))) << k;
}
