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

// One kernel shape. A block is 32 × block_y threads on one plane. A warp spans lanes_x points
// along x and 32 / lanes_x rows; each thread owns points_x × points_y grid points: along x lanes_x
// apart, so every store fills whole 32-byte sectors, and along y the block's row count apart. A
// block therefore covers (lanes_x·points_x) × ((32 / lanes_x)·block_y·points_y) points, and the
// device grid is padded to that. Narrower warps (lanes_x 16 or 8) change only the padding: a
// 133-point row pads to 256 with 128-point tiles but to 160 with 32-point ones. Of a thread's points, fma_points take 1/r from rsqrt_newton on the
// FMA pipe, the rest from the MUFU unit (rsqrt.approx), to balance the two pipes.
// split_near: atoms closer in z to the block's plane than the min-distance clamp are summed in a
// second, clamped pass, so the main pass needs no clamp (r² ≥ dz² ≥ min_r2 there): one instruction
// less per pair. min_blocks: the __launch_bounds__ occupancy hint (0: none).
struct DirectConfig {
  int block_y = 4;
  int points_x = 4;
  int points_y = 4;
  int fma_points = 3;
  int newton_steps = 2;
  int split_near = 1;
  int min_blocks = 0;
  int lanes_x = 32;

  constexpr int threads() const { return 32 * block_y; }
  constexpr int points() const { return points_x * points_y; }
  constexpr int warp_rows() const { return 32 / lanes_x; }
  constexpr int tile_x() const { return lanes_x * points_x; }
  constexpr int tile_y() const { return warp_rows() * block_y * points_y; }
  constexpr bool operator==(const DirectConfig&) const = default;
  // "y4 x4 y4 f3 n2 s1" (block_y, points_x, points_y, fma_points, newton_steps, split_near), then
  // " b2" for a min_blocks hint and " w8" for a warp 8 points wide.
  std::string name() const {
    std::string s;
    for (const auto& [tag, value] : {std::pair{"y", block_y},
                                     {" x", points_x},
                                     {" y", points_y},
                                     {" f", fma_points},
                                     {" n", newton_steps},
                                     {" s", split_near}})
      s.append(tag).append(std::to_string(value));
    if (min_blocks > 0) s.append(" b").append(std::to_string(min_blocks));
    if (lanes_x != 32) s.append(" w").append(std::to_string(lanes_x));
    return s;
  }
};

// Every compiled configuration (each pair form gets all of them). bench_cuda_direct --sweep times
// them on the H100; docs/gpu-direct-tuning.md holds the measured tables and the reasoning (round 1
// measured the s0 kernel; the first row is its best, kept for comparison).
inline constexpr std::array<DirectConfig, 16> kDirectConfigs{{
    // 16 points: 83 issue slots per atom and warp at f3 (SASS), +6 per further FMA point; MUFU
    // 8 cycles per MUFU point. f4: 89 issue vs 96 MUFU (101 if a MUFU takes 2 issue slots).
    {4, 4, 4, 4, 2, 1, 0},
    {4, 4, 4, 3, 2, 1, 0},
    {4, 4, 4, 5, 2, 1, 0},
    {4, 4, 4, 0, 2, 1, 0},  // MUFU only: where the rsqrt unit alone gets (newton_steps unused)
    {4, 4, 4, 4, 3, 1, 0},  // three Newton steps: float rounding for 3 issue slots more per point
    {4, 4, 4, 3, 2, 0, 0},  // round 1's best shape with the clamp on every pair: split_near's gain
    {4, 4, 4, 4, 2, 1, 5},  // occupancy hint: 5 blocks (20 warps) per SM, ≤ 102 registers
    {2, 4, 4, 4, 2, 1, 0},
    {1, 4, 4, 4, 2, 1, 0},
    {8, 4, 4, 4, 2, 1, 0},  // 128×32 points
    {2, 8, 2, 4, 2, 1, 0},  // 256×4 points
    {4, 4, 6, 6, 2, 1, 0},  // 24 points a thread (pads 256 rows to 264: 3% more points)
    {2, 4, 8, 7, 2, 1, 0},  // 32 points a thread: per-atom work spread thinner, more registers
    {2, 4, 8, 8, 2, 1, 0},
    // The first shape with narrower warps, for grids whose rows would pad badly to 128 points.
    {4, 4, 4, 4, 2, 1, 0, 16},
    {4, 4, 4, 4, 2, 1, 0, 8},
}};

// The per-thread shape the CUDA backend runs: the one the measured sweep on an H100 SXM puts first
// (bench_cuda_direct --sweep; table and reasoning in docs/gpu-direct-tuning.md). The warp width
// along x is chosen per grid (direct_config_for in cuda_direct.cuh).
inline constexpr DirectConfig kDefaultDirectConfig = kDirectConfigs[0];

constexpr bool valid_direct_config(const DirectConfig& c) {
  return c.block_y >= 1 && kDirectTileAtoms % c.threads() == 0 && c.points_x >= 1 &&
         c.points_y >= 1 && c.fma_points >= 0 && c.fma_points <= c.points() &&
         (c.newton_steps == 2 || c.newton_steps == 3) && (c.split_near == 0 || c.split_near == 1) &&
         c.min_blocks >= 0 && (c.lanes_x == 8 || c.lanes_x == 16 || c.lanes_x == 32);
}
constexpr bool all_valid(const std::array<DirectConfig, kDirectConfigs.size()>& configs) {
  for (const auto& c : configs)
    if (!valid_direct_config(c)) return false;
  return true;
}
static_assert(all_valid(kDirectConfigs), "a direct kernel configuration is out of range");

}  // namespace dcsgrid::engine
