// UnitCell against hand-derived geometry: lattice vectors, reciprocal vectors, volume, wrapping and
// the refusals of impossible cells.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/error.hpp"

namespace dcsgrid::test {
namespace {

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
double angle_degrees(const Vec3& a, const Vec3& b) {
  return std::acos(dot(a, b) / (norm(a) * norm(b))) * 180 / std::numbers::pi;
}

TEST(CoreCell, OrthorhombicCellIsDiagonal) {
  const UnitCell c = make_cell({10, 20, 30});
  EXPECT_TRUE(c.orthorhombic());
  for (int i = 0; i < 3; ++i)
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(c.vectors[i][d], i == d ? c.lengths[i] : 0.0);
      EXPECT_DOUBLE_EQ(c.reciprocal[i][d], i == d ? 1 / c.lengths[i] : 0.0);
    }
  EXPECT_DOUBLE_EQ(c.volume, 6000);
}

// A GROMACS rhombic dodecahedron (xy-square) and an arbitrary triclinic cell: the vectors have the
// lengths and angles asked for, a along x and b in the xy plane, and the reciprocal vectors are dual.
TEST(CoreCell, TriclinicVectorsHaveTheLengthsAndAnglesAskedFor) {
  for (const auto& [lengths, angles] : {std::pair<Vec3, Vec3>{{50, 50, 50}, {60, 60, 90}},
                                        std::pair<Vec3, Vec3>{{30, 40, 50}, {80, 95, 110}}}) {
    const UnitCell c = make_cell(lengths, angles);
    EXPECT_FALSE(c.orthorhombic());
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(norm(c.vectors[i]), lengths[i], 1e-12);
    EXPECT_NEAR(angle_degrees(c.vectors[1], c.vectors[2]), angles[0], 1e-10);
    EXPECT_NEAR(angle_degrees(c.vectors[0], c.vectors[2]), angles[1], 1e-10);
    EXPECT_NEAR(angle_degrees(c.vectors[0], c.vectors[1]), angles[2], 1e-10);
    EXPECT_EQ(c.vectors[0][1], 0.0);
    EXPECT_EQ(c.vectors[0][2], 0.0);
    EXPECT_EQ(c.vectors[1][2], 0.0);
    const Vec3& a = c.vectors[0];
    const Vec3& b = c.vectors[1];
    const Vec3& cc = c.vectors[2];
    const double det = a[0] * (b[1] * cc[2] - b[2] * cc[1]) - a[1] * (b[0] * cc[2] - b[2] * cc[0]) +
                       a[2] * (b[0] * cc[1] - b[1] * cc[0]);
    EXPECT_NEAR(c.volume, det, 1e-9 * det);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(dot(c.vectors[i], c.reciprocal[j]), i == j ? 1 : 0, 1e-12);
  }
}

TEST(CoreCell, FractionalRoundTripAndWrap) {
  const UnitCell c = make_cell({30, 40, 50}, {80, 95, 110});
  const Vec3 p{12.5, -73.25, 141.0};
  const Vec3 back = c.cartesian(c.fractional(p));
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(back[d], p[d], 1e-10);
  const Vec3 w = c.wrap(p);
  const Vec3 f = c.fractional(w), f0 = c.fractional(p);
  for (int d = 0; d < 3; ++d) {
    EXPECT_GE(f[d], 0.0);
    EXPECT_LT(f[d], 1.0);
    // The wrapped point differs from p by a whole lattice vector.
    EXPECT_NEAR(f0[d] - f[d], std::round(f0[d] - f[d]), 1e-10);
  }
}

TEST(CoreCell, CellFromVectorsRotatesIntoTheConvention) {
  // The cell (30, 40, 50, 80, 95, 110) turned by 90° about z: same lengths and angles.
  const UnitCell c = make_cell({30, 40, 50}, {80, 95, 110});
  Mat3 turned;
  for (int i = 0; i < 3; ++i) turned[i] = {-c.vectors[i][1], c.vectors[i][0], c.vectors[i][2]};
  const auto back = cell_from_vectors(turned);
  ASSERT_TRUE(back);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(back->lengths[i], c.lengths[i], 1e-10);
    EXPECT_NEAR(back->angles[i], c.angles[i], 1e-9);
  }
  EXPECT_FALSE(cell_from_vectors(Mat3{}));
  EXPECT_FALSE(cell_from_vectors(Mat3{Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{1, 1, 0}}));  // coplanar
}

TEST(CoreCell, ImpossibleCellsAreRefused) {
  EXPECT_THROW(make_cell({0, 10, 10}), Error);
  EXPECT_THROW(make_cell({10, -1, 10}), Error);
  EXPECT_THROW(make_cell({10, 10, NAN}), Error);
  EXPECT_THROW(make_cell({10, 10, 10}, {0, 90, 90}), Error);
  EXPECT_THROW(make_cell({10, 10, 10}, {90, 180, 90}), Error);
  // alpha > beta + gamma: the three angles close no volume.
  EXPECT_THROW(make_cell({10, 10, 10}, {150, 60, 60}), Error);
}

TEST(CoreCell, ParseCell) {
  const UnitCell a = parse_cell("10,20,30");
  EXPECT_EQ(a.lengths, (Vec3{10, 20, 30}));
  EXPECT_EQ(a.angles, (Vec3{90, 90, 90}));
  const UnitCell b = parse_cell("70.1,70.1,70.1,60,60,90");
  EXPECT_EQ(b.angles, (Vec3{60, 60, 90}));
  for (const char* bad : {"", "10,20", "10,20,30,90", "10,20,x", "10,,30", "10,20,30,90,90,200", "0,1,1"}) {
    try {
      parse_cell(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--cell"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace dcsgrid::test
