// dcsgrid surface end to end: the vertex potentials equal `dcsgrid sample` at the vertices, the
// PLY is what its header says, and bad inputs are refused with a message that names the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "helpers.hpp"

using namespace dcsgrid;
using namespace dcsgrid::test;
namespace fs = std::filesystem;

namespace {

const char* kPqr =
    "ATOM      1  N   LYS A   1       0.000   0.000   0.000  1.0000 1.8240\n"
    "ATOM      2  CA  LYS A   1       1.450   0.300   0.100  0.2000 1.9080\n"
    "ATOM      3  O   ASP A   2       2.900  -0.400   0.600 -0.8000 1.6612\n"
    "ATOM      4  OD1 ASP A   2       3.600   1.000  -0.800 -0.8000 1.6612\n";

struct Ply {
  std::vector<std::array<float, 7>> vertices;  // x y z nx ny nz potential
  std::size_t faces = 0;
};

Ply read_ply(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line, header;
  Ply ply;
  std::size_t n = 0;
  while (std::getline(in, line) && line != "end_header") {
    header += line + "\n";
    if (line.starts_with("element vertex ")) n = std::stoul(line.substr(15));
    if (line.starts_with("element face ")) ply.faces = std::stoul(line.substr(13));
  }
  EXPECT_NE(header.find("format binary_little_endian 1.0"), std::string::npos);
  EXPECT_NE(header.find("property float potential\nproperty uchar red"), std::string::npos);
  ply.vertices.resize(n);
  for (auto& v : ply.vertices) {
    in.read(reinterpret_cast<char*>(v.data()), 28);
    in.ignore(3);
  }
  EXPECT_TRUE(in.good());
  return ply;
}

}  // namespace

TEST(CliSurface, VertexPotentialsEqualSampleAtTheVertices) {
  const fs::path dir = temp_dir("cli_surface");
  std::ofstream(dir / "in.pqr") << kPqr;
  const std::string bin = dcsgrid_binary();
  auto r = run_command(bin + " " + (dir / "in.pqr").string() + " -o " + (dir / "pot.dx").string() + " --padding 6 -q");
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_command(bin + " surface " + (dir / "in.pqr").string() + " " + (dir / "pot.dx").string() + " -o " +
                  (dir / "s.ply").string() + " -o " + (dir / "t.json").string() + " -q");
  ASSERT_EQ(r.status, 0) << r.output;
  const Ply ply = read_ply(dir / "s.ply");
  ASSERT_GT(ply.vertices.size(), 100u);
  {
    std::ofstream points(dir / "points.txt");
    points.precision(9);
    for (const auto& v : ply.vertices) points << v[0] << " " << v[1] << " " << v[2] << "\n";
  }
  r = run_command(bin + " sample " + (dir / "pot.dx").string() + " " + (dir / "points.txt").string() + " -o " +
                  (dir / "sampled.csv").string() + " -q");
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream csv(dir / "sampled.csv");
  std::string line;
  std::getline(csv, line);  // header
  std::size_t i = 0;
  while (std::getline(csv, line)) {
    const double sampled = std::stod(line.substr(line.rfind(',') + 1));
    ASSERT_LT(i, ply.vertices.size());
    EXPECT_NEAR(ply.vertices[i][6], sampled, 1e-5 * std::max(1.0, std::abs(sampled))) << "vertex " << i;
    ++i;
  }
  EXPECT_EQ(i, ply.vertices.size());
  std::ifstream json(dir / "t.json");
  std::stringstream text;
  text << json.rdbuf();
  EXPECT_NE(text.str().find("\"residue_name\": \"ASP\""), std::string::npos);
}

// Without a map, the CPU computes direct's potential only where the vertices read it, at the grid
// points that the interpolation reads; with a viewer script it computes the whole grid (the script
// shows it). A ring of atoms leaves points inside it out, and every vertex must see the whole
// grid's values.
TEST(CliSurface, PotentialUnderTheMeshEqualsTheWholeGrids) {
  const fs::path dir = temp_dir("cli_surface_bricks");
  {
    std::ofstream pqr(dir / "ring.pqr");
    char line[96];
    for (int a = 0; a < 24; ++a) {
      const double angle = 2 * 3.14159265358979 * a / 24;
      std::snprintf(line, sizeof line, "ATOM  %5d  CA  ALA A%4d    %8.3f%8.3f%8.3f %7.4f %6.4f\n", a + 1, a + 1,
                    12 * std::cos(angle), 12 * std::sin(angle), 0.7 * (a % 3), a % 2 ? 0.5 : -0.3, 1.9);
      pqr << line;
    }
  }
  const std::string bin = dcsgrid_binary(), in = (dir / "ring.pqr").string();
  for (const std::string method : {"direct"}) {
    const std::string common = " -q --device cpu --method " + method;
    auto r = run_command(bin + " surface " + in + " -o " + (dir / "part.ply").string() + common);
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_command(bin + " surface " + in + " -o " + (dir / "whole.ply").string() + " --pymol " +
                    (dir / "whole.pml").string() + common);
    ASSERT_EQ(r.status, 0) << r.output;
    const Ply part = read_ply(dir / "part.ply"), whole = read_ply(dir / "whole.ply");
    ASSERT_EQ(part.vertices.size(), whole.vertices.size());
    ASSERT_GT(part.vertices.size(), 1000u);
    for (std::size_t v = 0; v < whole.vertices.size(); ++v) {
      const float value = whole.vertices[v][6];
      ASSERT_TRUE(std::isfinite(part.vertices[v][6])) << method << ", vertex " << v;
      ASSERT_NEAR(part.vertices[v][6], value, 1e-5 * std::max(1.0f, std::abs(value))) << method << ", vertex " << v;
    }
  }
}

TEST(CliSurface, RefusesBadInputs) {
  const fs::path dir = temp_dir("cli_surface_bad");
  std::ofstream(dir / "in.pqr") << kPqr;
  const std::string bin = dcsgrid_binary(), in = (dir / "in.pqr").string();
  // A map that stops short of the surface: the message says by how much.
  auto r = run_command(bin + " " + in + " -o " + (dir / "small.dx").string() + " --padding 0.5 -q");
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_command(bin + " surface " + in + " " + (dir / "small.dx").string() + " -o " + (dir / "s.ply").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("does not cover the surface"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Å beyond it"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "s.ply"));
  // Atoms without radii or elements (plain XYZ lines): the line of the first.
  std::ofstream(dir / "in.xyz") << "# no elements\n0 0 0 0.5\n1.2 0 0 -0.5\n";
  r = run_command(bin + " surface " + (dir / "in.xyz").string() + " -o " + (dir / "s.ply").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("in.xyz:2: atom 1 names no element"), std::string::npos) << r.output;
  // No atoms.
  std::ofstream(dir / "empty.pqr") << "REMARK nothing\n";
  r = run_command(bin + " surface " + (dir / "empty.pqr").string() + " -o " + (dir / "s.ply").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("empty.pqr"), std::string::npos) << r.output;
  // An output format it does not write.
  r = run_command(bin + " surface " + in + " -o " + (dir / "s.obj").string());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("unknown extension"), std::string::npos) << r.output;
}

// A PDB input takes the force field's radii (here the bundled AMBER table), an XYZ input its
// elements': both make a surface, and say where the radii came from.
TEST(CliSurface, RadiiFromTheForceFieldOrTheElements) {
  const fs::path dir = temp_dir("cli_surface_radii");
  const std::string bin = dcsgrid_binary();
  auto r = run_command(bin + " surface " + data_file("1tii.pdb.gz").string() + " -o " + (dir / "s.ply").string() +
                       " --forcefield-dir " + data_file("pdb2pqr").string() + " --grid-spacing 1.5 --mesh-spacing 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("radii from AMBER.DAT"), std::string::npos) << r.output;
  const Ply ply = read_ply(dir / "s.ply");
  EXPECT_GT(ply.vertices.size(), 10000u);
  std::ofstream(dir / "w.xyz") << "3\nwater\nO 0 0 0 -0.834\nH 0.957 0 0 0.417\nH -0.24 0.927 0 0.417\n";
  r = run_command(bin + " surface " + (dir / "w.xyz").string() + " -o " + (dir / "w.ply").string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("radii from van der Waals radii of the elements"), std::string::npos) << r.output;
}
