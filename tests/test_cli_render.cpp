// PyMOL as the independent judge of the picture (Debian pymol, headless `pymol -cq`): dcsgrid
// computes 1HPV's map (.dx); our renderer draws a surface of the atoms' spheres coloured by that
// map; the .pml that write_pymol_script writes, given our picture's view, makes PyMOL load the
// structure and the map, build its own surface, colour it with the same ramp and render a PNG of
// the same size. Both pictures, decoded by Pillow, must show the molecule in the same place and the
// same signs in the same places: the silhouettes overlap, and the blue-minus-red signal of blocks
// of pixels correlates between the two. (Matching single residues to pixels would hang on the two
// surfaces' different shapes; the block signal compares every patch at once.)
#include <gtest/gtest.h>

#include <cmath>

#include "dcsgrid/analysis/interpolation.hpp"
#include "dcsgrid/analysis/render.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "dcsgrid/io/views/viewer_scripts.hpp"
#include "helpers.hpp"
#include "test_png_decode.hpp"
#include "test_sphere_mesh.hpp"

using namespace dcsgrid;
namespace fs = std::filesystem;

namespace {

// A surface of 1.8 Å spheres on every atom (hidden parts drop out in the z-buffer), valued by the
// map at each vertex.
TriangleMesh atom_spheres(const AtomSet& atoms, const io::MapFile& map) {
  TriangleMesh mesh;
  for (std::size_t i = 0; i < atoms.size(); ++i)
    test::append_sphere(mesh, {atoms.x[i], atoms.y[i], atoms.z[i]}, 1.8, 6, 12);
  AtomSet points;
  for (const auto& v : mesh.vertices) points.push_back(v[0], v[1], v[2], 0);
  mesh.value = analysis::interpolate(analysis::trilinear_matrix(map.grid, points), map.data.data(), "cpu");
  return mesh;
}

bool background(const std::array<int, 4>& p) { return p[0] > 250 && p[1] > 250 && p[2] > 250; }

struct Comparison {
  double overlap = 0;         // silhouettes: |A ∩ B| / |A ∪ B|
  double correlation = 0;     // of the blocks' mean (blue − red)
  double red[2]{}, blue[2]{};  // share of each picture's molecule pixels that is clearly red, blue
};

// Over the pictures' left `columns` (the colour bars lie right of them), blocks of 16 × 16 pixels.
Comparison compare(const test::DecodedPng& a, const test::DecodedPng& b, int columns) {
  constexpr int kBlock = 16;
  Comparison c;
  int both = 0, either = 0, molecule[2] = {0, 0};
  std::vector<std::pair<double, double>> blocks;
  for (int by = 0; by + kBlock <= a.height; by += kBlock)
    for (int bx = 0; bx + kBlock <= columns; bx += kBlock) {
      double signal[2] = {0, 0};
      int covered[2] = {0, 0};
      for (int y = by; y < by + kBlock; ++y)
        for (int x = bx; x < bx + kBlock; ++x) {
          const std::array<int, 4> p[2] = {a.pixel(x, y), b.pixel(x, y)};
          for (int k = 0; k < 2; ++k) {
            if (background(p[k])) continue;
            ++covered[k], ++molecule[k];
            signal[k] += p[k][2] - p[k][0];
            c.red[k] += p[k][0] > p[k][2] + 60;
            c.blue[k] += p[k][2] > p[k][0] + 60;
          }
          both += !background(p[0]) && !background(p[1]);
          either += !background(p[0]) || !background(p[1]);
        }
      if (covered[0] > kBlock * kBlock / 2 && covered[1] > kBlock * kBlock / 2)
        blocks.emplace_back(signal[0] / covered[0], signal[1] / covered[1]);
    }
  for (int k = 0; k < 2; ++k) c.red[k] /= std::max(1, molecule[k]), c.blue[k] /= std::max(1, molecule[k]);
  c.overlap = double(both) / std::max(1, either);
  double ma = 0, mb = 0;
  for (auto [x, y] : blocks) ma += x, mb += y;
  ma /= double(blocks.size()), mb /= double(blocks.size());
  double sab = 0, saa = 0, sbb = 0;
  for (auto [x, y] : blocks) sab += (x - ma) * (y - mb), saa += (x - ma) * (x - ma), sbb += (y - mb) * (y - mb);
  c.correlation = sab / std::sqrt(saa * sbb);
  return c;
}

}  // namespace

TEST(Render, PymolScriptAndOurPictureAgreeOn1hpv) {
  if (test::run_command("PATH=/usr/bin:$PATH pymol -c -d quit").status != 0)
    GTEST_SKIP() << "PyMOL is not installed (Debian package pymol; tools/setup.sh installs it)";
  const std::string python = test::python_with_pillow();
  if (python.empty()) GTEST_SKIP() << "no python3 with Pillow (Debian python3-pil): the pictures are not decoded";
  const fs::path dir = test::temp_dir("render_pymol");
  const fs::path pdb = test::data_file("1hpv.pdb"), map_path = dir / "map.dx";
  // The inhibitor (residue 478) is not in the AMBER table: charge 0, as --unknown zero says.
  const auto made = test::run_command(test::dcsgrid_binary() + " " + pdb.string() + " -o " + map_path.string() +
                                      " --unknown zero --spacing 1.0 --device cpu -q");
  ASSERT_EQ(made.status, 0) << made.output;
  io::ReadOptions read;
  read.unknown_zero = true;
  const io::Structure structure = io::read_structure(pdb, read);
  const TriangleMesh mesh = atom_spheres(structure.atoms, io::read_map(map_path));

  analysis::RenderOptions options;
  options.width = 640, options.height = 480;
  const analysis::Camera camera = analysis::render_png(dir / "ours.png", mesh, options);
  io::ViewerScript script;
  script.structure = pdb, script.map = map_path, script.range = options.range;
  script.picture = dir / "pymol.png", script.width = options.width, script.height = options.height;
  script.view = analysis::script_view(camera);
  io::write_pymol_script(dir / "show.pml", script);
  const auto ran = test::run_command("cd " + dir.string() + " && PATH=/usr/bin:$PATH pymol -cq show.pml");
  ASSERT_EQ(ran.status, 0) << ran.output;
  ASSERT_TRUE(fs::exists(dir / "pymol.png")) << ran.output;

  const auto ours = test::decode_png(python, dir / "ours.png");
  const auto theirs = test::decode_png(python, dir / "pymol.png");
  ASSERT_TRUE(ours && theirs);
  ASSERT_EQ(theirs->width, 640);
  ASSERT_EQ(theirs->height, 480);
  const Comparison c = compare(*ours, *theirs, 640 - 150);
  std::printf("silhouette overlap %.2f, block correlation %.2f, red %.2f/%.2f, blue %.2f/%.2f\n", c.overlap,
              c.correlation, c.red[0], c.red[1], c.blue[0], c.blue[1]);
  EXPECT_GT(c.overlap, 0.7);
  EXPECT_GT(c.correlation, 0.6);
  for (int k = 0; k < 2; ++k) {
    EXPECT_GT(c.red[k], 0.03) << (k ? "PyMOL's" : "our") << " picture";
    EXPECT_GT(c.blue[k], 0.03) << (k ? "PyMOL's" : "our") << " picture";
  }
}
