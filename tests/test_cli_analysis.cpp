// End-to-end runs of dcsgrid batch, sample and similarity: frames against a float64 direct sum,
// failed frames, fail-fast and resume, values and energies at points, similarity indices computed
// here from the maps, and exit statuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;
using analysis::BatchFile;
using analysis::FrameStatus;
using test::run_command;

namespace {

// A shared explicit grid whose nodes (half-Å steps from an integer origin) are exact in float32,
// so a point list can name them exactly.
const char* kGridOptions = " --origin -3,-3,-3 --dims 17,15,13 --spacing 0.5";
const GridSpec kGrid = grid_from_origin({-3, -3, -3}, {17, 15, 13}, 0.5);

std::string command_line(const std::string& command, const std::string& args) {
  return test::dcsgrid_binary() + " " + command + " --device cpu " + args;
}

test::CommandResult run_dcsgrid(const std::string& command, const std::string& args) {
  return run_command(command_line(command, args));
}

// Runs a command with --json: the JSON (stdout) goes to json_file, messages (stderr) to the result.
test::CommandResult run_dcsgrid_json(const std::string& command, const std::string& args,
                                     const fs::path& json_file) {
  return run_command("{ " + command_line(command, args) + " --json > " + json_file.string() +
                     "; }");
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<float> frame_data(const BatchFile& file, std::size_t i) {
  std::vector<float> out(file.grid().point_count());
  file.read_frame(i, out.data());
  return out;
}

// Hodgkin index of two maps over the points where keep is set (all when keep is empty), in double.
double hodgkin(const std::vector<float>& a, const std::vector<float>& b,
               const std::vector<bool>& keep = {}) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t p = 0; p < a.size(); ++p) {
    if (!keep.empty() && !keep[p]) continue;
    ab += double(a[p]) * b[p];
    aa += double(a[p]) * a[p];
    bb += double(b[p]) * b[p];
  }
  return 2 * ab / (aa + bb);
}

class CliAnalysis : public ::testing::Test {
 protected:
  void SetUp() override { dir = test::temp_dir("cli-analysis"); }
  void TearDown() override { fs::remove_all(dir); }

  // A small random structure near the middle of kGrid, as a PQR file.
  std::string write_structure(const std::string& name, std::uint64_t seed) {
    const fs::path path = dir / name;
    test::write_pqr(path, test::random_atoms(10, Box{{-1, -1, -1}, {2, 1.5, 1}}, seed));
    return path.string();
  }

  // The frames' potential on kGrid (default physics, kT/e) from the batch command.
  fs::path make_batch(const std::vector<std::string>& inputs) {
    std::string args;
    for (const auto& in : inputs) args += in + " ";
    const fs::path out = dir / "frames.h5";
    const auto r = run_dcsgrid("batch", args + "-o " + out.string() + kGridOptions + " -q");
    EXPECT_EQ(r.status, 0) << r.output;
    return out;
  }

  fs::path dir;
};

}  // namespace

TEST_F(CliAnalysis, BatchFramesMatchFloat64DirectSum) {
  // An XYZ file, a PQR file and a list naming a third input by a path relative to the list.
  const AtomSet xyz_atoms = test::random_atoms(8, Box{{0, -1, 0}, {2, 1, 2}}, 5);
  std::string xyz = "8\nframe zero\n";
  for (std::size_t i = 0; i < xyz_atoms.size(); ++i)
    xyz += fmt::format("C {:.4f} {:.4f} {:.4f} {:.4f}\n", xyz_atoms.x[i], xyz_atoms.y[i],
                       xyz_atoms.z[i], xyz_atoms.q[i]);
  test::write_text(dir / "f0.xyz", xyz);
  const std::string f1 = write_structure("f1.pqr", 6);
  write_structure("f2.pqr", 7);
  test::write_text(dir / "list.txt", "# third frame\nf2.pqr\n");
  const std::vector<std::string> sources = {(dir / "f0.xyz").string(), f1,
                                            (dir / "f2.pqr").string()};

  const fs::path out = dir / "frames.h5";
  const auto r = run_dcsgrid_json(
      "batch",
      sources[0] + " " + f1 + " @" + (dir / "list.txt").string() + " -o " + out.string() +
          kGridOptions + " --dielectric 2 --ionic-strength 0.05 --units kcal/mol/e -q",
      dir / "summary.json");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json summary = read_json(dir / "summary.json");
  EXPECT_EQ(summary["frames"], 3);
  EXPECT_EQ(summary["computed"], 3);
  EXPECT_EQ(summary["failed"], 0);
  EXPECT_GT(summary["frames_per_second"].get<double>(), 0);
  EXPECT_GT(summary["stage_busy_share"]["compute"].get<double>(), 0);

  Physics physics;
  physics.dielectric = 2;
  physics.ionic_strength = 0.05;
  physics.unit = Unit::kcal_per_mol_e;
  const BatchFile file(out);
  EXPECT_TRUE(file.grid().same_as(kGrid)) << file.grid().describe();
  EXPECT_EQ(file.meta().units, "kcal/mol/e");
  ASSERT_EQ(file.frames().size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(file.frames()[i].status, FrameStatus::complete) << i;
    EXPECT_EQ(fs::path(file.frames()[i].source).filename(), fs::path(sources[i]).filename());
    const AtomSet atoms = io::read_structure(sources[i]).atoms;
    const auto reference = test::reference_direct(atoms, kGrid, make_pair_kernel(physics));
    EXPECT_LT(test::relative_l2(frame_data(file, i), reference), 1e-5) << "frame " << i;
  }
}

TEST_F(CliAnalysis, BatchModelsAllOnTheUnionGrid) {
  const AtomSet m1 = test::random_atoms(5, Box{{0, 0, 0}, {2, 2, 2}}, 11);
  const AtomSet m2 = test::random_atoms(7, Box{{3, 0, 0}, {5, 2, 2}}, 12);
  test::write_text(dir / "models.pqr", test::pqr_text({m1, m2}));
  const fs::path out = dir / "models.h5";
  const auto r = run_dcsgrid("batch", (dir / "models.pqr").string() + " --models all -o " +
                                      out.string() + " --spacing 1 --padding 2 -q");
  ASSERT_EQ(r.status, 0) << r.output;
  const BatchFile file(out);
  ASSERT_EQ(file.frames().size(), 2u);
  EXPECT_EQ(file.frames()[1].model, 2);
  const GridSpec& g = file.grid();
  const Box box = union_box(bounding_box(test::as_stored(m1)), bounding_box(test::as_stored(m2)));
  for (int a = 0; a < 3; ++a) {
    EXPECT_LE(g.origin[a], box.lo[a] - 2 + 1e-6);
    EXPECT_GE(g.far_corner()[a], box.hi[a] + 2 - 1e-6);
  }
  for (std::size_t i = 0; i < 2; ++i) {
    const auto reference =
        test::reference_direct(test::as_stored(i == 0 ? m1 : m2), g, make_pair_kernel(Physics{}));
    EXPECT_LT(test::relative_l2(frame_data(file, i), reference), 1e-5) << "model " << i + 1;
  }
}

TEST_F(CliAnalysis, BrokenFrameIsRecordedTheBatchGoesOnFailFastStopsResumeRetries) {
  const std::string good0 = write_structure("good0.pqr", 21);
  const std::string bad = (dir / "bad.pqr").string();
  test::write_text(bad, "ATOM      1  C   MOL A   1       1.000   2.000   x.000  0.5 1.7\n");
  const std::string good1 = write_structure("good1.pqr", 22);
  const std::string inputs = good0 + " " + bad + " " + good1;

  const fs::path out = dir / "frames.h5";
  auto r = run_dcsgrid("batch", inputs + " -o " + out.string() + kGridOptions);
  EXPECT_EQ(r.status, 3) << r.output;  // written, some frames failed
  EXPECT_NE(r.output.find("bad.pqr:1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("failed 1"), std::string::npos) << r.output;
  {
    const BatchFile file(out);
    EXPECT_EQ(file.frames()[0].status, FrameStatus::complete);
    EXPECT_EQ(file.frames()[1].status, FrameStatus::failed);
    EXPECT_NE(file.frames()[1].message.find("bad.pqr:1"), std::string::npos);
    EXPECT_EQ(file.frames()[2].status, FrameStatus::complete);  // the batch went on
    const auto reference = test::reference_direct(io::read_structure(good1).atoms, kGrid,
                                                  make_pair_kernel(Physics{}));
    EXPECT_LT(test::relative_l2(frame_data(file, 2), reference), 1e-5);
  }

  const fs::path fast = dir / "fast.h5";
  r = run_dcsgrid("batch", inputs + " -o " + fast.string() + kGridOptions + " --fail-fast -q");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("fail-fast"), std::string::npos) << r.output;
  {
    const BatchFile file(fast);
    EXPECT_EQ(file.frames()[0].status, FrameStatus::complete);
    EXPECT_EQ(file.frames()[1].status, FrameStatus::failed);
    EXPECT_EQ(file.frames()[2].status, FrameStatus::pending);
  }

  // Repaired, the failed frame is computed by a resume; the others are kept.
  test::write_pqr(bad, test::random_atoms(4, Box{{0, 0, 0}, {1, 1, 1}}, 23));
  r = run_dcsgrid_json("batch", inputs + " -o " + out.string() + kGridOptions + " --resume -q",
                       dir / "resume.json");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json summary = read_json(dir / "resume.json");
  EXPECT_EQ(summary["computed"], 1);
  EXPECT_EQ(summary["skipped"], 2);
  const BatchFile file(out);
  EXPECT_EQ(file.frames()[1].status, FrameStatus::complete);
  const auto reference =
      test::reference_direct(io::read_structure(bad).atoms, kGrid, make_pair_kernel(Physics{}));
  EXPECT_LT(test::relative_l2(frame_data(file, 1), reference), 1e-5);
}

TEST_F(CliAnalysis, SampleAtNodesAcrossFramesWithEnergyAndOutsidePoints) {
  const fs::path batch = make_batch({write_structure("a.pqr", 31), write_structure("b.pqr", 32)});
  const BatchFile file(batch);
  const std::vector<std::vector<float>> frames = {frame_data(file, 0), frame_data(file, 1)};

  // Grid nodes (corners included) with charges, and one point beyond the grid's +x face.
  const std::vector<std::array<std::int64_t, 3>> nodes = {
      {0, 0, 0}, {16, 14, 12}, {3, 7, 2}, {9, 1, 11}, {12, 13, 6}};
  const std::vector<double> charges = {0.5, -1.0, 0.25, 1.5, -0.75};
  std::string list = "# x y z q\n";
  for (std::size_t p = 0; p < nodes.size(); ++p) {
    const auto pos = kGrid.position(nodes[p][0], nodes[p][1], nodes[p][2]);
    list += fmt::format("{} {} {} {}\n", pos[0], pos[1], pos[2], charges[p]);
  }
  list += "5.5 0 0 2.0\n";
  const std::size_t outside_point = nodes.size();
  test::write_text(dir / "points.txt", list);

  auto r = run_dcsgrid_json("sample", batch.string() + " " + (dir / "points.txt").string(),
                            dir / "sample.json");
  EXPECT_NE(r.output.find("outside the grid"), std::string::npos) << r.output;  // the warning
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json s = read_json(dir / "sample.json");
  ASSERT_EQ(s["maps"], 2);
  EXPECT_EQ(s["outside"], nlohmann::json::array({outside_point}));
  ASSERT_TRUE(s["has_charges"].get<bool>());
  const double rt = kGasConstant * 298.15;  // kT/e → kcal/mol/e
  for (std::size_t m = 0; m < 2; ++m) {
    double energy = 0;
    for (std::size_t p = 0; p < nodes.size(); ++p) {
      const float stored = frames[m][kGrid.index(nodes[p][0], nodes[p][1], nodes[p][2])];
      EXPECT_NEAR(s["values"][m][p].get<double>(), stored, 1e-6 * std::abs(stored))
          << "frame " << m << " point " << p;
      energy += charges[p] * stored;
    }
    EXPECT_TRUE(s["values"][m][outside_point].is_null()) << "extrapolated";
    EXPECT_NEAR(s["energy_kcal_mol"][m].get<double>(), energy * rt, 1e-5 * std::abs(energy * rt));
  }

  // Printed: the outside point is named; as CSV: a row per point, a column per frame.
  r = run_dcsgrid("sample", batch.string() + " " + (dir / "points.txt").string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1 of 6 points lie outside the grid (no value, not in the energy): 5"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("frame 1"), std::string::npos) << r.output;
  r = run_dcsgrid("sample", batch.string() + " " + (dir / "points.txt").string() + " -o " +
                            (dir / "phi.csv").string() + " -q");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto csv = read_lines(dir / "phi.csv");
  ASSERT_EQ(csv.size(), nodes.size() + 2);
  EXPECT_EQ(csv[0].rfind("x,y,z,q,", 0), 0u) << csv[0];
  EXPECT_NE(csv.back().find("nan"), std::string::npos) << csv.back();
}

TEST_F(CliAnalysis, SampleEnergyOfStructurePoints) {
  // The points of a PQR file carry its charges: E = Σ q·φ at its atoms, taken from a map in
  // kcal/mol/e written by the main job.
  const std::string source = write_structure("source.pqr", 41);
  const auto job = run_command(test::dcsgrid_binary() + " --device cpu " + source + " -o " +
                               (dir / "pot.h5").string() + kGridOptions +
                               " --units kcal/mol/e -q");
  ASSERT_EQ(job.status, 0) << job.output;
  const io::MapFile map = io::read_hdf5(dir / "pot.h5");
  AtomSet ligand;
  const std::vector<std::array<std::int64_t, 3>> nodes = {{2, 3, 4}, {10, 10, 10}, {15, 1, 0}};
  const std::vector<double> charges = {0.4, -0.8, 0.3};
  double energy = 0;
  for (std::size_t p = 0; p < nodes.size(); ++p) {
    const auto pos = kGrid.position(nodes[p][0], nodes[p][1], nodes[p][2]);
    ligand.push_back(pos[0], pos[1], pos[2], charges[p]);
    energy += charges[p] * map.data[kGrid.index(nodes[p][0], nodes[p][1], nodes[p][2])];
  }
  test::write_pqr(dir / "ligand.pqr", ligand);
  const auto r = run_dcsgrid_json(
      "sample", (dir / "pot.h5").string() + " " + (dir / "ligand.pqr").string(), dir / "s.json");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json s = read_json(dir / "s.json");
  EXPECT_TRUE(s["outside"].empty());
  EXPECT_NEAR(s["energy_kcal_mol"][0].get<double>(), energy, 1e-5 * std::abs(energy));
}

TEST_F(CliAnalysis, SimilarityOfMapsItsNegativeAndAnother) {
  const GridSpec grid = grid_from_origin({0, 0, 0}, {6, 5, 4}, 1.0);
  std::vector<float> a(grid.point_count()), negative(a.size()), b(a.size());
  for (std::size_t n = 0; n < a.size(); ++n) {
    a[n] = float(std::sin(0.3 * double(n)) + 0.2);
    negative[n] = -a[n];
    b[n] = float(3 * std::cos(0.11 * double(n) + 1));
  }
  const io::MapMetadata meta;
  io::write_hdf5(dir / "a.h5", grid, a.data(), meta);
  io::write_hdf5(dir / "a_again.h5", grid, a.data(), meta);
  io::write_hdf5(dir / "negative.h5", grid, negative.data(), meta);
  io::write_hdf5(dir / "b.h5", grid, b.data(), meta);
  const std::string maps = (dir / "a.h5").string() + " " + (dir / "a_again.h5").string() + " " +
                           (dir / "negative.h5").string() + " " + (dir / "b.h5").string();

  auto r = run_dcsgrid_json("similarity",
                            maps + " -o " + (dir / "sim.h5").string() + " -o " +
                                (dir / "sim.csv").string(),
                            dir / "sim.json");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json s = read_json(dir / "sim.json");
  const auto& h = s["hodgkin"];
  EXPECT_NEAR(h[0][0].get<double>(), 1.0, 1e-6);
  EXPECT_NEAR(h[0][1].get<double>(), 1.0, 1e-6);
  EXPECT_NEAR(h[0][2].get<double>(), -1.0, 1e-6);
  const double expected = hodgkin(a, b);
  EXPECT_NEAR(h[0][3].get<double>(), expected, 1e-6);
  EXPECT_NEAR(h[3][0].get<double>(), expected, 1e-6);
  EXPECT_EQ(s["points_used"], grid.point_count());
  // The two copies of a cluster first, so they sit together in the order.
  const auto order = s["order"].get<std::vector<std::size_t>>();
  ASSERT_EQ(order.size(), 4u);
  const auto at = [&](std::size_t map) {
    return std::find(order.begin(), order.end(), map) - order.begin();
  };
  EXPECT_EQ(std::abs(at(0) - at(1)), 1);

  // Both files written under their names (no temporaries left); the CSV holds the same matrix.
  EXPECT_GT(fs::file_size(dir / "sim.h5"), 0u);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
  const auto csv = read_lines(dir / "sim.csv");
  ASSERT_EQ(csv.size(), 5u);
  std::istringstream row(csv[1].substr(csv[1].find(',') + 1));
  std::vector<double> first_row;
  for (std::string cell; std::getline(row, cell, ',');) first_row.push_back(std::stod(cell));
  ASSERT_EQ(first_row.size(), 4u);
  EXPECT_NEAR(first_row[2], -1.0, 1e-6);
  EXPECT_NEAR(first_row[3], expected, 1e-6);

  r = run_dcsgrid("similarity", maps);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("clustered order"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(fmt::format("{:.4f}", expected)), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("-1.0000"), std::string::npos) << r.output;
}

TEST_F(CliAnalysis, SimilarityOfBatchFramesOutsideTheirAtoms) {
  const std::vector<std::string> sources = {write_structure("a.pqr", 51),
                                            write_structure("b.pqr", 52),
                                            write_structure("c.pqr", 53)};
  const fs::path batch = make_batch(sources);
  const double mask_distance = 1.5;
  const auto r = run_dcsgrid_json(
      "similarity", batch.string() + " --mask-distance 1.5 --mask-batch-inputs", dir / "sim.json");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json s = read_json(dir / "sim.json");
  ASSERT_EQ(s["labels"].size(), 3u);
  EXPECT_EQ(s["labels"][1], batch.string() + "#1");

  // The mask computed here: points farther than the distance from every atom of every frame.
  std::vector<AtomSet> atoms;
  for (const auto& f : sources) atoms.push_back(io::read_structure(f).atoms);
  std::vector<bool> keep(kGrid.point_count(), true);
  std::size_t kept = 0;
  for (std::size_t n = 0; n < keep.size(); ++n) {
    const auto ijk = kGrid.ijk(n);
    const auto p = kGrid.position(ijk[0], ijk[1], ijk[2]);
    for (const AtomSet& set : atoms)
      for (std::size_t i = 0; i < set.size(); ++i)
        if (std::hypot(p[0] - set.x[i], p[1] - set.y[i], p[2] - set.z[i]) <= mask_distance)
          keep[n] = false;
    kept += keep[n];
  }
  EXPECT_EQ(s["points_used"], kept);
  EXPECT_LT(kept, kGrid.point_count());

  const BatchFile file(batch);
  for (std::size_t a = 0; a < 3; ++a)
    for (std::size_t b = 0; b < 3; ++b)
      EXPECT_NEAR(s["hodgkin"][a][b].get<double>(),
                  hodgkin(frame_data(file, a), frame_data(file, b), keep), 1e-5)
          << a << "," << b;
}

TEST_F(CliAnalysis, UsageErrorsExitTwoAndFixableErrorsOne) {
  const std::string input = write_structure("in.pqr", 61);
  const std::string out = (dir / "out.h5").string();
  const std::string map = make_batch({input}).string();
  test::write_text(dir / "points.txt", "0 0 0\n");
  const std::string points = (dir / "points.txt").string();
  const std::vector<std::pair<std::string, std::string>> usage_errors = {
      {"batch", ""},
      {"batch", input},                                   // no -o
      {"batch", input + " -o " + out + " --method fast"},
      {"batch", input + " -o " + out + " --center 0,0,0"},  // without --size
      {"batch", input + " -o " + out + " --resume --overwrite"},
      {"batch", input + " -o " + out + " --spacing half"},
      {"sample", map},                                    // no points
      {"sample", (dir / "missing.h5").string() + " " + points},
      {"similarity", ""},
      {"similarity", map + " -o sim.txt"},
      {"similarity", map + " -o a.h5 -o b.h5"},
      {"similarity", map + " --mask-distance -1"},
  };
  for (const auto& [command, args] : usage_errors) {
    const auto r = run_dcsgrid(command, args);
    EXPECT_EQ(r.status, 2) << command << " " << args << "\n" << r.output;
  }
  for (const char* command : {"batch", "sample", "similarity"}) {
    const auto r = run_command(test::dcsgrid_binary() + " " + command + " --help");
    EXPECT_EQ(r.status, 0) << command;
    EXPECT_NE(r.output.find("Examples"), std::string::npos) << r.output;
  }

  // Errors the user can fix: a message and exit 1, nothing written.
  auto r = run_dcsgrid("batch", input + " -o " + out + " --ddd --ionic-strength 0.1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_FALSE(fs::exists(out));
  r = run_dcsgrid("batch", input + " -o " + map);  // exists, neither --resume nor --overwrite
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--resume"), std::string::npos) << r.output;
  test::write_text(dir / "bad.txt", "1 2 3\n4 five 6\n");
  r = run_dcsgrid("sample", map + " " + (dir / "bad.txt").string());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("bad.txt:2"), std::string::npos) << r.output;
}

TEST_F(CliAnalysis, InfoShowsFramesAndTheirStatistics) {
  const std::string good0 = write_structure("good0.pqr", 71);
  const std::string bad = (dir / "bad.pqr").string();
  test::write_text(bad, "ATOM      1  C   MOL A   1       1.000   2.000   x.000  0.5 1.7\n");
  const std::string good1 = write_structure("good1.pqr", 72);
  const fs::path out = dir / "frames.h5";
  auto r = run_dcsgrid("batch", good0 + " " + bad + " " + good1 + " -o " + out.string() + kGridOptions);
  ASSERT_EQ(r.status, 3) << r.output;

  // Statistics of each complete frame, computed here from its data.
  const BatchFile file(out);
  const auto expect_stats = [](const nlohmann::json& s, const std::vector<float>& v) {
    double sum = 0, sum2 = 0, lo = v[0], hi = v[0];
    for (float x : v) {
      sum += x;
      lo = std::min(lo, double(x));
      hi = std::max(hi, double(x));
    }
    const double mean = sum / double(v.size());
    for (float x : v) sum2 += (x - mean) * (x - mean);
    EXPECT_EQ(s["count"].get<std::size_t>(), v.size());
    EXPECT_NEAR(s["min"].get<double>(), lo, 1e-9 * std::abs(lo));
    EXPECT_NEAR(s["max"].get<double>(), hi, 1e-9 * std::abs(hi));
    EXPECT_NEAR(s["mean"].get<double>(), mean, 1e-9 * std::abs(hi));
    EXPECT_NEAR(s["std"].get<double>(), std::sqrt(sum2 / double(v.size())), 1e-9 * std::abs(hi));
  };
  r = run_command("{ " + test::dcsgrid_binary() + " info " + out.string() + " --json > " +
                  (dir / "info.json").string() + "; }");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json info = read_json(dir / "info.json");
  ASSERT_EQ(info["frames"].size(), 3u);
  EXPECT_EQ(info["frames"][0]["status"], "complete");
  EXPECT_EQ(info["frames"][1]["status"], "failed");
  EXPECT_NE(info["frames"][1]["message"].get<std::string>().find("bad.pqr:1"), std::string::npos);
  EXPECT_EQ(info["stats_source"], "stored");  // the batch wrote them
  ASSERT_EQ(info["stats"].size(), 2u);
  EXPECT_EQ(info["stats"][1]["frame"], 2);
  expect_stats(info["stats"][0], frame_data(file, 0));
  expect_stats(info["stats"][1], frame_data(file, 2));

  // The table for a terminal lists every frame, the failed one with its message.
  r = run_command(test::dcsgrid_binary() + " info " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("3: 2 complete, 1 failed, 0 pending"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bad.pqr:1"), std::string::npos) << r.output;

  // A single map: computed, then stored with --store-stats and read back from the file.
  const fs::path map = dir / "one.h5";
  io::write_hdf5(map, kGrid, frame_data(file, 2).data(), file.meta());
  r = run_command(test::dcsgrid_binary() + " info " + map.string() + " --store-stats");
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_command("{ " + test::dcsgrid_binary() + " info " + map.string() + " --json > " +
                  (dir / "one.json").string() + "; }");
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json one = read_json(dir / "one.json");
  EXPECT_EQ(one["stats_source"], "stored");
  expect_stats(one["stats"][0], frame_data(file, 2));
}
