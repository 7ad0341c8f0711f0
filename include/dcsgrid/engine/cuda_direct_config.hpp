// Shapes of the CUDA direct-summation kernel: which are compiled, which one runs by default.
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <utility>

namespace dcsgrid::engine {

// Atoms staged in shared memory per tile; the device atom array is padded to a whole number of
// tiles. Every block shape below divides it.
inline constexpr int kDirectTileAtoms = 256;

// One kernel shape. A block is 32 × block_y threads on one plane; each thread owns points_x ×
// points_y grid points: along x a warp width (32) apart, so every store is coalesced, and along y
// block_y rows apart. A block therefore covers (32·points_x) × (block_y·points_y) points, and the
// device grid is padded to that. Of a thread's points, fma_points take 1/r from rsqrt_newton on the
// FMA pipe, the rest from the MUFU unit (rsqrt.approx), to balance the two pipes.
struct DirectConfig {
  int block_y = 2;
  int points_x = 4;
  int points_y = 4;
  int fma_points = 3;
  int newton_steps = 2;

  constexpr int threads() const { return 32 * block_y; }
  constexpr int points() const { return points_x * points_y; }
  constexpr int tile_x() const { return 32 * points_x; }
  constexpr int tile_y() const { return block_y * points_y; }
  constexpr bool operator==(const DirectConfig&) const = default;
  // "y2 x4 y4 f3 n2": block_y, points_x, points_y, fma_points, newton_steps
  std::string name() const {
    std::string s;
    for (const auto& [tag, value] : {std::pair{"y", block_y},
                                     {" x", points_x},
                                     {" y", points_y},
                                     {" f", fma_points},
                                     {" n", newton_steps}})
      s.append(tag).append(std::to_string(value));
    return s;
  }
};

// Every compiled configuration (each pair form gets all of them). bench_cuda_direct --sweep times
// them on the H100; docs/gpu-direct-tuning.md holds the measured table and the reasoning.
inline constexpr std::array<DirectConfig, 13> kDirectConfigs{{
    {2, 4, 4, 3, 2},  // the model's best: issue and MUFU both near 104 cycles per 16 points
    {2, 4, 4, 2, 2},
    {2, 4, 4, 4, 2},
    {2, 4, 4, 2, 3},  // three Newton steps: exact to float rounding
    {2, 4, 4, 0, 2},  // MUFU only: the rsqrt-unit bound (newton_steps unused)
    {4, 4, 4, 3, 2},
    {1, 4, 4, 3, 2},
    {2, 2, 8, 3, 2},  // 64 points wide: less x padding on small grids
    {4, 2, 4, 1, 2},
    {2, 4, 2, 1, 2},
    {2, 8, 2, 3, 2},  // 256 points wide
    {2, 8, 4, 7, 2},  // 32 points a thread: the per-atom overhead spread thinner, more registers
    {2, 8, 4, 6, 2},
}};

// The configuration the CUDA backend runs: the one the measured sweep on an H100 SXM puts first
// (bench_cuda_direct --sweep; table and reasoning in docs/gpu-direct-tuning.md). Until that table
// is filled in, the issue-slot model's best.
inline constexpr DirectConfig kDefaultDirectConfig = kDirectConfigs[0];

constexpr bool valid_direct_config(const DirectConfig& c) {
  return c.block_y >= 1 && kDirectTileAtoms % c.threads() == 0 && c.points_x >= 1 &&
         c.points_y >= 1 && c.fma_points >= 0 && c.fma_points <= c.points() &&
         (c.newton_steps == 2 || c.newton_steps == 3);
}
constexpr bool all_valid(const std::array<DirectConfig, kDirectConfigs.size()>& configs) {
  for (const auto& c : configs)
    if (!valid_direct_config(c)) return false;
  return true;
}
static_assert(all_valid(kDirectConfigs), "a direct kernel configuration is out of range");

}  // namespace dcsgrid::engine
