// End-to-end runs of the dcsgrid binary: analytic fields through the whole pipeline, every output
// format, provenance, and failures that must leave no file behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>

#include <hdf5.h>
#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/units.hpp"
#include "dcsgrid/core/waterbox.hpp"
#include "dcsgrid/io/charges/forcefield.hpp"
#include "dcsgrid/io/hdf5/util.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "helpers.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;
using dcsgrid::test::run_command;

namespace {

std::string dcsgrid_cmd() { return test::dcsgrid_binary() + " --device cpu"; }

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

class Cli : public ::testing::Test {
 protected:
  void SetUp() override { dir = test::temp_dir("cli"); }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
};

}  // namespace

TEST_F(Cli, PointChargeMatchesCoulombsLaw) {
  // One +1 e charge at the origin, grid from (1,1,1) with 1 Å steps: V = k_C/(R T r) in kT/e.
  write_text(dir / "one.xyz", "1\npoint charge\nNa 0 0 0 1.0\n");
  const auto r = run_command(dcsgrid_cmd() + " " + (dir / "one.xyz").string() + " -o " +
                             (dir / "pot.h5").string() + " --origin 1,1,1 --dims 5,4,3 --spacing 1 -q");
  ASSERT_EQ(r.status, 0) << r.output;
  const io::MapFile map = io::read_hdf5(dir / "pot.h5");
  ASSERT_EQ(map.data.size(), 60u);
  const double kt = kGasConstant * 298.15;
  for (std::size_t n = 0; n < map.data.size(); ++n) {
    const auto ijk = map.grid.ijk(n);
    const auto p = map.grid.position(ijk[0], ijk[1], ijk[2]);
    const double rr = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    EXPECT_NEAR(map.data[n], 332.0637 / kt / rr, 1e-5 * 332.0637 / kt / rr) << "point " << n;
  }
  EXPECT_EQ(map.meta.units, "kT/e");
  EXPECT_EQ(map.meta.atom_count, 1u);
  EXPECT_NEAR(map.meta.total_charge, 1.0, 1e-12);
  EXPECT_EQ(map.meta.input_sha256.size(), 64u);
  EXPECT_NE(map.meta.command_line.find("--dims 5,4,3"), std::string::npos);
}

// The input's hash runs beside the passes and reaches every map's metadata once done: each
// dataset of a run of several methods, and a whole-grid format written at the end, hold the
// SHA-256 that coreutils' sha256sum gives.
TEST_F(Cli, EveryMapRecordsTheInputsSha256) {
  const fs::path input = test::data_file("1hpv_pdb2pqr_amber.pqr.gz");
  const auto sum = run_command("sha256sum " + input.string());
  ASSERT_EQ(sum.status, 0) << sum.output;
  const std::string expected = sum.output.substr(0, 64);
  const std::string grid = " --spacing 1.5 -q";
  auto r = run_command(dcsgrid_cmd() + " " + input.string() + " -o " + (dir / "m.h5").string() +
                       " --method direct,cutoff" + grid);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(io::read_hdf5(dir / "m.h5").meta.input_sha256, expected);
  EXPECT_EQ(io::read_hdf5(dir / "m.h5", "potential_cutoff").meta.input_sha256, expected);
  r = run_command(dcsgrid_cmd() + " " + input.string() + " -o " + (dir / "p.dx").string() + grid);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(io::read_dx(dir / "p.dx").meta.input_sha256, expected);
}

TEST_F(Cli, DipoleInKcalWithDielectric) {
  // ±0.5 e at z = ±0.5 Å in ε = 4: V = k_C/ε · Σ q/r, compared at every point.
  write_text(dir / "dipole.xyz", "2\ndipole\nO 0 0 0.5 0.5\nO 0 0 -0.5 -0.5\n");
  const auto r = run_command(dcsgrid_cmd() + " " + (dir / "dipole.xyz").string() + " -o " +
                             (dir / "d.h5").string() +
                             " --center 0,0,0 --size 8,8,8 --spacing 2 --units kcal/mol/e "
                             "--dielectric 4 -q");
  ASSERT_EQ(r.status, 0) << r.output;
  const io::MapFile map = io::read_hdf5(dir / "d.h5");
  ASSERT_EQ(map.grid.point_count(), 125u);
  for (std::size_t n = 0; n < map.data.size(); ++n) {
    const auto ijk = map.grid.ijk(n);
    const auto p = map.grid.position(ijk[0], ijk[1], ijk[2]);
    const double r1 = std::max(0.5, std::hypot(p[0], p[1], p[2] - 0.5));
    const double r2 = std::max(0.5, std::hypot(p[0], p[1], p[2] + 0.5));
    const double expect = 332.0637 / 4 * (0.5 / r1 - 0.5 / r2);
    EXPECT_NEAR(map.data[n], expect, 1e-5 * 332.0637 / 4) << "point " << n;
  }
}

TEST_F(Cli, WritesEveryFormatAndTheyAgree) {
  const fs::path input = test::data_file("1d7h-min.pqr");
  ASSERT_TRUE(fs::exists(input)) << input;
  const auto r = run_command(dcsgrid_cmd() + " " + input.string() + " -o " + (dir / "a.h5").string() +
                             " -o " + (dir / "a.dx").string() + " -o " + (dir / "a.ccp4").string() +
                             " --spacing 2 --padding 4 -q --json");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("\"atoms\""), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir / "a.xmf"));
  const io::MapFile h5 = io::read_hdf5(dir / "a.h5");
  const io::MapFile dx = io::read_dx(dir / "a.dx");
  ASSERT_TRUE(h5.grid.same_as(dx.grid, 1e-4));
  double worst = 0;
  for (std::size_t n = 0; n < h5.data.size(); ++n)
    worst = std::max(worst, double(std::abs(h5.data[n] - dx.data[n])) / (1 + std::abs(h5.data[n])));
  EXPECT_LT(worst, 1e-5);
  EXPECT_GT(fs::file_size(dir / "a.ccp4"), 1024 + 4 * h5.data.size() - 1);

  const auto info = run_command(test::dcsgrid_binary() + " info " + (dir / "a.h5").string());
  ASSERT_EQ(info.status, 0) << info.output;
  EXPECT_NE(info.output.find("kT/e"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("1d7h-min.pqr"), std::string::npos) << info.output;
}

// --json's timeline: every stage within the run, the parse and the backend's start-up side by side,
// the atom checks after the parse, the plan after those, each pass after the plan, the input's hash
// beside them and done before the outputs' completion, which follows the last pass; each pass's
// overlap.
TEST_F(Cli, JsonTimelinePlacesEveryStageInTheRun) {
  const fs::path input = test::data_file("1d7h-min.pqr");
  // stdout alone (a GPU run warns on stderr that direct would have been cheaper).
  const auto r = run_command("(" + dcsgrid_cmd() + " " + input.string() + " -o " + (dir / "t.h5").string() +
                             " --spacing 2 --padding 4 --method direct,cutoff -q --json 2>/dev/null)");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto report = nlohmann::json::parse(r.output);
  const double total = report["seconds"]["total"].get<double>();
  std::map<std::string, std::pair<double, double>> span;
  for (const auto& s : report["timeline"]) {
    const double begin = s["begin"].get<double>(), end = s["end"].get<double>();
    EXPECT_LE(0.0, begin) << s.dump();
    EXPECT_LE(begin, end) << s.dump();
    EXPECT_LE(end, total + 1e-6) << s.dump();
    span[s["stage"].get<std::string>()] = {begin, end};
  }
  for (const char* stage : {"backend start-up", "parse", "atom checks and grid", "plan and outputs opened",
                            "input hash", "direct (compute and write)", "cutoff (compute and write)",
                            "outputs' completion"})
    ASSERT_TRUE(span.count(stage)) << stage << " missing: " << r.output;
  EXPECT_GE(span["atom checks and grid"].first, span["parse"].second);
  const double ready = std::max(span["atom checks and grid"].second, span["backend start-up"].second);
  EXPECT_GE(span["plan and outputs opened"].first, ready);
  EXPECT_GE(span["direct (compute and write)"].first, span["plan and outputs opened"].second);
  EXPECT_LE(span["input hash"].second, span["outputs' completion"].first);
  EXPECT_GE(span["cutoff (compute and write)"].first, span["direct (compute and write)"].second);
  EXPECT_GE(span["outputs' completion"].first, span["cutoff (compute and write)"].second);
  // Each pass's overlap: what its set-up, compute and write took beyond its wall time.
  for (const auto& pass : report["passes"]) {
    const auto& t = pass["seconds"];
    const double parts = t["setup"].get<double>() + t["compute"].get<double>() + t["write"].get<double>();
    EXPECT_NEAR(t["overlapped"].get<double>(), std::max(0.0, parts - t["wall"].get<double>()), 1e-9)
        << pass.dump();
  }
}

// The job computes the atoms' distance shells once for all its comparisons; each pass's report
// is what `dcsgrid compare --atoms` makes of the same two maps on its own.
TEST_F(Cli, JobComparisonsAreThoseOfTheCompareCommand) {
  const fs::path input = test::data_file("1d7h-min.pqr");
  const fs::path out = dir / "m.h5";
  const std::string job_command = dcsgrid_cmd() + " " + input.string() + " -o " + out.string() +
                                  " --spacing 1 --padding 6 --method direct,msm,cutoff -q --json";
  const auto job = run_command("(" + job_command + " 2>/dev/null)");
  ASSERT_EQ(job.status, 0) << job.output;
  const auto report = nlohmann::json::parse(job.output);
  ASSERT_EQ(report["passes"].size(), 3u);
  for (const auto& pass : {report["passes"][1], report["passes"][2]}) {
    const auto alone = run_command(test::dcsgrid_binary() + " compare " + out.string() + ":potential " +
                                   out.string() + ":" + pass["dataset"].get<std::string>() + " --atoms " +
                                   input.string() + " --json 2>/dev/null");
    ASSERT_EQ(alone.status, 0) << alone.output;
    auto expected = nlohmann::json::parse(alone.output);
    expected.erase("reference");  // the command names its two maps
    expected.erase("test");
    EXPECT_EQ(pass["comparison"], expected) << pass["method"];
    EXPECT_EQ(expected["shells"].size(), 6u);
    EXPECT_GT(expected["shells"][0]["points"].get<std::size_t>(), 0u);
  }
  // The same figures when direct's map is read back from the file for every slab (no map held),
  // and when only the differences fit (one map's bytes): the sums do not depend on the path.
  std::size_t points = 1;
  for (const auto& n : report["grid"]["dims"]) points *= n.get<std::size_t>();
  for (const std::string bytes : {std::string("0"), std::to_string(points * sizeof(float))}) {
    const auto other = run_command("(DCSGRID_HELD_MAPS_BYTES=" + bytes + " " + job_command + " 2>/dev/null)");
    ASSERT_EQ(other.status, 0) << other.output;
    const auto passes = nlohmann::json::parse(other.output)["passes"];
    for (std::size_t p : {1u, 2u})
      EXPECT_EQ(passes[p]["comparison"], report["passes"][p]["comparison"]) << bytes << " bytes held";
  }
  const auto bad = run_command("(DCSGRID_HELD_MAPS_BYTES=lots " + job_command + " 2>&1)");
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("DCSGRID_HELD_MAPS_BYTES='lots'"), std::string::npos) << bad.output;
}

TEST_F(Cli, BadInputNamesFileAndLineAndLeavesNothing) {
  write_text(dir / "bad.pqr",
             "ATOM      1  N   ALA A   1       1.000   2.000   3.000 -0.3000 1.8240\n"
             "ATOM      2  CA  ALA A   1       1.500   x.000   3.000  0.1000 1.9080\n");
  const auto r = run_command(dcsgrid_cmd() + " " + (dir / "bad.pqr").string() + " -o " +
                             (dir / "out.h5").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("bad.pqr:2"), std::string::npos) << r.output;
  EXPECT_EQ(test::listing(dir), std::vector<std::string>{"bad.pqr"});
}

TEST_F(Cli, RefusesUnknownFormatsAndImpossibleGrids) {
  write_text(dir / "atoms.xyz", "1\n\nC 0 0 0 1\n");
  auto r = run_command(dcsgrid_cmd() + " " + (dir / "atoms.xyz").string() + " -o " +
                       (dir / "out.vtk").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find(".vtk"), std::string::npos) << r.output;

  r = run_command(dcsgrid_cmd() + " " + (dir / "atoms.xyz").string() + " -o " +
                  (dir / "out.dx").string() + " --origin 0,0,0 --dims 100000,100000,100000");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("GiB"), std::string::npos) << r.output;
  EXPECT_EQ(test::listing(dir), std::vector<std::string>{"atoms.xyz"});

  r = run_command(dcsgrid_cmd() + " " + (dir / "missing.pqr").string() + " -o " +
                  (dir / "out.h5").string());
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("missing.pqr"), std::string::npos) << r.output;
}

TEST_F(Cli, HelpTeachesAndVersionAnswers) {
  auto r = run_command(test::dcsgrid_binary() + " --help");
  EXPECT_EQ(r.status, 0);
  for (const char* needle : {"--spacing", "--method", "--ionic-strength", "Examples", "Grid", "Physics"})
    EXPECT_NE(r.output.find(needle), std::string::npos) << needle;
  r = run_command(test::dcsgrid_binary() + " --version");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find(DCSGRID_VERSION), std::string::npos) << r.output;
}

// The README's first command must work on a fresh machine: run its input (coarser, for speed) and
// check the charges came out as integers per residue would give (a whole net charge).
TEST_F(Cli, ReadmeExampleRuns) {
  std::ifstream readme(fs::path(DCSGRID_SOURCE_DIR) / "README.md");
  std::string line, input;
  while (input.empty() && std::getline(readme, line)) {
    const auto at = line.find("build/dcsgrid data/");
    if (at != std::string::npos) {
      const auto start = at + std::string("build/dcsgrid ").size();
      input = line.substr(start, line.find(' ', start) - start);
    }
  }
  ASSERT_FALSE(input.empty()) << "README.md names no bundled input";
  // The README's PDB input takes its charges from the installed pdb2pqr tables, as users' runs do.
  const fs::path tables = io::resolve_forcefield_dir({});
  if (!fs::exists(tables / "AA.xml"))
    GTEST_SKIP() << "pdb2pqr's force-field tables are not installed in " << tables
                 << " (Debian package python3-pdb2pqr; tools/setup.sh installs it)";
  const auto r = run_command(dcsgrid_cmd() + " " + (fs::path(DCSGRID_SOURCE_DIR) / input).string() +
                             " -o " + (dir / "pot.h5").string() + " --spacing 2 --json -q");
  ASSERT_EQ(r.status, 0) << input << ": " << r.output;
  const io::MapFile map = io::read_hdf5(dir / "pot.h5");
  EXPECT_GT(map.meta.atom_count, 1000u);
  EXPECT_NEAR(map.meta.total_charge, std::round(map.meta.total_charge), 1e-3);
  for (float v : map.data) ASSERT_TRUE(std::isfinite(v));
}

TEST_F(Cli, RefusesAnOutputThatIsItsInput) {
  // The same file under another name (a link): device and inode decide, not the spelling.
  write_text(dir / "one.xyz", "1\npoint charge\nNa 0 0 0 1.0\n");
  fs::create_symlink(dir / "one.xyz", dir / "alias.h5");
  const auto before = fs::file_size(dir / "one.xyz");
  const auto r = run_command(dcsgrid_cmd() + " " + (dir / "one.xyz").string() + " -o " +
                             (dir / "alias.h5").string() + " --spacing 1 --padding 2 -q");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("is the input"), std::string::npos) << r.output;
  EXPECT_EQ(fs::file_size(dir / "one.xyz"), before);

  const auto b = run_command(test::dcsgrid_binary() + " batch --device cpu " + (dir / "one.xyz").string() +
                             " -o " + (dir / "one.xyz").string() + " --overwrite -q");
  EXPECT_EQ(b.status, 1) << b.output;
  EXPECT_NE(b.output.find("is the input"), std::string::npos) << b.output;
  EXPECT_EQ(fs::file_size(dir / "one.xyz"), before);

  // The analysis commands: a map or points file named again as their output.
  const std::string map = (dir / "a.h5").string();
  ASSERT_EQ(run_command(dcsgrid_cmd() + " " + (dir / "one.xyz").string() + " -o " + map +
                        " --spacing 1 --padding 2 -q").status, 0);
  write_text(dir / "pts.txt", "0 0 1\n");
  const auto map_size = fs::file_size(map);
  const std::string bin = test::dcsgrid_binary();
  for (const std::string& command :
       {bin + " compare " + map + " " + map + " --difference " + map,
        bin + " sample " + map + " " + (dir / "pts.txt").string() + " -o " + map,
        bin + " similarity " + map + " " + map + " -o " + map}) {
    const auto r = run_command(command);
    EXPECT_EQ(r.status, 1) << command << ": " << r.output;
    EXPECT_NE(r.output.find("is the input"), std::string::npos) << command << ": " << r.output;
    EXPECT_EQ(fs::file_size(map), map_size) << command;
  }
}

TEST_F(Cli, InterruptRemovesTemporariesAndExits130) {
  // A direct sum long enough to be interrupted (3,368 atoms on 3.6·10^7 points: seconds on 16
  // cores, a minute on two); SIGINT after 1.5 s, SIGTERM in a second run.
  const std::string input = test::data_file("1hpv_pdb2pqr_amber.pqr.gz").string();
  for (const auto& [signal, status] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    const auto r = run_command("timeout --preserve-status -s " + std::string(signal) + " 1.5 " + dcsgrid_cmd() + " " +
                               input + " -o " + (dir / "pot.h5").string() + " -o " +
                               (dir / "pot.dx").string() + " --spacing 0.2 -q");
    EXPECT_EQ(r.status, status) << signal << ": " << r.output;
    EXPECT_TRUE(test::listing(dir).empty()) << signal << ": left " << testing::PrintToString(test::listing(dir));
  }
}

TEST_F(Cli, PresetsSetAnotherProgramsConventionsUnlessGiven) {
  // One +1 e charge; point (2,0,0) at r = 2 Å.
  write_text(dir / "one.xyz", "1\npoint charge\nNa 0 0 0 1.0\n");
  const std::string base = dcsgrid_cmd() + " " + (dir / "one.xyz").string() +
                           " --origin 2,0,0 --dims 1,1,1 --spacing 1 -q -o ";
  // ChimeraX: ε(r) = 4r, kcal/mol/e: V = k_C / (4 r · r).
  ASSERT_EQ(run_command(base + (dir / "chx.h5").string() + " --preset chimerax").status, 0);
  const io::MapFile chx = io::read_hdf5(dir / "chx.h5");
  EXPECT_EQ(chx.meta.units, "kcal/mol/e");
  EXPECT_EQ(chx.meta.dielectric_model, "distance-dependent 4r");
  EXPECT_NEAR(chx.data[0], 332.0637 / (4 * 2 * 2), 1e-5 * 332.0637 / 16);
  // PyMOL: ε = 2, 300 K, kT/e; an explicit --dielectric wins over the preset's.
  ASSERT_EQ(run_command(base + (dir / "pym.h5").string() + " --preset pymol --dielectric 4").status, 0);
  const io::MapFile pym = io::read_hdf5(dir / "pym.h5");
  EXPECT_EQ(pym.meta.units, "kT/e");
  EXPECT_DOUBLE_EQ(pym.meta.temperature, 300.0);
  EXPECT_DOUBLE_EQ(pym.meta.dielectric, 4.0);
  const double kt300 = kGasConstant * 300.0;
  EXPECT_NEAR(pym.data[0], 332.0637 / (4 * 2) / kt300, 1e-5 * 332.0637 / 8 / kt300);
  const auto help = run_command(test::dcsgrid_binary() + " --help");
  EXPECT_NE(help.output.find("chimerax: ε(r) = 4r"), std::string::npos) << help.output;
}

TEST_F(Cli, MethodAutoSaysWhatItChoseAndKeepsTheAccuracy) {
  // Two charges: direct costs nothing, so auto keeps the exact method.
  write_text(dir / "two.xyz", "2\ndipole\nNa 0 0 0 1.0\nCl 3 0 0 -1.0\n");
  auto r = run_command(dcsgrid_cmd() + " " + (dir / "two.xyz").string() + " -o " + (dir / "small.h5").string() +
                       " --method auto --spacing 1 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("\"method_choice\""), std::string::npos) << r.output;
  EXPECT_EQ(io::read_hdf5(dir / "small.h5").meta.method, "direct");

  // 60,000 water atoms on 8·10^5 points: direct would take several times msm's time on the CPU.
  const AtomSet water = water_box_atoms(60000, 3);
  {
    std::ofstream xyz(dir / "water.xyz");
    xyz << water.size() << "\nwater\n";
    for (std::size_t i = 0; i < water.size(); ++i)
      xyz << "O " << water.x[i] << ' ' << water.y[i] << ' ' << water.z[i] << ' ' << water.q[i] << '\n';
  }
  r = run_command(dcsgrid_cmd() + " " + (dir / "water.xyz").string() + " -o " + (dir / "water.h5").string() +
                  " --method auto --spacing 1 --padding 5 --threads 2");  // the estimates depend on threads
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("--method auto chose msm"), std::string::npos) << r.output;
  const io::MapFile map = io::read_hdf5(dir / "water.h5");
  EXPECT_EQ(map.meta.method, "msm");
  // Against a float64 direct sum at every 997th point: the accuracy the message promises.
  const double kt = kGasConstant * 298.15;
  double err2 = 0, ref2 = 0;
  for (std::size_t n = 0; n < map.data.size(); n += 997) {
    const auto ijk = map.grid.ijk(n);
    const auto p = map.grid.position(ijk[0], ijk[1], ijk[2]);
    double v = 0;
    for (std::size_t a = 0; a < water.size(); ++a)
      v += water.q[a] / std::max(0.5, std::hypot(p[0] - water.x[a], p[1] - water.y[a], p[2] - water.z[a]));
    v *= kCoulomb / kt;
    err2 += (map.data[n] - v) * (map.data[n] - v);
    ref2 += v * v;
  }
  EXPECT_LT(std::sqrt(err2 / ref2), 1e-3);
}

// A batch's frame table keeps each frame's unit cell (/frames/cell: a, b, c, α, β, γ), here the
// CRYST1 records of three PDB frames (the last without one: NaN), read back through HDF5's own
// API as any program reads it.
TEST_F(Cli, BatchFrameTableKeepsEachFramesCell) {
  const fs::path tables = io::resolve_forcefield_dir({});
  if (!fs::exists(tables / "AA.xml"))
    GTEST_SKIP() << "pdb2pqr's force-field tables are not installed in " << tables
                 << " (Debian package python3-pdb2pqr; tools/setup.sh installs it)";
  std::ifstream in(test::data_file("pept.pdb"));
  const std::string pept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<std::array<double, 6>> cells{{30, 40, 50, 90, 90, 120}, {31.5, 41, 52, 80, 95, 110}};
  std::string frames;
  for (std::size_t k = 0; k < 3; ++k) {
    const fs::path frame = dir / fmt::format("frame{}.pdb", k);
    write_text(frame, (k < cells.size() ? fmt::format("CRYST1{:9.3f}{:9.3f}{:9.3f}{:7.2f}{:7.2f}{:7.2f} P 1           1\n",
                                                      cells[k][0], cells[k][1], cells[k][2], cells[k][3],
                                                      cells[k][4], cells[k][5])
                                          : "") +
                          pept);
    frames += " " + frame.string();
  }
  const auto r = run_command(test::dcsgrid_binary() + " batch --device cpu" + frames + " -o " +
                             (dir / "b.h5").string() + " --spacing 2 -q");
  ASSERT_EQ(r.status, 0) << r.output;
  io::hdf5::Handle file(H5Fopen((dir / "b.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  ASSERT_GE(file.get(), 0);
  io::hdf5::Handle column(H5Dopen2(file.get(), "frames/cell", H5P_DEFAULT), H5Dclose);
  ASSERT_GE(column.get(), 0);
  std::array<double, 18> read{};
  ASSERT_GE(H5Dread(column.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, read.data()), 0);
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t v = 0; v < 6; ++v) {
      if (k < cells.size())
        EXPECT_NEAR(read[k * 6 + v], cells[k][v], 1e-9) << "frame " << k << " value " << v;
      else
        EXPECT_TRUE(std::isnan(read[k * 6 + v])) << "frame " << k << " value " << v;
    }
}
