// The cost models behind --method auto (the method table's, engine/cost_model.hpp): the choice
// follows the estimated times, physics without a multilevel form keeps direct, and settings without
// auto pass through unchanged.
#include <gtest/gtest.h>

#include "dcsgrid/app/method_choice.hpp"

namespace dcsgrid::app {
namespace {

const Hardware kGpu{true, 16};
const Hardware kTwoCpuThreads{false, 2};

GridSpec cube(std::int64_t n) { return grid_from_origin({0, 0, 0}, {n, n, n}, 0.5); }

double direct_seconds(const Hardware& hw, double atoms, const GridSpec& grid) {
  return engine::direct_seconds_estimate({hw, atoms, grid, {}});
}
double msm_seconds(const Hardware& hw, double atoms, const GridSpec& grid, const engine::MsmOptions& msm) {
  return engine::msm_seconds_estimate({hw, atoms, grid, msm});
}

TEST(AppMethodChoice, TheMethodsWithACostModelComputeDirectsPotential) {
  int exact = 0;
  for (const engine::MethodDescription& m : engine::methods()) {
    if (!m.seconds_estimate) {
      EXPECT_EQ(m.expected_error, nullptr) << m.name;
      continue;
    }
    EXPECT_FALSE(m.periodic || m.needs_radii) << m.name << " does not compute direct's potential";
    EXPECT_EQ(m.exact, m.expected_error == nullptr) << m.name << ": an approximation quotes its error";
    exact += m.exact ? 1 : 0;
  }
  EXPECT_EQ(exact, 1);
  EXPECT_EQ(exact_reference(kGpu, 1000, cube(10)).method, engine::Method::direct);
}

TEST(AppMethodChoice, SmallSystemsKeepDirectLargeOnesTakeMsm) {
  // 1HPV-sized on its 0.5 Å grid: direct's 8e9 pairs take ~2 ms on a GPU, less than MSM's set-up.
  const MethodChoice protein = choose_method(kGpu, 3368, cube(133), Physics{}, engine::MsmOptions{}, 0);
  EXPECT_EQ(protein.method, engine::Method::direct);
  EXPECT_LT(protein.seconds_of(engine::Method::direct), protein.seconds_of(engine::Method::msm));
  EXPECT_NE(protein.reason.find("direct"), std::string::npos);

  const MethodChoice box = choose_method(kGpu, 740000, cube(432), Physics{}, engine::MsmOptions{}, 0.25);
  EXPECT_EQ(box.method, engine::Method::msm);
  EXPECT_GT(box.seconds_of(engine::Method::direct), 10.0);  // 740k atoms × 8e7 points at 4.6e12 pairs/s
  EXPECT_LT(box.seconds_of(engine::Method::msm), 0.5);
  EXPECT_NE(box.reason.find("1e-4 to 4e-4"), std::string::npos) << box.reason;
  const nlohmann::json j = box.to_json();
  EXPECT_EQ(j["method"], "msm");
  EXPECT_DOUBLE_EQ(j["seconds_estimates"]["direct"].get<double>(), box.seconds_of(engine::Method::direct));
  EXPECT_DOUBLE_EQ(j["seconds_estimates"]["msm"].get<double>(), box.seconds_of(engine::Method::msm));
}

TEST(AppMethodChoice, TheCrossoverFollowsTheEstimatesAndTheSlack) {
  const GridSpec grid = cube(100);
  for (const Hardware& hw : {kGpu, kTwoCpuThreads}) {
    for (const std::size_t atoms : {100u, 1000u, 10000u, 100000u}) {
      const double direct = direct_seconds(hw, double(atoms), grid);
      const double msm = msm_seconds(hw, double(atoms), grid, engine::MsmOptions{});
      for (const double slack : {0.0, 0.25}) {
        const MethodChoice c = choose_method(hw, atoms, grid, Physics{}, engine::MsmOptions{}, slack);
        EXPECT_EQ(c.method, direct <= msm + slack ? engine::Method::direct : engine::Method::msm)
            << atoms << " atoms, gpu " << hw.gpu << ", slack " << slack;
      }
    }
  }
  // Twice the threads halve direct's CPU estimate; msm's grid set-up runs mostly on one thread.
  EXPECT_DOUBLE_EQ(direct_seconds({false, 4}, 1e4, grid) * 2, direct_seconds(kTwoCpuThreads, 1e4, grid));
  const auto cpu_msm = [&](int threads) {
    return msm_seconds({false, threads}, 1e4, grid, engine::MsmOptions{});
  };
  EXPECT_GT(cpu_msm(4) * 2, cpu_msm(2));
  EXPECT_LT(cpu_msm(4), cpu_msm(2));
  // A coarser MSM grid costs less; a longer short-range cutoff costs more.
  engine::MsmOptions coarse, far;
  coarse.spacing = 2.0;
  far.cutoff = 12.0;
  const double defaults = msm_seconds(kGpu, 1e5, grid, engine::MsmOptions{});
  EXPECT_LT(msm_seconds(kGpu, 1e5, grid, coarse), defaults);
  EXPECT_GT(msm_seconds(kGpu, 1e5, grid, far), defaults);
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
  const auto phrase = [](const engine::MsmOptions& o) {
    return engine::describe(engine::Method::msm).expected_error({kGpu, 1e5, cube(10), o});
  };
  EXPECT_EQ(phrase(msm), "about 1e-4 to 4e-4");
  msm.spacing = 2.0;
  EXPECT_NE(phrase(msm).find("docs/msm.md"), std::string::npos);
}

}  // namespace
}  // namespace dcsgrid::app
