// End-to-end runs of `dcsgrid compare` on maps with known differences and of `--method both`,
// whose two maps are held to float64 direct and cutoff sums computed here and whose stored
// comparison is recomputed here from the maps.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "dcsgrid/core/units.hpp"
#include "dcsgrid/io/hdf5/util.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;
using test::run_command;

namespace {

const GridSpec kGrid = grid_from_origin({-2, -1, 0}, {9, 7, 5}, 0.5);

io::MapMetadata metadata(const std::string& units) {
  io::MapMetadata meta;
  meta.units = units;
  meta.method = "test";
  return meta;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The string attribute `name` of an HDF5 file's root group.
std::string root_attribute(const fs::path& file, const std::string& name) {
  std::lock_guard lock(io::hdf5::library_mutex());
  io::hdf5::Handle h5(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  io::hdf5::Handle root(H5Gopen2(h5.get(), "/", H5P_DEFAULT), H5Gclose);
  std::string value;
  io::hdf5::read_attribute(root.get(), name, value, file);
  return value;
}

class CliCompare : public ::testing::Test {
 protected:
  void SetUp() override { dir = test::temp_dir("cli-compare"); }
  void TearDown() override { fs::remove_all(dir); }

  // A smooth reference map and a test map that differs from it by `delta` at one point and by
  // `noise` (a fixed pattern) everywhere.
  void write_pair(std::size_t spike_at, float delta, float noise) {
    reference.resize(kGrid.point_count());
    test.resize(kGrid.point_count());
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> sign(-1, 1);
    for (std::size_t n = 0; n < reference.size(); ++n) {
      const auto ijk = kGrid.ijk(n);
      reference[n] = 1.0f + 0.25f * float(ijk[0]) - 0.5f * float(ijk[2]);
      test[n] = reference[n] + noise * sign(rng);
    }
    test[spike_at] += delta;
    io::write_hdf5(dir / "ref.h5", kGrid, reference.data(), metadata("kT/e"));
    io::write_hdf5(dir / "test.h5", kGrid, test.data(), metadata("kT/e"));
  }

  // Wrapped in braces so that a redirection of stdout in args leaves stderr to the result.
  test::CommandResult compare(const std::string& args) {
    return run_command("{ " + test::dcsgrid_binary() + " compare " + args + "; }");
  }

  fs::path dir;
  std::vector<float> reference, test;
};

}  // namespace

TEST_F(CliCompare, ReportsTheErrorsOfKnownDifferences) {
  const std::size_t spike = 123;
  write_pair(spike, 3.0f, 0.01f);
  const fs::path json = dir / "report.json";
  const auto r = compare((dir / "ref.h5").string() + " " + (dir / "test.h5").string() +
                         " --json --difference " + (dir / "diff.h5").string() + " > " +
                         json.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json report = read_json(json);

  double e2 = 0, r2 = 0, max_abs = 0;
  for (std::size_t n = 0; n < reference.size(); ++n) {
    const double e = double(test[n]) - double(reference[n]);
    e2 += e * e;
    r2 += double(reference[n]) * reference[n];
    max_abs = std::max(max_abs, std::abs(e));
  }
  const double points = double(reference.size());
  EXPECT_EQ(report["overall"]["points"].get<std::size_t>(), reference.size());
  EXPECT_NEAR(report["overall"]["rms_error"].get<double>(), std::sqrt(e2 / points), 1e-9);
  EXPECT_NEAR(report["overall"]["relative_l2"].get<double>(), std::sqrt(e2 / r2), 1e-9);
  EXPECT_NEAR(report["overall"]["max_abs_error"].get<double>(), max_abs, 1e-9);
  EXPECT_EQ(report["max_error"]["index"].get<std::size_t>(), spike);
  const auto ijk = kGrid.ijk(spike);
  EXPECT_EQ(report["max_error"]["ijk"][0].get<std::int64_t>(), ijk[0]);
  EXPECT_EQ(report["max_error"]["ijk"][2].get<std::int64_t>(), ijk[2]);
  EXPECT_EQ(report["units"].get<std::string>(), "kT/e");

  // The difference map holds test − reference at every point.
  const io::MapFile diff = io::read_hdf5(dir / "diff.h5");
  ASSERT_EQ(diff.data.size(), reference.size());
  for (std::size_t n = 0; n < reference.size(); ++n)
    EXPECT_NEAR(diff.data[n], test[n] - reference[n], 1e-6) << n;

  // The table names the same figures for a terminal.
  const auto table = compare((dir / "ref.h5").string() + " " + (dir / "test.h5").string());
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_NE(table.output.find("rel. L2"), std::string::npos) << table.output;
}

TEST_F(CliCompare, DxAgainstHdf5AndShellsFromAtoms) {
  write_pair(5, 0.5f, 0.0f);
  io::write_dx(dir / "ref.dx", kGrid, reference.data(), metadata("kT/e"));
  // One atom at the spike's position: the spike lies in the first shell, [0, 1) Å.
  const auto p = kGrid.position(kGrid.ijk(5)[0], kGrid.ijk(5)[1], kGrid.ijk(5)[2]);
  test::write_text(dir / "atom.xyz", "1\none\nC " + std::to_string(p[0]) + " " +
                                         std::to_string(p[1]) + " " + std::to_string(p[2]) +
                                         " 1.0\n");
  const fs::path json = dir / "report.json";
  const auto r = compare((dir / "ref.dx").string() + " " + (dir / "test.h5").string() +
                         " --atoms " + (dir / "atom.xyz").string() + " --shells 0,1 --json > " +
                         json.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json report = read_json(json);
  ASSERT_EQ(report["shells"].size(), 2u);
  EXPECT_NEAR(report["shells"][0]["max_abs_error"].get<double>(), 0.5, 1e-6);
  EXPECT_EQ(report["shells"][1]["max_abs_error"].get<double>(), 0.0);
  EXPECT_EQ(report["shells"][0]["points"].get<std::size_t>() +
                report["shells"][1]["points"].get<std::size_t>(),
            reference.size());
}

// Every map format through compare, info, sample and similarity: the same map in each format
// compares equal to the HDF5 one, and each command reads it.
TEST_F(CliCompare, EveryCommandReadsEveryMapFormat) {
  write_pair(7, 0.5f, 0.0f);
  const std::string ref = (dir / "ref.h5").string();
  test::write_text(dir / "site.txt", "-1.0 0.5 1.0 1.0\n");
  for (const char* name : {"m.dx", "m.dx.gz", "m.ccp4", "m.mrc", "m.map", "m.cube"}) {
    SCOPED_TRACE(name);
    const std::string path = (dir / name).string();
    io::write_map(path, kGrid, reference.data(), metadata("kT/e"));
    const fs::path json = dir / "report.json";
    auto r = compare(ref + " " + path + " --json > " + json.string());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(read_json(json)["overall"]["max_abs_error"].get<double>(), 0.0);
    r = run_command(test::dcsgrid_binary() + " info " + path);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("9x7x5 points"), std::string::npos) << r.output;
    // The site lies on grid point (2, 3, 2): the value there.
    r = run_command(test::dcsgrid_binary() + " sample " + path + " " + (dir / "site.txt").string() +
                    " --json -q > " + json.string());
    ASSERT_EQ(r.status, 0) << r.output;
    const double expected = reference[kGrid.index(2, 3, 2)];
    EXPECT_NEAR(read_json(json)["values"][0][0].get<double>(), expected, 1e-6) << read_json(json).dump();
    r = run_command(test::dcsgrid_binary() + " similarity " + ref + " " + path + " --json -q > " +
                    json.string());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NEAR(read_json(json)["hodgkin"][0][1].get<double>(), 1.0, 1e-9);  // the same map
  }
  // Statistics are stored in HDF5 files only; a DX file is refused, not rewritten.
  const auto before = fs::last_write_time(dir / "m.dx");
  const auto r = run_command(test::dcsgrid_binary() + " info " + (dir / "m.dx").string() + " --store-stats");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("HDF5 files only"), std::string::npos) << r.output;
  EXPECT_EQ(fs::last_write_time(dir / "m.dx"), before);
}

TEST_F(CliCompare, RefusesMismatchedGridsUnitsAndBadArguments) {
  write_pair(0, 1.0f, 0.0f);
  const std::vector<float> other(grid_from_origin({-2, -1, 0}, {9, 7, 6}, 0.5).point_count(), 1.0f);
  io::write_hdf5(dir / "taller.h5", grid_from_origin({-2, -1, 0}, {9, 7, 6}, 0.5), other.data(),
                 metadata("kT/e"));
  io::write_hdf5(dir / "kcal.h5", kGrid, test.data(), metadata("kcal/mol/e"));
  const std::string ref = (dir / "ref.h5").string();

  auto r = compare(ref + " " + (dir / "taller.h5").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("taller.h5"), std::string::npos) << r.output;
  r = compare(ref + " " + (dir / "kcal.h5").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("kcal/mol/e"), std::string::npos) << r.output;
  r = compare(ref + " " + ref + ":no_such_dataset");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("/no_such_dataset"), std::string::npos) << r.output;
  r = compare(ref + " " + (dir / "missing.h5").string());
  EXPECT_EQ(r.status, 1) << r.output;
  // A difference map with an unknown extension is refused before any work, leaving nothing.
  r = compare(ref + " " + (dir / "test.h5").string() + " --difference " + (dir / "d.txt").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_FALSE(fs::exists(dir / "d.txt"));
  EXPECT_EQ(compare(ref).status, 2);
  EXPECT_EQ(compare(ref + " " + ref + " --bins 0").status, 2);
  const auto help = compare("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.output.find("Examples"), std::string::npos) << help.output;
}

TEST_F(CliCompare, MethodBothStoresDirectCutoffAndTheirComparison) {
  const AtomSet atoms = test::as_stored(test::random_atoms(40, Box{{0, 0, 0}, {12, 10, 8}}, 11));
  test::write_pqr(dir / "in.pqr", atoms);
  const GridSpec grid = grid_from_origin({-3, -3, -3}, {36, 32, 28}, 0.6);
  const fs::path out = dir / "both.h5";
  const fs::path json = dir / "summary.json";
  const auto r = run_command("{ " + test::dcsgrid_binary() + " " + (dir / "in.pqr").string() +
                             " --device cpu -o " + out.string() +
                             " --origin -3,-3,-3 --dims 36,32,28 --spacing 0.6 --method both "
                             "--cutoff 6 --cutoff-form switched --switch-start 4 --json > " +
                             json.string() + "; }");
  ASSERT_EQ(r.status, 0) << r.output;

  Physics physics;
  physics.unit = Unit::kT_per_e;
  const PairKernel kernel = make_pair_kernel(physics);
  engine::CutoffOptions cutoff;
  cutoff.radius = 6;
  cutoff.form = engine::CutoffForm::switched;
  cutoff.switch_start = 4;
  const io::MapFile direct = io::read_hdf5(out);
  const io::MapFile cut = io::read_hdf5(out, "potential_cutoff");
  EXPECT_LT(test::relative_l2(direct.data, test::reference_direct(atoms, grid, kernel)), 1e-6);
  EXPECT_LT(test::relative_l2(cut.data, test::reference_cutoff(atoms, grid, kernel, cutoff)), 1e-5);
  EXPECT_EQ(direct.meta.method, "direct");
  EXPECT_EQ(cut.meta.method, "cutoff");
  EXPECT_EQ(cut.meta.parameters.at("cutoff_form"), "switched");

  // The stored and printed comparison: cutoff − direct, recomputed here from the two maps.
  double e2 = 0, r2 = 0;
  for (std::size_t n = 0; n < direct.data.size(); ++n) {
    const double e = double(cut.data[n]) - double(direct.data[n]);
    e2 += e * e;
    r2 += double(direct.data[n]) * direct.data[n];
  }
  const auto stored = nlohmann::json::parse(root_attribute(out, "comparison_cutoff_vs_direct"));
  EXPECT_NEAR(stored["overall"]["relative_l2"].get<double>(), std::sqrt(e2 / r2),
              1e-9 + 1e-9 * std::sqrt(e2 / r2));
  EXPECT_GT(stored["overall"]["relative_l2"].get<double>(), 1e-4);  // a 6 Å cutoff is not exact
  EXPECT_FALSE(stored["shells"].empty());
  const nlohmann::json summary = read_json(json);
  EXPECT_EQ(summary["passes"][1]["comparison"]["overall"], stored["overall"]);

  // Only HDF5 can hold both maps: other formats are refused before any work.
  const auto dx = run_command(test::dcsgrid_binary() + " " + (dir / "in.pqr").string() +
                              " --device cpu -o " + (dir / "both.dx").string() + " --method both");
  EXPECT_EQ(dx.status, 1) << dx.output;
  EXPECT_NE(dx.output.find("--method direct,cutoff stores several maps"), std::string::npos) << dx.output;
  EXPECT_FALSE(fs::exists(dir / "both.dx"));
}
