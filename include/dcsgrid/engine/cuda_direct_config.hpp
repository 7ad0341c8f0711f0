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
// 133-point row pads to 256 with 128-point tiles but to 160 with 32-point ones. Of a thread's
// points, fma_points take 1/r from rsqrt_newton on the FMA pipe, the rest from the MUFU unit
// (rsqrt.approx), to balance the two pipes.
// split_near: atoms closer in z to the block's plane than the min-distance clamp are summed in a
// second, clamped pass, so the main pass needs no clamp (r² ≥ dz² ≥ min_r2 there): one instruction
// less per pair. min_blocks: the __launch_bounds__ occupancy hint (0: none).
//
// The defaults are the shape the backend runs, "y4 x4 y4 f4 n2 s1": the fastest of the measured
// sweep on an H100 SXM (bench_cuda_direct --sweep, 4.63e12 pairs/s; tables and reasoning in
// docs/gpu-direct-tuning.md).
struct DirectConfig {
  int block_y = 4;
  int points_x = 4;
  int points_y = 4;
  int fma_points = 4;
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
  // "y4 x4 y4 f4 n2 s1" (block_y, points_x, points_y, fma_points, newton_steps, split_near), then
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

// The per-thread shape the CUDA backend runs. The warp width along x is chosen per grid
// (direct_config_for in cuda_direct.cuh) among the library's configurations below.
inline constexpr DirectConfig kDefaultDirectConfig{};

constexpr DirectConfig with_lanes_x(DirectConfig c, int lanes_x) {
  c.lanes_x = lanes_x;
  return c;
}

// The configurations compiled into the library (for each pair form): the default shape with warps
// 32, 16 and 8 points wide, all that the backend runs. The tuning sweep's variants are compiled
// only into bench_cuda_direct (its --sweep mode). A table is a type with a constexpr `configs`
// array, so kernels can be instantiated for any table (launch_direct_form).
struct LibraryDirectConfigs {
  static constexpr std::array<DirectConfig, 3> configs{
      kDefaultDirectConfig, with_lanes_x(kDefaultDirectConfig, 16),
      with_lanes_x(kDefaultDirectConfig, 8)};
};

constexpr bool valid_direct_config(const DirectConfig& c) {
  return c.block_y >= 1 && kDirectTileAtoms % c.threads() == 0 && c.points_x >= 1 &&
         c.points_y >= 1 && c.fma_points >= 0 && c.fma_points <= c.points() &&
         (c.newton_steps == 2 || c.newton_steps == 3) && (c.split_near == 0 || c.split_near == 1) &&
         c.min_blocks >= 0 && (c.lanes_x == 8 || c.lanes_x == 16 || c.lanes_x == 32);
}
template <std::size_t N>
constexpr bool all_valid(const std::array<DirectConfig, N>& configs) {
  for (const auto& c : configs)
    if (!valid_direct_config(c)) return false;
  return true;
}
static_assert(all_valid(LibraryDirectConfigs::configs), "a direct kernel configuration is out of range");

}  // namespace dcsgrid::engine
