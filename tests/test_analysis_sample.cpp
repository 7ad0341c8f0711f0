// Potential at points: trilinear interpolation exact on linear fields and at nodes, points
// outside the grid, point lists, interaction energies against a float64 direct sum, and a batch
// file sampled with one matrix for all frames.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <fstream>
#include <random>

#include "dcsgrid/analysis/interpolation.hpp"
#include "dcsgrid/analysis/sample.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/units.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/maps/reader.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"

using namespace dcsgrid;
using namespace dcsgrid::analysis;
namespace fs = std::filesystem;

namespace {

// f(x, y, z) = c0 + c1 x + c2 y + c3 z on every node of g.
std::vector<float> linear_map(const GridSpec& g, const std::array<double, 4>& c) {
  std::vector<float> v(g.point_count());
  for (std::size_t p = 0; p < v.size(); ++p) {
    const auto ijk = g.ijk(p);
    const auto r = g.position(ijk[0], ijk[1], ijk[2]);
    v[p] = float(c[0] + c[1] * r[0] + c[2] * r[1] + c[3] * r[2]);
  }
  return v;
}

double linear_at(const std::array<double, 4>& c, double x, double y, double z) {
  return c[0] + c[1] * x + c[2] * y + c[3] * z;
}

AtomSet points_inside(const GridSpec& g, std::size_t n, std::uint64_t seed) {
  const auto far = g.far_corner();
  return test::random_atoms(n, Box{{g.origin[0], g.origin[1], g.origin[2]}, {far[0], far[1], far[2]}},
                            seed);
}

// interpolate_at (no matrix) gives interpolate's values to float rounding (the same weights; the
// compilers may fuse the sums' products differently) and finds the same points outside.
void expect_same_without_matrix(const GridSpec& g, const std::vector<float>& map, const AtomSet& pts,
                                const InterpolationMatrix& m) {
  std::vector<std::array<float, 3>> xyz(pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) xyz[i] = {pts.x[i], pts.y[i], pts.z[i]};
  std::vector<std::size_t> outside;
  const std::vector<float> direct = interpolate_at(g, map.data(), xyz, outside);
  const std::vector<float> v = interpolate(m, map.data(), "cpu");
  EXPECT_EQ(outside, m.outside);
  ASSERT_EQ(direct.size(), v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) EXPECT_TRUE(std::isnan(direct[i])) << i;
    else EXPECT_NEAR(direct[i], v[i], 1e-6 * std::max(1.0f, std::abs(v[i]))) << i;
  }
}

}  // namespace

TEST(Interpolation, ExactOnLinearFields) {
  const GridSpec g = grid_from_origin({-3.25, 1.5, -0.75}, {11, 9, 7}, 0.5);
  const std::array<double, 4> c = {0.3, 1.25, -2.0, 0.75};
  const auto map = linear_map(g, c);
  const AtomSet pts = points_inside(g, 500, 3);
  const InterpolationMatrix m = trilinear_matrix(g, pts);
  EXPECT_TRUE(m.outside.empty());
  EXPECT_EQ(m.matrix.rows, 500);
  EXPECT_EQ(m.matrix.cols, std::int64_t(g.point_count()));
  EXPECT_EQ(m.matrix.nnz(), 8 * 500);
  const auto v = interpolate(m, map.data(), "cpu");
  for (std::size_t i = 0; i < pts.size(); ++i) {
    // Weights sum to one and reproduce a linear field (float32 weights and values).
    double wsum = 0;
    for (auto e = m.matrix.row_offsets[i]; e < m.matrix.row_offsets[i + 1]; ++e) wsum += m.matrix.values[e];
    EXPECT_NEAR(wsum, 1.0, 1e-6);
    EXPECT_NEAR(v[i], linear_at(c, pts.x[i], pts.y[i], pts.z[i]), 2e-5) << i;
  }
  expect_same_without_matrix(g, map, pts, m);
}

// A skewed grid (a triclinic cell's lattice, --grid cell): trilinear in the grid's own
// coordinates is exact on a linear field too, the points placed at random fractional coordinates
// of the lattice (made here from the cell); a point beyond the lattice is outside.
TEST(Interpolation, ExactOnLinearFieldsOfASkewedGrid) {
  const UnitCell cell = make_cell({12, 10, 9}, {70, 100, 115});
  GridSpec g = grid_on_cell(cell, 1.0);
  g.origin = {1.5, -2.0, 0.25};
  ASSERT_FALSE(g.orthogonal());
  const std::array<double, 4> c = {-0.4, 0.75, 1.5, -1.25};
  const auto map = linear_map(g, c);
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  AtomSet pts;
  for (int n = 0; n < 300; ++n) {
    // Fractions of the lattice's span, (dims − 1)/dims of the cell along each vector.
    Vec3 f{u(rng) * double(g.nx() - 1) / double(g.nx()), u(rng) * double(g.ny() - 1) / double(g.ny()),
           u(rng) * double(g.nz() - 1) / double(g.nz())};
    const Vec3 p = cell.cartesian(f);
    pts.push_back(float(p[0] + g.origin[0]), float(p[1] + g.origin[1]), float(p[2] + g.origin[2]), 0.0f);
  }
  const Vec3 beyond = cell.cartesian({1.2, 0.5, 0.5});
  pts.push_back(float(beyond[0] + g.origin[0]), float(beyond[1] + g.origin[1]), float(beyond[2] + g.origin[2]), 0.0f);
  const InterpolationMatrix m = trilinear_matrix(g, pts);
  ASSERT_EQ(m.outside, std::vector<std::size_t>{300});
  const auto v = interpolate(m, map.data(), "cpu");
  for (std::size_t i = 0; i < 300; ++i) EXPECT_NEAR(v[i], linear_at(c, pts.x[i], pts.y[i], pts.z[i]), 5e-5) << i;
  expect_same_without_matrix(g, map, pts, m);
}

TEST(Interpolation, NodesFacesAndOutsidePoints) {
  const GridSpec g = grid_from_origin({0, 0, 0}, {5, 4, 3}, 1.0);
  std::vector<float> map(g.point_count());
  std::mt19937 rng(1);
  for (auto& x : map) x = std::uniform_real_distribution<float>(-10, 10)(rng);
  AtomSet pts;
  for (std::size_t p = 0; p < g.point_count(); ++p) {  // every node, far corner included
    const auto ijk = g.ijk(p);
    const auto r = g.position(ijk[0], ijk[1], ijk[2]);
    pts.push_back(r[0], r[1], r[2], 0);
  }
  pts.push_back(-0.01, 1, 1, 0);         // outside, below x
  pts.push_back(2, 3.2, 1, 0);           // outside, above y
  pts.push_back(4.0000001, 3, 2, 0);     // on the far corner within the tolerance
  pts.push_back(NAN, 1, 1, 0);           // not a position
  const InterpolationMatrix m = trilinear_matrix(g, pts);
  const std::size_t nodes = g.point_count();
  EXPECT_EQ(m.outside, (std::vector<std::size_t>{nodes, nodes + 1, nodes + 3}));
  const auto v = interpolate(m, map.data(), "cpu");
  for (std::size_t p = 0; p < nodes; ++p) EXPECT_EQ(v[p], map[p]) << "node " << p;
  EXPECT_TRUE(std::isnan(v[nodes]));
  EXPECT_TRUE(std::isnan(v[nodes + 1]));
  EXPECT_EQ(v[nodes + 2], map.back());
  EXPECT_TRUE(std::isnan(v[nodes + 3]));
  // Outside rows hold no weights.
  EXPECT_EQ(m.matrix.row_offsets[nodes + 1] - m.matrix.row_offsets[nodes], 0);
  expect_same_without_matrix(g, map, pts, m);
}

TEST(Interpolation, FlatGridAxis) {
  // One plane in z: points on it interpolate bilinearly, points off it are outside.
  const GridSpec g = grid_from_origin({0, 0, 2}, {4, 4, 1}, 1.0);
  const std::array<double, 4> c = {1, 2, 3, 0};
  const auto map = linear_map(g, c);
  AtomSet pts;
  pts.push_back(1.5, 2.25, 2, 0);
  pts.push_back(1.5, 2.25, 2.5, 0);
  const InterpolationMatrix m = trilinear_matrix(g, pts);
  EXPECT_EQ(m.outside, std::vector<std::size_t>{1});
  const auto v = interpolate(m, map.data(), "cpu");
  EXPECT_NEAR(v[0], linear_at(c, 1.5, 2.25, 2), 1e-5);
}

TEST(Interpolation, ManyMapsEqualOneByOne) {
  const GridSpec g = grid_from_origin({0, 0, 0}, {6, 5, 4}, 0.7);
  const AtomSet pts = points_inside(g, 40, 8);
  const InterpolationMatrix m = trilinear_matrix(g, pts);
  std::vector<float> maps;
  for (int k = 0; k < 5; ++k) {
    const auto one = linear_map(g, {double(k), 0.5 * k, -1.0, 2.0 - k});
    maps.insert(maps.end(), one.begin(), one.end());
  }
  std::vector<float> many(5 * pts.size());
  interpolate_many(m, maps.data(), 5, many.data(), "cpu");
  for (int k = 0; k < 5; ++k) {
    const auto one = interpolate(m, maps.data() + k * g.point_count(), "cpu");
    for (std::size_t i = 0; i < pts.size(); ++i) EXPECT_FLOAT_EQ(many[k * pts.size() + i], one[i]);
  }
}

TEST(Sample, PointLists) {
  const PointSet a = parse_point_list("# points\n1 2 3\n 4,5,6  # trailing\n\n-1e-1\t0 2\n", "a.txt");
  EXPECT_EQ(a.points.size(), 3u);
  EXPECT_FALSE(a.has_charges);
  EXPECT_FLOAT_EQ(a.points.y[1], 5);
  EXPECT_FLOAT_EQ(a.points.x[2], -0.1f);
  const PointSet b = parse_point_list("1 2 3 0.5\n4 5 6 -1\n", "b.txt");
  EXPECT_TRUE(b.has_charges);
  EXPECT_FLOAT_EQ(b.points.q[1], -1);
  try {
    parse_point_list("1 2 3\n4 5\n", "c.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line, 2u);
  }
  EXPECT_THROW(parse_point_list("1 2 3\n1 2 3 4\n", "d.txt"), InputError);
  EXPECT_THROW(parse_point_list("1 2 x\n", "e.txt"), InputError);
  EXPECT_THROW(parse_point_list("# nothing\n", "f.txt"), InputError);
}

TEST(Sample, LinearFieldEnergyIsExact) {
  // A map in kcal/mol/e with a linear field: E = Σ q f(r) exactly (up to float32).
  const auto dir = test::temp_dir("sample-linear");
  const GridSpec g = grid_from_origin({-5, -5, -5}, {21, 21, 21}, 0.5);
  const std::array<double, 4> c = {0.5, 0.2, -0.1, 0.05};
  io::MapMetadata meta;
  meta.units = "kcal/mol/e";
  io::write_hdf5(dir / "lin.h5", g, linear_map(g, c).data(), meta);
  test::write_text(dir / "pts.txt", "0 0 0 1\n1.3 -2.2 4.1 -0.5\n-4.9 4.9 0.25 2\n20 0 0 7\n");
  SampleOptions o;
  o.map = dir / "lin.h5";
  o.points = dir / "pts.txt";
  o.device = "cpu";
  const SampleResult r = sample(o);
  ASSERT_EQ(r.points, 4u);
  EXPECT_EQ(r.outside, std::vector<std::size_t>{3});
  EXPECT_TRUE(std::isnan(r.values[3]));
  const double expected = 1 * linear_at(c, 0, 0, 0) - 0.5 * linear_at(c, 1.3, -2.2, 4.1) +
                          2 * linear_at(c, -4.9, 4.9, 0.25);
  ASSERT_EQ(r.energy_kcal_mol.size(), 1u);
  EXPECT_NEAR(r.energy_kcal_mol[0], expected, 1e-5);
  EXPECT_EQ(r.to_json()["outside"][0], 3);
}

TEST(Sample, EnergyAgainstDirectSum) {
  // The CPU engine computes the map of charge set A in kT/e; the energy of set B sampled from it
  // is compared with Σ_b q_b Σ_a k q_a / r_ab in float64, within the trilinear error bound:
  // per pair (h²/8)·Σ|∂²f/∂x_i²| ≤ (h²/8)·3·2/r³ for f = 1/r, r the distance from a to b's cell.
  const auto dir = test::temp_dir("sample-energy");
  const AtomSet a = test::random_atoms(20, Box{{-2, -2, -2}, {2, 2, 2}}, 21);
  AtomSet b;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-7.5, 7.5), q(-1, 1);
  while (b.size() < 15) {
    const double x = u(rng), y = u(rng), z = u(rng);
    if (std::max({std::abs(x), std::abs(y), std::abs(z)}) > 5) b.push_back(x, y, z, q(rng));
  }
  const double h = 0.25;
  const GridSpec g = grid_from_origin({-8, -8, -8}, {65, 65, 65}, h);
  engine::PotentialRequest request;
  request.atoms = &a;
  request.grid = g;
  auto backend = engine::make_cpu_backend();
  const auto map = engine::compute_grid(*backend, request);
  io::MapMetadata meta;  // kT/e at 298.15 K, as the request
  io::write_hdf5(dir / "a.h5", g, map.data(), meta);
  test::write_pqr(dir / "b.pqr", b);
  const AtomSet bs = test::as_stored(b);

  double direct = 0, bound = 0, scale = 0;
  for (std::size_t i = 0; i < bs.size(); ++i)
    for (std::size_t j = 0; j < a.size(); ++j) {
      const double dx = double(bs.x[i]) - a.x[j], dy = double(bs.y[i]) - a.y[j],
                   dz = double(bs.z[i]) - a.z[j];
      const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
      const double k = std::abs(double(bs.q[i]) * kCoulomb * a.q[j]);
      direct += double(bs.q[i]) * kCoulomb * a.q[j] / r;
      const double r_cell = r - h * std::sqrt(3.0);
      bound += k * (h * h / 8) * 6 / (r_cell * r_cell * r_cell);
      scale += k / r;
    }
  SampleOptions o;
  o.map = dir / "a.h5";
  o.points = dir / "b.pqr";
  o.device = "cpu";
  const SampleResult r = sample(o);
  EXPECT_TRUE(r.has_charges);
  EXPECT_TRUE(r.outside.empty());
  ASSERT_EQ(r.energy_kcal_mol.size(), 1u);
  EXPECT_NEAR(r.energy_kcal_mol[0], direct, bound + 1e-5 * scale) << "direct " << direct;
  EXPECT_LT(bound, 0.01 * scale);  // the check means something
  // The units conversion: the same energy from a kcal/mol/e map.
  std::vector<float> kcal(map.size());
  const double to_kcal = 1.0 / unit_factor(Unit::kT_per_e, kDefaultTemperature);
  for (std::size_t i = 0; i < map.size(); ++i) kcal[i] = float(map[i] * to_kcal);
  meta.units = "kcal/mol/e";
  io::write_hdf5(dir / "a_kcal.h5", g, kcal.data(), meta);
  o.map = dir / "a_kcal.h5";
  EXPECT_NEAR(sample(o).energy_kcal_mol[0], r.energy_kcal_mol[0], 1e-5 * scale);
}

TEST(Sample, BatchFileOneMatrixAllFrames) {
  const auto dir = test::temp_dir("sample-batch");
  std::vector<std::string> files;
  for (int f = 0; f < 3; ++f) {
    const auto path = dir / ("f" + std::to_string(f) + ".pqr");
    test::write_pqr(path, test::random_atoms(8, Box{{0, 0, 0}, {3, 3, 3}}, 40 + f));
    files.push_back(path.string());
  }
  const std::filesystem::path batch = dir / "batch.h5";
  test::write_batch_file(files, batch, 0.5, 3);
  test::write_text(dir / "pts.txt", "1 1 1\n2 0.5 2.5\n-10 -10 -10\n");
  SampleOptions o;
  o.map = batch;
  o.points = dir / "pts.txt";
  o.device = "cpu";
  o.maps_per_pass = 2;  // two SpMM passes
  o.output_csv = dir / "out.csv";
  const SampleResult r = sample(o);
  ASSERT_EQ(r.labels.size(), 3u);
  EXPECT_EQ(r.frames, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_FALSE(r.has_charges);
  EXPECT_TRUE(r.energy_kcal_mol.empty());
  // Each frame's values equal the single-map path on that frame.
  const io::MapReader reader(batch);
  const PointSet pts = read_points(o.points);
  const InterpolationMatrix m = trilinear_matrix(reader.grid(), pts.points);
  std::vector<float> frame(reader.grid().point_count());
  for (std::size_t f = 0; f < 3; ++f) {
    reader.read(f, frame.data());
    const auto one = interpolate(m, frame.data(), "cpu");
    for (std::size_t i = 0; i < 2; ++i) EXPECT_FLOAT_EQ(r.values[f * 3 + i], one[i]);
    EXPECT_TRUE(std::isnan(r.values[f * 3 + 2]) && std::isnan(one[2]));  // outside
  }
  // The CSV: a header, then x,y,z and one value per frame (NaN outside).
  std::ifstream csv(o.output_csv);
  std::string header, line;
  std::getline(csv, header);
  EXPECT_EQ(header, "x,y,z,\"" + batch.string() + "#0\",\"" + batch.string() + "#1\",\"" +
                        batch.string() + "#2\"");
  std::getline(csv, line);
  EXPECT_EQ(line.substr(0, 6), "1,1,1,");
  std::getline(csv, line);
  std::getline(csv, line);
  EXPECT_EQ(line, "-10,-10,-10,nan,nan,nan");
}

#ifdef DCSGRID_HAVE_CUDA
TEST(SampleGpu, SpmmMatchesCpu) {
  DCSGRID_REQUIRE_GPU();
  const GridSpec g = grid_from_origin({0, 0, 0}, {30, 25, 20}, 0.5);
  const AtomSet pts = points_inside(g, 5000, 9);
  const InterpolationMatrix m = trilinear_matrix(g, pts);
  std::vector<float> maps(7 * g.point_count());
  std::mt19937 rng(2);
  for (auto& x : maps) x = std::uniform_real_distribution<float>(-1, 1)(rng);
  std::vector<float> cpu(7 * pts.size()), gpu(7 * pts.size());
  interpolate_many(m, maps.data(), 7, cpu.data(), "cpu");
  interpolate_many(m, maps.data(), 7, gpu.data(), "gpu");
  for (std::size_t i = 0; i < cpu.size(); ++i) ASSERT_NEAR(gpu[i], cpu[i], 1e-6) << i;
  const auto one = interpolate(m, maps.data(), "gpu");
  for (std::size_t i = 0; i < pts.size(); ++i) ASSERT_NEAR(one[i], cpu[i], 1e-6) << i;
}
#endif
