// core/gpu_ids.hpp: narrowing CUDA_VISIBLE_DEVICES to --gpus, and the user's numbers kept. The
// narrowing is process-wide and once only, so each case runs in a child process of its own
// (gtest's death-test fork) and reports through its exit code.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/gpu_ids.hpp"
#include "helpers.hpp"

namespace dcsgrid::test {
namespace {

// Expects check() to hold in a child process of its own (which exits 0 when it does, 1 otherwise).
template <typename Check>
void expect_in_a_child(Check&& check) {
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(std::exit(check() ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

std::string visible() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v ? v : "(unset)";
}

TEST(GpuIds, NarrowsToTheListedGpusInTheirOrderAndKeepsTheirNumbers) {
  expect_in_a_child([] {
    unsetenv("CUDA_VISIBLE_DEVICES");
    const std::vector<int> ids = narrow_visible_gpus({3, 1});
    return ids == std::vector<int>{0, 1} && visible() == "3,1" && visible_gpus_narrowed() &&
           user_gpu_id(0) == 3 && user_gpu_id(1) == 1 && user_gpu_id(2) == 2 &&
           narrow_visible_gpus({3, 1}) == std::vector<int>{0, 1} && visible() == "3,1";
  });
}

TEST(GpuIds, AllGpusChangeNothing) {
  expect_in_a_child([] {
    setenv("CUDA_VISIBLE_DEVICES", "1,0", 1);
    return narrow_visible_gpus({}).empty() && visible() == "1,0" && !visible_gpus_narrowed() &&
           user_gpu_id(1) == 1;
  });
}

// With CUDA_VISIBLE_DEVICES already set (a scheduler's list, UUIDs included), an id is a position
// in that list, as CUDA numbers what it sees.
TEST(GpuIds, IdsIndexAListAlreadySet) {
  expect_in_a_child([] {
    setenv("CUDA_VISIBLE_DEVICES", "GPU-aa,GPU-bb,GPU-cc", 1);
    return narrow_visible_gpus({2, 0}) == std::vector<int>{0, 1} && visible() == "GPU-cc,GPU-aa" &&
           user_gpu_id(0) == 2;
  });
}

TEST(GpuIds, RefusesRepeatsIdsBeyondTheListAndASecondDifferentList) {
  expect_in_a_child([] {
    setenv("CUDA_VISIBLE_DEVICES", "4,5", 1);
    const std::string twice = error_message([] { narrow_visible_gpus({1, 1}); });
    const std::string beyond = error_message([] { narrow_visible_gpus({0, 2}); });
    const bool untouched = visible() == "4,5" && !visible_gpus_narrowed();
    narrow_visible_gpus({1});
    const std::string changed = error_message([] { narrow_visible_gpus({0}); });
    return twice == "--gpus: GPU 1 is listed twice" &&
           beyond == "--gpus: there is no GPU 2 (CUDA_VISIBLE_DEVICES='4,5' lists 2, numbered from 0)" &&
           untouched && visible() == "5" && !changed.empty();
  });
}

}  // namespace
}  // namespace dcsgrid::test
