// The slab plan (slab_plan.hpp): every plane once, in order, within the cap, on the method's plane
// multiple, and enough slabs for every device to overlap.
#include <gtest/gtest.h>

#include "dcsgrid/engine/slab_plan.hpp"

namespace dcsgrid::engine {
namespace {

// Checks the plan covers range exactly, in order, with slabs of 1..cap planes.
void expect_cover(const std::vector<Slab>& slabs, Slab range, std::int64_t cap) {
  ASSERT_FALSE(slabs.empty());
  EXPECT_EQ(slabs.front().z_begin, range.z_begin);
  EXPECT_EQ(slabs.back().z_end, range.z_end);
  for (std::size_t s = 0; s < slabs.size(); ++s) {
    EXPECT_GE(slabs[s].planes(), 1) << "slab " << s;
    EXPECT_LE(slabs[s].planes(), cap) << "slab " << s;
    if (s > 0) EXPECT_EQ(slabs[s].z_begin, slabs[s - 1].z_end) << "slab " << s;
  }
}

TEST(SlabPlanes, RoundsToThePlaneMultipleWithinWhatMemoryAllows) {
  EXPECT_EQ(slab_planes(12, 1000, 8), 8);   // the 743k box: 12 planes in 8 MiB -> one brick
  EXPECT_EQ(slab_planes(47, 1000, 8), 40);
  EXPECT_EQ(slab_planes(3, 1000, 8), 8);    // big planes: one brick's depth, memory allowing
  EXPECT_EQ(slab_planes(3, 5, 8), 3);       // not allowed: what fits
  EXPECT_EQ(slab_planes(0, 0, 8), 1);       // a plane larger than every limit still runs
  EXPECT_EQ(slab_planes(12, 1000, 1), 12);  // direct: any plane count
  EXPECT_EQ(slab_planes(500, 64, 8), 64);
}

TEST(PlanSlabs, BoundsOnThePlaneMultipleOfTheWholeGrid) {
  for (const Slab range : {Slab{0, 411}, Slab{0, 79}, Slab{13, 411}, Slab{5, 7}, Slab{200, 216}})
    for (const std::int64_t devices : {1, 2, 3})
      for (const std::int64_t cap : {8, 16, 40, 1000}) {
        SCOPED_TRACE(testing::Message() << "range [" << range.z_begin << ", " << range.z_end
                                        << ") devices " << devices << " cap " << cap);
        const std::vector<Slab> slabs = plan_slabs(range, cap, devices, 8);
        expect_cover(slabs, range, cap);
        for (std::size_t s = 1; s < slabs.size(); ++s) EXPECT_EQ(slabs[s].z_begin % 8, 0);
        if (range.planes() >= 2 * devices * 8)
          EXPECT_GE(slabs.size(), std::size_t(2 * devices));
      }
}

TEST(PlanSlabs, CapBelowTheMultipleGivesEqualSlabs) {
  const std::vector<Slab> slabs = plan_slabs({0, 20}, 3, 1, 8);
  expect_cover(slabs, {0, 20}, 3);
  EXPECT_EQ(slabs.size(), 7u);
}

TEST(PlanSlabs, AtLeastTwoSlabsPerDeviceWhenThePlanesAllow) {
  expect_cover(plan_slabs({0, 1}, 100, 1, 1), {0, 1}, 100);
  const std::vector<Slab> two = plan_slabs({0, 10}, 100, 1, 1);
  EXPECT_EQ(two.size(), 2u);
  const std::vector<Slab> four = plan_slabs({0, 64}, 1000, 2, 8);
  EXPECT_EQ(four.size(), 4u);  // 16 planes each
  expect_cover(four, {0, 64}, 1000);
}

}  // namespace
}  // namespace dcsgrid::engine
