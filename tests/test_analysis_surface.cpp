// The molecular surface mesh (analysis/surface.hpp): closed, consistently oriented and manifold;
// areas of one and two spheres against their closed forms, and of a protein's SAS against
// FreeSASA; normals; the per-residue table against sums taken here.
#include <gtest/gtest.h>

#include <cmath>
#include <bit>
#include <numbers>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "dcsgrid/analysis/surface.hpp"
#include "dcsgrid/analysis/surface_table.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/atom_cells.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "analysis/surface_field.hpp"
#include "helpers.hpp"

using namespace dcsgrid;
using namespace dcsgrid::analysis;
using dcsgrid::test::error_message;
namespace fs = std::filesystem;

namespace {

io::AtomLabel label(const char* chain, const char* residue, const char* number, const char* name) {
  io::AtomLabel l;
  l.chain = chain;
  l.residue = residue;
  l.residue_number = number;
  l.name = name;
  return l;
}

constexpr double kPi = std::numbers::pi;

AtomSet spheres(const std::vector<std::array<double, 4>>& xyzr) {
  AtomSet atoms;
  for (const auto& s : xyzr) atoms.push_back(s[0], s[1], s[2], 0.0, s[3]);
  return atoms;
}

// The area of the union of two spheres (radii a, b, centres d apart, overlapping).
double union_area(double a, double b, double d) {
  const double xa = (d * d + a * a - b * b) / (2 * d), xb = d - xa;  // the circle's plane
  return 4 * kPi * a * a - 2 * kPi * a * (a - xa) + 4 * kPi * b * b - 2 * kPi * b * (b - xb);
}

// The SES of two atoms of radius r, centres d apart, probe p (the probe rolls round a circle of
// radius rho > p): two spherical contact caps and the re-entrant part of a torus (Pappus).
double two_sphere_ses_area(double r, double d, double p) {
  const double big_r = r + p, rho = std::sqrt(big_r * big_r - d * d / 4);
  const double cos_theta = d / (2 * big_r), phi0 = std::asin(cos_theta);
  return 2 * 2 * kPi * r * r * (1 + cos_theta) + 4 * kPi * p * (rho * phi0 - p * std::sin(phi0));
}

void expect_closed_sphere(const TriangleMesh& mesh) {
  const MeshTopology t = mesh_topology(mesh);
  EXPECT_EQ(t.boundary_edges, 0u);
  EXPECT_EQ(t.nonmanifold_edges, 0u);
  EXPECT_EQ(t.misoriented_edges, 0u);
  EXPECT_EQ(t.euler_characteristic, 2);
}

// Outward: the normals agree with the faces' winding and point away from the centroid.
void expect_outward(const TriangleMesh& mesh, const std::array<double, 3>& centre) {
  std::size_t agree = 0;
  for (const auto& f : mesh.faces) {
    const auto &a = mesh.vertices[f[0]], &b = mesh.vertices[f[1]], &c = mesh.vertices[f[2]];
    const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    double out = 0;
    for (int d = 0; d < 3; ++d) out += n[d] * (a[d] - centre[d]);
    agree += out > 0;
  }
  EXPECT_GT(double(agree), 0.999 * double(mesh.faces.size()));
  for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
    double dot = 0, len = 0;
    for (int d = 0; d < 3; ++d) {
      dot += mesh.normals[v][d] * (mesh.vertices[v][d] - centre[d]);
      len += mesh.normals[v][d] * mesh.normals[v][d];
    }
    ASSERT_NEAR(len, 1.0, 1e-5);
    ASSERT_GT(dot, 0.0) << "vertex " << v;
  }
}

}  // namespace

// One atom of radius 1.7 Å: its SAS is the sphere of radius 1.7 + probe, its SES the atom's own
// sphere. Each mesh is closed, points outward, has its vertices on that sphere and the sphere's area
// within `tolerance` (at 0.5 Å, then at 0.25 Å): flat faces on a curved surface lose area as
// (edge / radius)², so the smaller SES sphere loses more.
void expect_single_sphere(SurfaceKind kind, double radius, std::array<double, 2> tolerance) {
  const AtomSet atoms = spheres({{0.3, -0.2, 0.1, 1.7}});
  for (int k = 0; k < 2; ++k) {
    const double h = k == 0 ? 0.5 : 0.25;
    const TriangleMesh mesh = molecular_surface(atoms, {kind, 1.4, h});
    expect_closed_sphere(mesh);
    expect_outward(mesh, {0.3, -0.2, 0.1});
    EXPECT_NEAR(mesh_area(mesh) / (4 * kPi * radius * radius), 1.0, tolerance[k]) << "spacing " << h;
    for (const auto& p : mesh.vertices) ASSERT_NEAR(std::hypot(p[0] - 0.3, p[1] + 0.2, p[2] - 0.1), radius, 1e-4);
  }
}

TEST(Surface, SphereSasIsClosedAndHasTheClosedFormArea) {
  expect_single_sphere(SurfaceKind::sas, 3.1, {4e-3, 1e-3});  // 0.22% at 0.5 Å, 0.06% at 0.25 Å
}

TEST(Surface, SphereSesIsTheAtomSphere) {
  expect_single_sphere(SurfaceKind::ses, 1.7, {1.2e-2, 3e-3});  // 0.8% at 0.5 Å, 0.19% at 0.25 Å
}

// On a union of spheres (the SAS), where x lies: how far from the union's surface (min over the
// spheres of |x − c| − R) and on which of the spheres (within `tolerance`; bit s for sphere s).
struct SphereContact {
  double distance = 1e300;
  unsigned on = 0;
};
SphereContact contact(const std::vector<std::array<double, 4>>& spheres, const std::array<float, 3>& x,
                      double tolerance) {
  SphereContact c;
  for (std::size_t s = 0; s < spheres.size(); ++s) {
    const auto& [cx, cy, cz, radius] = spheres[s];
    const double d = std::hypot(x[0] - cx, x[1] - cy, x[2] - cz) - radius;
    c.distance = std::min(c.distance, d);
    if (std::abs(d) < tolerance) c.on |= 1u << std::min<std::size_t>(s, 31);
  }
  return c;
}

TEST(Surface, TwoSpheres) {
  const AtomSet atoms = spheres({{0, 0, 0, 1.5}, {3.0, 0.1, -0.05, 1.5}});
  const std::vector<std::array<double, 4>> sas_spheres = {{0, 0, 0, 2.9}, {3.0, 0.1, -0.05, 2.9}};
  const double d = std::hypot(3.0, 0.1, 0.05);
  for (const double h : {0.5, 0.25}) {
    const TriangleMesh sas = molecular_surface(atoms, {SurfaceKind::sas, 1.4, h});
    const TriangleMesh ses = molecular_surface(atoms, {SurfaceKind::ses, 1.4, h});
    expect_closed_sphere(sas);
    expect_closed_sphere(ses);
    // Measured: SAS −0.27% and −0.064% (−0.44% and −0.19% before the crease was put into the
    // mesh), SES −0.27% and +0.04% at 0.5 and 0.25 Å: second order in the spacing.
    const double tolerance = h == 0.5 ? 4e-3 : 1e-3;
    EXPECT_NEAR(mesh_area(sas) / union_area(2.9, 2.9, d), 1.0, tolerance) << "spacing " << h;
    EXPECT_NEAR(mesh_area(ses) / two_sphere_ses_area(1.5, d, 1.4), 1.0, tolerance) << "spacing " << h;
    // The crease is in the SAS mesh: every vertex is on the union's surface, outward normals on
    // each sphere it is on, and no edge runs from one sphere to the other without a vertex on
    // their circle.
    std::vector<unsigned> on(sas.vertices.size());
    for (std::size_t v = 0; v < sas.vertices.size(); ++v) {
      const SphereContact c = contact(sas_spheres, sas.vertices[v], 1e-3);
      ASSERT_NEAR(c.distance, 0.0, 1e-4) << "vertex " << v;
      on[v] = c.on;
      for (std::size_t s = 0; s < 2; ++s) {
        if (!(c.on & (1u << s))) continue;
        double outward = 0;
        for (int k = 0; k < 3; ++k) outward += sas.normals[v][k] * (sas.vertices[v][k] - sas_spheres[s][k]);
        EXPECT_GT(outward, 0.0) << "vertex " << v << " sphere " << s;
      }
    }
    std::size_t across = 0;  // edges from a vertex on sphere 0 alone to one on sphere 1 alone
    for (const auto& f : sas.faces)
      for (int e = 0; e < 3; ++e) across += (on[f[e]] | on[f[(e + 1) % 3]]) == 3 && on[f[e]] != 3 && on[f[(e + 1) % 3]] != 3;
    EXPECT_EQ(across, 0u) << "spacing " << h;
    // At least a vertex per spacing round the circle (radius 2.48 Å).
    EXPECT_GT(double(std::count(on.begin(), on.end(), 3u)), 2 * kPi * 2.48 / h) << "spacing " << h;
    // With no probe the SES is the union of the atoms' own spheres, creases and all.
    const AtomSet bonded = spheres({{0, 0, 0, 1.5}, {2.2, 0.1, -0.05, 1.7}});
    const TriangleMesh vdw = molecular_surface(bonded, {SurfaceKind::ses, 0.0, h});
    expect_closed_sphere(vdw);
    // Measured −0.95% and −0.23% (−1.51% and −0.63% with faces across the crease).
    EXPECT_NEAR(mesh_area(vdw) / union_area(1.5, 1.7, std::hypot(2.2, 0.1, 0.05)), 1.0, h == 0.5 ? 1.2e-2 : 3e-3)
        << "spacing " << h;
  }
}

TEST(SurfaceTable, ResidueRowIsTheAreaWeightedMeanOfItsVertices) {
  const AtomSet atoms = spheres({{0, 0, 0, 1.5}, {2.5, 0, 0, 1.7}, {5.0, 0.3, 0, 1.5}});
  TriangleMesh mesh = molecular_surface(atoms, {SurfaceKind::ses, 1.4, 0.4});
  for (const auto& v : mesh.vertices) mesh.value.push_back(std::sin(v[0]) + 0.3f * v[1]);
  const std::vector<io::AtomLabel> labels = {label("A", "LYS", "1", "NZ"), label("A", "LYS", "1", "CE"), label("B", "ASP", "7", "OD1")};
  const SurfaceTable table = surface_table(mesh, atoms.size(), labels);
  ASSERT_EQ(table.residues.size(), 2u);
  const std::vector<double> area = surface_areas(mesh).vertex;
  for (std::size_t r = 0; r < 2; ++r) {
    double weighted = 0, total = 0, lo = 1e300, hi = -1e300;
    for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
      if ((mesh.atom[v] == 2) == (r == 1)) {
        weighted += mesh.value[v] * area[v], total += area[v];
        lo = std::min(lo, double(mesh.value[v])), hi = std::max(hi, double(mesh.value[v]));
      }
    EXPECT_NEAR(table.residues[r].mean, weighted / total, 1e-9);
    EXPECT_NEAR(table.residues[r].area, total, 1e-9);
    EXPECT_EQ(table.residues[r].min, lo);
    EXPECT_EQ(table.residues[r].max, hi);
  }
  EXPECT_EQ(table.residues[1].label.residue, "ASP");
  EXPECT_NEAR(table.atoms[0].area + table.atoms[1].area, table.residues[0].area, 1e-9);
  EXPECT_NEAR(table.residues[0].area + table.residues[1].area, mesh_area(mesh), 1e-6 * mesh_area(mesh));
  EXPECT_EQ(table.area, mesh_area(mesh));
}

TEST(Surface, RefusesAtomsWithoutRadiiAndNoAtoms) {
  AtomSet atoms;
  EXPECT_NE(error_message([&] { molecular_surface(atoms, {}); }).find("no atoms"), std::string::npos);
  atoms.push_back(0, 0, 0, 1.0);
  EXPECT_NE(error_message([&] { molecular_surface(atoms, {}); }).find("no radii"), std::string::npos);
}

AtomSet tii_atoms() { return io::read_structure(test::data_file("1tii_pdb2pqr_amber.pqr.gz")).atoms; }

// The SAS of 1TII against FreeSASA (Lee–Richards, 80 slices, the same radii through the occupancy
// column). Measured: −0.40% at 0.5 Å, −0.11% at 0.25 Å (before the creases were put into the mesh,
// −2.4% and −1.2%: faces cut across them, an error first order in the spacing).
TEST(Surface, SasAreaAgreesWithFreeSasa) {
  if (std::system("freesasa --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "freesasa is not installed";
  const AtomSet atoms = tii_atoms();
  const fs::path dir = test::temp_dir("surface_freesasa");
  {
    std::ofstream out(dir / "atoms.pdb");
    char line[96];
    for (std::size_t a = 0; a < atoms.size(); ++a) {
      std::snprintf(line, sizeof line, "ATOM  %5zu  C   ALA A%4zu    %8.3f%8.3f%8.3f%6.3f  0.00           C\n",
                    (a + 1) % 100000, (a / 10 + 1) % 10000, atoms.x[a], atoms.y[a], atoms.z[a], atoms.r[a]);
      out << line;
    }
  }
  const auto r = test::run_command("freesasa --lee-richards --resolution=80 --radius-from-occupancy --hydrogen --hetatm "
                                   "--probe-radius=1.4 --format=json " + (dir / "atoms.pdb").string());
  ASSERT_EQ(r.status, 0) << r.output;
  const double reference = nlohmann::json::parse(r.output.substr(r.output.find('{')))["results"][0]["structure"][0]["area"]["total"];
  EXPECT_NEAR(mesh_area(molecular_surface(atoms, {SurfaceKind::sas, 1.4, 0.5})) / reference, 1.0, 0.006);
  EXPECT_NEAR(mesh_area(molecular_surface(atoms, {SurfaceKind::sas, 1.4, 0.25})) / reference, 1.0, 0.0025);
}

// 1TII's SAS with its creases: a closed, consistently oriented 2-manifold; every vertex on the
// union of the atoms' spheres, many on two or three of them; faces wound as their vertices' normals
// point; the same mesh from one thread and from two.
TEST(Surface, SasCreasesKeepTheMeshClosedOrientedAndOnTheSurface) {
  const AtomSet atoms = tii_atoms();
  set_openmp_threads(2);
  const TriangleMesh mesh = molecular_surface(atoms, {SurfaceKind::sas, 1.4, 0.5});
  const MeshTopology t = mesh_topology(mesh);
  EXPECT_TRUE(t.closed_manifold()) << t.boundary_edges << " " << t.nonmanifold_edges << " " << t.misoriented_edges;
  EXPECT_EQ(t.euler_characteristic % 2, 0);
  const engine::AtomCells cells(atoms, 1.5);
  std::vector<std::size_t> near;
  std::array<std::size_t, 4> on_spheres{};
  std::size_t off = 0;
  for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
    const auto& x = mesh.vertices[v];
    cells.near({x[0], x[1], x[2]}, 1.4 + 0.05, atoms.size(), near);
    std::vector<std::array<double, 4>> local;
    for (const std::size_t a : near) local.push_back({atoms.x[a], atoms.y[a], atoms.z[a], atoms.r[a] + 1.4});
    const SphereContact c = contact(local, x, 1e-3);
    // Measured: 3 of the grid edges' vertices 1–10 mÅ off (where the field jumps along their
    // edge), 117 more than 0.01 mÅ off, the others (and every crease vertex) within 0.01 mÅ.
    ASSERT_NEAR(c.distance, 0.0, 0.02) << "vertex " << v;
    off += std::abs(c.distance) > 1e-5;
    ++on_spheres[std::size_t(std::min(std::popcount(c.on), 3))];
  }
  EXPECT_LT(off, mesh.vertices.size() / 1000);
  EXPECT_GT(on_spheres[2], mesh.vertices.size() / 10);  // measured: 22%
  EXPECT_GT(on_spheres[3], 1000u);                      // measured: 2,537
  std::size_t agree = 0;
  for (const auto& f : mesh.faces) {
    const auto &a = mesh.vertices[f[0]], &b = mesh.vertices[f[1]], &c = mesh.vertices[f[2]];
    const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    double dot = 0;
    for (const std::uint32_t v : f)
      for (int d = 0; d < 3; ++d) dot += n[d] * mesh.normals[v][d];
    agree += dot > 0;
  }
  EXPECT_GT(double(agree), 0.999 * double(mesh.faces.size()));
  set_openmp_threads(1);
  const TriangleMesh serial = molecular_surface(atoms, {SurfaceKind::sas, 1.4, 0.5});
  EXPECT_TRUE(serial.vertices == mesh.vertices && serial.faces == mesh.faces && serial.atom == mesh.atom &&
              serial.normals == mesh.normals);
}

// The distance fields on the GPU (src/analysis/surface_field.cu) are the CPU's bit for bit: values,
// the SES's boundary samples in the CPU's order and each node's nearest sample, for 1TII's SES at
// two spacings, its SAS and its van der Waals surface (probe 0), and a lone atom; so the meshes
// made from them are the same.
TEST(SurfaceGpu, FieldsAndMeshesAreTheCpus) {
  DCSGRID_REQUIRE_GPU();
  const AtomSet tii = tii_atoms(), one = spheres({{0.3, -0.2, 0.1, 1.7}});
  struct Case {
    const AtomSet* atoms;
    SurfaceOptions options;
  };
  for (const Case& c : {Case{&tii, {SurfaceKind::ses, 1.4, 0.5}}, Case{&tii, {SurfaceKind::ses, 1.4, 0.35}},
                        Case{&tii, {SurfaceKind::sas, 1.4, 0.5}}, Case{&tii, {SurfaceKind::ses, 0.0, 0.5}},
                        Case{&one, {SurfaceKind::ses, 1.4, 0.25}}}) {
    SCOPED_TRACE(std::to_string(c.atoms->size()) + " atoms, " + surface_kind_name(c.options.kind) + ", probe " +
                 std::to_string(c.options.probe_radius) + ", spacing " + std::to_string(c.options.spacing));
    const detail::SurfaceField cpu = detail::surface_field(*c.atoms, c.options, "cpu");
    const detail::SurfaceField gpu = detail::surface_field(*c.atoms, c.options, "gpu");
    ASSERT_EQ(gpu.value.size(), cpu.value.size());
    std::size_t values = 0, nearest = 0;
    for (std::size_t n = 0; n < cpu.value.size(); ++n)
      values += std::bit_cast<std::uint32_t>(cpu.value[n]) != std::bit_cast<std::uint32_t>(gpu.value[n]);
    EXPECT_EQ(values, 0u) << "of " << cpu.value.size() << " nodes";
    ASSERT_EQ(gpu.samples.size(), cpu.samples.size());
    EXPECT_TRUE(gpu.samples == cpu.samples);
    ASSERT_EQ(gpu.nearest_sample.size(), cpu.nearest_sample.size());
    for (std::size_t n = 0; n < cpu.nearest_sample.size(); ++n) nearest += cpu.nearest_sample[n] != gpu.nearest_sample[n];
    EXPECT_EQ(nearest, 0u);
    if (c.options.kind == SurfaceKind::ses && c.options.probe_radius > 0) {
      EXPECT_GT(cpu.samples.size(), 0u);
      EXPECT_GT(std::count(cpu.nearest_sample.begin(), cpu.nearest_sample.end(), -1), 0);
    }
  }
  const SurfaceOptions ses{SurfaceKind::ses, 1.4, 0.5};
  const TriangleMesh cpu = molecular_surface(tii, ses, "cpu"), gpu = molecular_surface(tii, ses, "gpu");
  EXPECT_GT(cpu.faces.size(), 100000u);
  EXPECT_TRUE(gpu.vertices == cpu.vertices && gpu.faces == cpu.faces && gpu.normals == cpu.normals && gpu.atom == cpu.atom);
}
