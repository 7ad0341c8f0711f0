// The check every map's slabs pass before they are written (app::finite_slabs): the first value
// that is not finite (NaN, ±infinity) is refused naming its grid point, or, with
// --allow-non-finite, every one is counted; finite extremes pass. Slabs of more than 2^20 points
// take the check's parallel path, one plane the serial one.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/core/error.hpp"

namespace dcsgrid::app {
namespace {

const GridSpec kGrid = grid_from_origin({0, 0, 0}, {200, 100, 60}, 0.5);

// Slab [z_begin, z_end) with the given values at the given points (numbered over the whole grid).
std::vector<float> slab_with(engine::Slab slab, const std::vector<std::pair<std::size_t, float>>& values) {
  std::vector<float> data(kGrid.plane_size() * std::size_t(slab.planes()), 1.0f);
  for (const auto& [point, value] : values) data[point - kGrid.plane_size() * std::size_t(slab.z_begin)] = value;
  return data;
}

std::size_t point(std::size_t x, std::size_t y, std::size_t z) { return x + 200 * (y + 100 * z); }

TEST(AppSettings, TheFirstValueNotFiniteIsRefusedAtItsPoint) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const engine::Slab slab : {engine::Slab{2, 60}, engine::Slab{33, 34}}) {
    const std::vector<float> data =
        slab_with(slab, {{point(7, 5, 33), -inf}, {point(150, 99, 33), nan}, {point(199, 99, slab.z_end - 1), inf}});
    bool written = false;
    const engine::SlabSink sink =
        finite_slabs(false, kGrid, "msm map", [&](engine::Slab, const float*) { written = true; });
    try {
      sink(slab, data.data());
      ADD_FAILURE() << "a map with infinities and a NaN was passed on";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("msm map: the value at grid point (x 7, y 5, z 33) is -inf"),
                std::string::npos)
          << e.what();
    }
    EXPECT_FALSE(written);

    std::size_t counted = 0;
    const engine::SlabSink kept =
        finite_slabs(true, kGrid, "msm map", [&](engine::Slab, const float*) { written = true; }, &counted);
    kept(slab, data.data());
    EXPECT_TRUE(written);
    EXPECT_EQ(counted, 3u);
  }
}

TEST(AppSettings, FiniteExtremesPass) {
  const engine::Slab slab{0, 60};
  const std::vector<float> data = slab_with(slab, {{point(0, 0, 0), FLT_MAX},
                                                   {point(1, 0, 0), -FLT_MAX},
                                                   {point(2, 0, 0), FLT_TRUE_MIN},
                                                   {point(3, 0, 0), -0.0f},
                                                   {point(199, 99, 59), std::nextafter(FLT_MAX, 0.0f)}});
  std::size_t counted = 0, written = 0;
  finite_slabs(false, kGrid, "map", [&](engine::Slab, const float*) { ++written; }, &counted)(slab, data.data());
  EXPECT_EQ(written, 1u);
  EXPECT_EQ(counted, 0u);
}

}  // namespace
}  // namespace dcsgrid::app
