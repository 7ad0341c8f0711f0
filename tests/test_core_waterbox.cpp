// The water-box generator: geometry, charges, density and reproducibility.
#include <gtest/gtest.h>

#include <cmath>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/waterbox.hpp"

using namespace dcsgrid;

namespace {
double dist(const AtomSet& w, std::size_t a, std::size_t b) {
  return std::hypot(double(w.x[a]) - w.x[b], double(w.y[a]) - w.y[b], double(w.z[a]) - w.z[b]);
}
}  // namespace

TEST(WaterBox, Tip3pMoleculesAtLiquidDensity) {
  const double edge = 31.0;
  const AtomSet w = water_box(edge, 5);
  ASSERT_EQ(w.size() % 3, 0u);
  const double molecules = double(w.size() / 3);
  EXPECT_NEAR(molecules / (edge * edge * edge), kWaterDensity, 0.05 * kWaterDensity);
  EXPECT_NEAR(w.total_charge(), 0.0, 1e-3);
  double cos_sum = 0;
  for (std::size_t m = 0; m < w.size(); m += 3) {
    ASSERT_FLOAT_EQ(w.q[m], float(kWaterChargeO));
    ASSERT_FLOAT_EQ(w.q[m + 1], float(kWaterChargeH));
    ASSERT_NEAR(dist(w, m, m + 1), 0.9572, 1e-5);
    ASSERT_NEAR(dist(w, m, m + 2), 0.9572, 1e-5);
    // H–O–H angle from the law of cosines.
    const double hh = dist(w, m + 1, m + 2);
    const double angle = std::acos(1 - hh * hh / (2 * 0.9572 * 0.9572)) * 180 / M_PI;
    ASSERT_NEAR(angle, 104.52, 1e-2);
    for (std::size_t a = m; a < m + 3; ++a) {
      ASSERT_GT(w.x[a], -1.0f);
      ASSERT_LT(w.z[a], float(edge + 1.0));
    }
    // Orientation: the bisector's z component, averaging 0 for random turns.
    cos_sum += (w.z[m + 1] + w.z[m + 2]) / 2 - w.z[m];
  }
  EXPECT_LT(std::abs(cos_sum / molecules), 0.05);
}

TEST(WaterBox, ReproducibleAndSizedByAtomCount) {
  const AtomSet a = water_box_atoms(10000, 9), b = water_box_atoms(10000, 9);
  const AtomSet c = water_box_atoms(10000, 10);
  EXPECT_EQ(a.size(), 10002u);  // 3334 whole molecules
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.q, b.q);
  EXPECT_NE(a.x, c.x);
  const Box box = bounding_box(a);
  const double volume = box.extent()[0] * box.extent()[1] * box.extent()[2];
  EXPECT_NEAR(3334 / volume, kWaterDensity, 0.2 * kWaterDensity);
  EXPECT_THROW(water_box_atoms(0), Error);
  EXPECT_THROW(water_box(-1.0), Error);
}
