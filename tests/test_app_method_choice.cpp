// The cost model behind --method auto: the choice follows the estimated times, physics without a
// multilevel form keeps direct, and settings without auto pass through unchanged.
#include <gtest/gtest.h>

#include "dcsgrid/app/method_choice.hpp"

namespace dcsgrid::app {
namespace {

const Hardware kGpu{true, 16};
const Hardware kTwoCpuThreads{false, 2};

GridSpec cube(std::int64_t n) { return grid_from_origin({0, 0, 0}, {n, n, n}, 0.5); }

TEST(AppMethodChoice, SmallSystemsKeepDirectLargeOnesTakeMsm) {
  // 1HPV-sized on its 0.5 Å grid: direct's 8e9 pairs take ~2 ms on a GPU, less than MSM's set-up.
  const MethodChoice protein = choose_method(kGpu, 3368, cube(133), Physics{}, engine::MsmOptions{}, 0);
  EXPECT_EQ(protein.method, engine::Method::direct);
  EXPECT_LT(protein.direct_seconds, protein.msm_seconds);
  EXPECT_NE(protein.reason.find("direct"), std::string::npos);

  const MethodChoice box = choose_method(kGpu, 740000, cube(432), Physics{}, engine::MsmOptions{}, 0.25);
  EXPECT_EQ(box.method, engine::Method::msm);
  EXPECT_GT(box.direct_seconds, 10.0);  // 740k atoms × 8e7 points at 4.6e12 pairs/s
  EXPECT_LT(box.msm_seconds, 0.5);
  EXPECT_NE(box.reason.find("1e-4 to 4e-4"), std::string::npos) << box.reason;
}

TEST(AppMethodChoice, TheCrossoverFollowsTheEstimatesAndTheSlack) {
  const GridSpec grid = cube(100);
  const double points = double(grid.point_count());
  for (const Hardware& hw : {kGpu, kTwoCpuThreads}) {
    for (const std::size_t atoms : {100u, 1000u, 10000u, 100000u}) {
      const double direct = direct_seconds_estimate(hw, double(atoms), points);
      const double msm = msm_seconds_estimate(hw, double(atoms), grid, engine::MsmOptions{});
      for (const double slack : {0.0, 0.25}) {
        const MethodChoice c = choose_method(hw, atoms, grid, Physics{}, engine::MsmOptions{}, slack);
        EXPECT_EQ(c.method, direct <= msm + slack ? engine::Method::direct : engine::Method::msm)
            << atoms << " atoms, gpu " << hw.gpu << ", slack " << slack;
      }
    }
  }
  // Twice the threads halve direct's CPU estimate; msm's grid set-up runs mostly on one thread.
  EXPECT_DOUBLE_EQ(direct_seconds_estimate({false, 4}, 1e4, points) * 2,
                   direct_seconds_estimate(kTwoCpuThreads, 1e4, points));
  const auto cpu_msm = [&](int threads) {
    return msm_seconds_estimate({false, threads}, 1e4, grid, engine::MsmOptions{});
  };
  EXPECT_GT(cpu_msm(4) * 2, cpu_msm(2));
  EXPECT_LT(cpu_msm(4), cpu_msm(2));
  // A coarser MSM grid costs less; a longer short-range cutoff costs more.
  engine::MsmOptions coarse, far;
  coarse.spacing = 2.0;
  far.cutoff = 12.0;
  const double defaults = msm_seconds_estimate(kGpu, 1e5, grid, engine::MsmOptions{});
  EXPECT_LT(msm_seconds_estimate(kGpu, 1e5, grid, coarse), defaults);
  EXPECT_GT(msm_seconds_estimate(kGpu, 1e5, grid, far), defaults);
}

TEST(AppMethodChoice, PhysicsWithoutAMultilevelFormKeepsDirect) {
  Physics screened;
  screened.ionic_strength = 0.15;
  Physics ddd;
  ddd.distance_dependent = true;
  for (const Physics& p : {screened, ddd}) {
    const MethodChoice c = choose_method(kGpu, 4000000, cube(693), p, engine::MsmOptions{}, 0);
    EXPECT_EQ(c.method, engine::Method::direct);
    EXPECT_NE(c.reason.find("no multilevel form"), std::string::npos) << c.reason;
  }
}

TEST(AppMethodChoice, SettingsWithoutAutoPassThrough) {
  ComputeSettings s;
  set_methods(s, "direct,cutoff");
  EXPECT_FALSE(s.auto_method);
  MethodChoice choice;
  choice.reason = "untouched";
  const ComputeSettings same = with_chosen_method(s, kGpu, 740000, cube(432), 0, &choice);
  EXPECT_EQ(same.methods, s.methods);
  EXPECT_EQ(choice.reason, "untouched");

  set_methods(s, "auto");
  EXPECT_TRUE(s.auto_method);
  validate(s);
  const ComputeSettings chosen = with_chosen_method(s, kGpu, 740000, cube(432), 0, &choice);
  EXPECT_FALSE(chosen.auto_method);
  EXPECT_EQ(chosen.methods, std::vector{engine::Method::msm});
  EXPECT_EQ(choice.method, engine::Method::msm);
}

TEST(AppMethodChoice, ExpectedErrorIsQuotedOnlyForMeasuredSettings) {
  engine::MsmOptions msm;
  EXPECT_EQ(expected_msm_error(msm), "about 1e-4 to 4e-4");
  msm.spacing = 2.0;
  EXPECT_NE(expected_msm_error(msm).find("docs/msm.md"), std::string::npos);
}

}  // namespace
}  // namespace dcsgrid::app
