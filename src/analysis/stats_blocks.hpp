// The order in which map_stats sums (stats.cpp), shared with its device version (device_stats.cu)
// so that both give the same statistics bit for bit: the map in blocks of kStatsBlock values, each
// block in kStatsLanes lanes (lane l takes the block's values l, l + 8, l + 16, ... up to its last
// whole group of 8, in order), the lanes combined in lane order, then the block's last values one
// by one, then the blocks in block order. Nothing here may be contracted into a fused multiply-add
// (stats.cpp is compiled with -ffp-contract=off; the device uses __dadd_rn and __dmul_rn).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/prims/histogram.hpp"

namespace dcsgrid::analysis::detail {

inline constexpr std::size_t kStatsBlock = std::size_t(1) << 16;
inline constexpr std::size_t kStatsLanes = 8;

// One lane's figures over its values.
struct StatsLane {
  double sum = 0;  // of its finite values (non-finite ones add +0)
  float lo = INFINITY, hi = -INFINITY;  // of its finite values: the first of equal ones
  std::uint32_t count = 0, nan = 0, neg_inf = 0;
};

// One block's figures.
struct StatsPartial {
  std::size_t count = 0, nan = 0, neg_inf = 0, pos_inf = 0;
  double min = INFINITY, max = -INFINITY, sum = 0;
};

// The values in block [begin, end)'s lanes, and where its last values (added one by one) start.
inline std::size_t lane_values(std::size_t begin, std::size_t end) {
  return (end - begin) / kStatsLanes * kStatsLanes;
}

// A block's figures from its lanes (lane_values of them) and its last values, tail[0, tail_count).
StatsPartial combine_lanes(std::span<const StatsLane, kStatsLanes> lanes, std::size_t in_lanes,
                           const float* tail, std::size_t tail_count);
// A block's Σ (x − mean)² over its finite values from the lanes' sums and its last values.
double combine_square_lanes(std::span<const double, kStatsLanes> lanes, const float* tail,
                            std::size_t tail_count, double mean);

// The statistics from the blocks' figures: squares(mean) gives each block's Σ (x − mean)² (asked
// only when there are finite values); histogram(lo, hi, bins) the histogram_values_cpu of the map.
MapStats stats_from_blocks(std::span<const StatsPartial> blocks, const HistogramOptions& options,
                           const std::function<std::vector<double>(double mean)>& squares,
                           const std::function<prims::ValueHistogram(double lo, double hi, std::uint32_t bins)>& histogram);

}  // namespace dcsgrid::analysis::detail
