// Similarity: the Gram matrix against a float64 loop, the indices on cases with known values,
// average-linkage order on hand-checked examples, the distance mask against brute force, and
// compute_similarity end to end on map files.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "dcsgrid/analysis/similarity.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/maps/reader.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"

using namespace dcsgrid;
using namespace dcsgrid::analysis;

namespace {

std::vector<float> random_rows(std::size_t rows, std::size_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(rows * cols);
  for (auto& x : v) x = u(rng);
  return v;
}

std::vector<double> naive_gram(const std::vector<float>& m, std::size_t n, std::size_t k) {
  std::vector<double> g(n * n, 0.0);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      double s = 0;
      for (std::size_t p = 0; p < k; ++p) s += double(m[a * k + p]) * double(m[b * k + p]);
      g[a * n + b] = s;
    }
  return g;
}

}  // namespace

TEST(Similarity, GramMatrixAgainstFloat64Loop) {
  // More points than one GEMM block (2^20), so blocks are summed.
  const std::size_t n = 5, k = (std::size_t(1) << 20) + 12345;
  const auto m = random_rows(n, k, 1);
  const auto ref = naive_gram(m, n, k);
  const auto g = gram_matrix(m.data(), n, k, "cpu");
  ASSERT_EQ(g.size(), n * n);
  for (std::size_t i = 0; i < n * n; ++i) {
    // Diagonal ~ k/3; off-diagonal ~ sqrt(k)/3: hold both to float round-off of the blocks.
    EXPECT_NEAR(g[i], ref[i], 2e-6 * ref[(i / n) * (n + 1)]) << i;
  }
  // Small and odd sizes too.
  const auto small = random_rows(3, 7, 2);
  const auto gs = gram_matrix(small.data(), 3, 7, "cpu");
  const auto rs = naive_gram(small, 3, 7);
  for (std::size_t i = 0; i < 9; ++i) EXPECT_NEAR(gs[i], rs[i], 1e-5);
}

TEST(Similarity, IndicesOnKnownCases) {
  // Maps a, 2a, −a, b ⟂ a: SI(a,2a) = 2·2/(1+4) = 0.8, SI(a,−a) = −1, SI(a,b) = 0; Carbó(a,2a) = 1.
  const std::vector<float> a = {1, 2, 0, -1}, b = {2, -1, 3, 0};  // <a,b> = 0
  std::vector<float> m;
  for (const auto& row : {a, std::vector<float>{2, 4, 0, -2}, std::vector<float>{-1, -2, 0, 1}, b})
    m.insert(m.end(), row.begin(), row.end());
  const auto g = gram_matrix(m.data(), 4, 4, "cpu");
  const auto si = hodgkin_from_gram(g, 4), c = carbo_from_gram(g, 4);
  EXPECT_NEAR(si[0 * 4 + 0], 1.0, 1e-12);
  EXPECT_NEAR(si[0 * 4 + 1], 0.8, 1e-12);
  EXPECT_NEAR(si[0 * 4 + 2], -1.0, 1e-12);
  EXPECT_NEAR(si[0 * 4 + 3], 0.0, 1e-12);
  EXPECT_NEAR(c[0 * 4 + 1], 1.0, 1e-12);
  EXPECT_NEAR(c[1 * 4 + 2], -1.0, 1e-12);
  EXPECT_NEAR(si[1 * 4 + 0], si[0 * 4 + 1], 1e-15);  // symmetric
  // A zero map: undefined, reported as NaN.
  const std::vector<double> zero = {0, 0, 0, 4};
  EXPECT_TRUE(std::isnan(hodgkin_from_gram(zero, 2)[0]));
  EXPECT_EQ(hodgkin_from_gram(zero, 2)[1], 0.0);
  EXPECT_TRUE(std::isnan(carbo_from_gram(zero, 2)[1]));
  EXPECT_THROW(hodgkin_from_gram(zero, 3), Error);
}

// Issue 35 group 11: similarity of all-zero maps gave NaN matrices with no word; such maps are
// now named in an error.
TEST(Similarity, ZeroMapsAreNamed) {
  const std::vector<float> rows = {0, 0, 0, 1, 2, 3, 0, 0, 0};  // maps a (zero), b, c (zero)
  const auto g = gram_matrix(rows.data(), 3, 3, "cpu");
  try {
    require_nonzero_maps(g, {"a.h5", "b.h5", "c.h5"});
    FAIL() << "zero maps accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "similarity: maps a.h5, c.h5 are zero at every point compared: any "
                           "similarity index with a zero map is 0/0");
  }
  const std::vector<float> one_zero = {1, 2, 3, 0, 0, 0};
  try {
    require_nonzero_maps(gram_matrix(one_zero.data(), 2, 3, "cpu"), {"x", "y"});
    FAIL() << "a zero map accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("map y is zero"), std::string::npos) << e.what();
  }
  const std::vector<float> tiny = {1e-10f, 0, 0, 0, 0, 1};  // small but not zero: defined
  EXPECT_NO_THROW(require_nonzero_maps(gram_matrix(tiny.data(), 2, 3, "cpu"), {"x", "y"}));
}

TEST(Similarity, AverageLinkageOrder) {
  // Points on a line at 0, 10, 1, 11, 2: clusters {0,1,2 at 0..2} and {10,11}.
  const std::vector<double> x = {0, 10, 1, 11, 2};
  const std::size_t n = x.size();
  std::vector<double> d(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) d[i * n + j] = std::abs(x[i] - x[j]);
  // Merges: (0,2) at 1 → {0,2}; (1,3) at 1 (ties: smaller slot pair (0,2) first); then {0,2}+4:
  // average(2, 1) = 1.5 → {0,2,4}; last the two clusters: leaves 0,2,4 then 1,3.
  EXPECT_EQ(average_linkage_order(d, n), (std::vector<std::size_t>{0, 2, 4, 1, 3}));

  // A = {0,1} at distance 1; point 2 is 2.0 from 0 and 5.0 from 1 (average 3.5), point 3 is 3.0
  // from both, and d(2,3) = 3.4. Average linkage joins 3 to A next (3.0 < 3.4 < 3.5), where
  // single linkage would join 2 (min 2.0).
  const std::vector<double> e = {0, 1, 2, 3,  //
                                 1, 0, 5, 3,  //
                                 2, 5, 0, 3.4, //
                                 3, 3, 3.4, 0};
  EXPECT_EQ(average_linkage_order(e, 4), (std::vector<std::size_t>{0, 1, 3, 2}));
  EXPECT_EQ(average_linkage_order({}, 0), std::vector<std::size_t>{});
  EXPECT_EQ(average_linkage_order({0}, 1), std::vector<std::size_t>{0});
  // NaN distances count as the largest.
  const std::vector<double> f = {0, NAN, 1, NAN, 0, 5, 1, 5, 0};
  EXPECT_EQ(average_linkage_order(f, 3), (std::vector<std::size_t>{0, 2, 1}));
}

TEST(Similarity, DistanceMaskAgainstBruteForce) {
  const GridSpec g = grid_from_origin({-4, -3, -2}, {17, 13, 11}, 0.5);
  const std::vector<AtomSet> sets = {test::random_atoms(6, Box{{-2, -1, 0}, {2, 2, 2}}, 4),
                                     test::random_atoms(3, Box{{0, 0, 0}, {4, 3, 3}}, 5)};
  const double r = 1.7;
  const auto mask = distance_mask(g, sets, r);
  std::size_t kept = 0;
  for (std::size_t p = 0; p < g.point_count(); ++p) {
    const auto ijk = g.ijk(p);
    const auto pos = g.position(ijk[0], ijk[1], ijk[2]);
    bool far = true;
    for (const auto& s : sets)
      for (std::size_t a = 0; a < s.size(); ++a) {
        const double dx = pos[0] - s.x[a], dy = pos[1] - s.y[a], dz = pos[2] - s.z[a];
        if (dx * dx + dy * dy + dz * dz <= r * r) far = false;
      }
    ASSERT_EQ(mask[p], far ? 1 : 0) << "point " << p;
    kept += far;
  }
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, g.point_count());
  EXPECT_THROW(distance_mask(g, sets, -1), Error);
}

// Atoms far beyond the grid along x or y (their index ranges beyond int64) clear nothing, and the
// mask's index arithmetic stays defined (tools/sanitize.sh: UBSan's float-cast-overflow named the
// unclamped conversion).
TEST(Similarity, DistanceMaskOfAtomsFarBeyondTheGrid) {
  const GridSpec g = grid_from_origin({-4, -3, -2}, {17, 13, 11}, 0.5);
  AtomSet far;
  far.push_back(1e20, 0.0, 0.0, 1.0);
  far.push_back(0.0, -1e20, 0.5, 1.0);
  far.push_back(-1e19, 1e19, 1.0, 1.0);
  const auto mask = distance_mask(g, {far}, 1e6);
  for (std::size_t p = 0; p < mask.size(); ++p) ASSERT_EQ(mask[p], 1) << "point " << p;
}

TEST(Similarity, FilesEndToEndWithMaskAndOutputs) {
  const auto dir = test::temp_dir("similarity");
  const GridSpec g = grid_from_origin({0, 0, 0}, {12, 10, 9}, 1.0);
  const std::size_t n = g.point_count();
  // Three maps: a, a + small noise, b.
  const auto a = random_rows(1, n, 1), noise = random_rows(1, n, 2), b = random_rows(1, n, 3);
  std::vector<float> a2(n);
  for (std::size_t i = 0; i < n; ++i) a2[i] = a[i] + 0.05f * noise[i];
  io::MapMetadata meta;
  std::vector<std::filesystem::path> files = {dir / "a.h5", dir / "b.h5", dir / "a2.h5"};
  io::write_hdf5(files[0], g, a.data(), meta);
  io::write_hdf5(files[1], g, b.data(), meta);
  io::write_hdf5(files[2], g, a2.data(), meta);

  SimilarityOptions o;
  o.maps = files;
  o.device = "cpu";
  o.mask_distance = 2.5;
  AtomSet atoms;
  atoms.push_back(3, 3, 3, 0);
  atoms.push_back(8, 6, 5, 0);
  o.mask_atoms = {atoms};
  o.output_h5 = dir / "sim.h5";
  o.output_csv = dir / "sim.csv";
  const SimilarityResult r = compute_similarity(o);
  ASSERT_EQ(r.n, 3u);
  const auto mask = distance_mask(g, {atoms}, 2.5);
  std::vector<float> rows;
  std::size_t kept = 0;
  for (const std::vector<float>* map : std::initializer_list<const std::vector<float>*>{&a, &b, &a2})
    for (std::size_t p = 0; p < n; ++p)
      if (mask[p]) rows.push_back((*map)[p]);
  for (std::size_t p = 0; p < n; ++p) kept += mask[p];
  EXPECT_EQ(r.points_used, kept);
  const auto ref = hodgkin_from_gram(naive_gram(rows, 3, kept), 3);
  for (std::size_t i = 0; i < 9; ++i) EXPECT_NEAR(r.hodgkin[i], ref[i], 1e-6);
  // a and a2 cluster together.
  EXPECT_EQ(r.order, (std::vector<std::size_t>{0, 2, 1}));
  EXPECT_EQ(r.labels[1], files[1].string());

  std::ifstream csv(o.output_csv);
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_EQ(header, "map,\"" + files[0].string() + "\",\"" + files[1].string() + "\",\"" +
                        files[2].string() + "\"");
  EXPECT_EQ(first.substr(0, first.find(',')), "\"" + files[0].string() + "\"");
  EXPECT_TRUE(std::filesystem::exists(o.output_h5));

  // Grids must match.
  io::write_hdf5(dir / "other.h5", grid_from_origin({0, 0, 0}, {12, 10, 8}, 1.0), a.data(), meta);
  o.maps = {files[0], dir / "other.h5"};
  o.mask_distance = 0;
  EXPECT_THROW(compute_similarity(o), Error);
  o.maps = {files[0]};
  EXPECT_THROW(compute_similarity(o), Error);  // one map
}

TEST(Similarity, BatchFramesWithTheirOwnAtomsAsMask) {
  const auto dir = test::temp_dir("similarity-batch");
  std::vector<std::string> files;
  std::vector<AtomSet> frames;
  for (int f = 0; f < 3; ++f) {
    const auto path = dir / ("f" + std::to_string(f) + ".pqr");
    frames.push_back(test::random_atoms(6, Box{{0, 0, 0}, {3, 3, 3}}, 70 + f));
    test::write_pqr(path, frames.back());
    files.push_back(path.string());
  }
  const std::filesystem::path batch = dir / "batch.h5";
  test::write_batch_file(files, batch, 0.5, 4);

  SimilarityOptions o;
  o.maps = {batch};
  o.device = "cpu";
  o.mask_distance = 2.0;
  o.mask_batch_inputs = true;
  const SimilarityResult r = compute_similarity(o);
  ASSERT_EQ(r.n, 3u);
  EXPECT_EQ(r.labels[2], batch.string() + "#2");
  // The same mask from the atoms given directly (as the PQR files store them).
  SimilarityOptions direct = o;
  direct.mask_batch_inputs = false;
  for (const auto& f : frames) direct.mask_atoms.push_back(test::as_stored(f));
  const SimilarityResult d = compute_similarity(direct);
  EXPECT_EQ(r.points_used, d.points_used);
  EXPECT_LT(r.points_used, io::MapReader(batch).grid().point_count());
  for (std::size_t i = 0; i < 9; ++i) EXPECT_DOUBLE_EQ(r.hodgkin[i], d.hodgkin[i]);
  EXPECT_NEAR(r.hodgkin[0], 1.0, 1e-12);
}

#ifdef DCSGRID_HAVE_CUDA
TEST(SimilarityGpu, GramMatrixMatchesFloat64) {
  DCSGRID_REQUIRE_GPU();
  const std::size_t n = 7, k = (std::size_t(1) << 20) + 777;
  const auto m = random_rows(n, k, 8);
  const auto ref = naive_gram(m, n, k);
  const auto g = gram_matrix(m.data(), n, k, "gpu");
  for (std::size_t i = 0; i < n * n; ++i)
    EXPECT_NEAR(g[i], ref[i], 2e-5 * ref[(i / n) * (n + 1)]) << i;
}
#endif
