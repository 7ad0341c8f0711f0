// tools/plot_map.py renders a slice with atoms, a histogram and a similarity heat map as PNG
// files. Runs when a python3 with h5py, numpy and matplotlib is found, else skips saying so.
#include <gtest/gtest.h>

#include <fstream>

#include "dcsgrid/analysis/similarity.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"

using namespace dcsgrid;
using namespace dcsgrid::analysis;
namespace fs = std::filesystem;

namespace {

bool is_png(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  return in && std::string(magic + 1, 3) == "PNG" && fs::file_size(path) > 2000;
}

}  // namespace

TEST(Plots, SliceHistogramAndSimilarity) {
  const std::string python = test::python_with("h5py, numpy, matplotlib");
  if (python.empty()) GTEST_SKIP() << "no python3 with h5py, numpy and matplotlib: plot test skipped";
  const std::string script = (test::source_dir() / "tools" / "plot_map.py").string();
  const auto dir = test::temp_dir("plots");

  // A batch of two small structures (maps with stored histograms) and their atoms.
  std::vector<std::string> files;
  for (int f = 0; f < 2; ++f) {
    const auto path = dir / ("f" + std::to_string(f) + ".pqr");
    test::write_pqr(path, test::random_atoms(10, Box{{0, 0, 0}, {4, 4, 4}}, 60 + f));
    files.push_back(path.string());
  }
  const std::filesystem::path batch = dir / "batch.h5";
  test::write_batch_file(files, batch, 0.5, 3);
  SimilarityOptions s;
  s.maps = {batch};
  s.device = "cpu";
  s.output_h5 = dir / "sim.h5";
  compute_similarity(s);

  auto run = [&](const std::string& args, const fs::path& png) {
    const auto r = test::run_command(python + " " + script + " " + args + " -o " + png.string());
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(is_png(png)) << png;
  };
  run("slice " + batch.string() + " --frame 1 --atoms " + files[1], dir / "slice.png");
  run("slice " + batch.string() + " --axis x --at 2.0", dir / "slice_x.png");
  run("histogram " + batch.string() + " --frame 0", dir / "hist.png");
  run("similarity " + s.output_h5.string(), dir / "sim.png");

  // A single map without stored histograms, and a bad request.
  const GridSpec g = grid_from_origin({0, 0, 0}, {8, 7, 6}, 1.0);
  std::vector<float> data(g.point_count());
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = float(i % 17) - 8;
  io::write_hdf5(dir / "single.h5", g, data.data(), {});
  run("histogram " + (dir / "single.h5").string(), dir / "hist1.png");
  const auto bad = test::run_command(python + " " + script + " slice " + (dir / "single.h5").string() +
                                     " --index 99 -o " + (dir / "bad.png").string());
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("outside the grid"), std::string::npos) << bad.output;
}
