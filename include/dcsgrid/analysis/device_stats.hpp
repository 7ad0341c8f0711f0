// Statistics of a map that is on a GPU (engine::DeviceMap), computed there: batch's per-frame
// statistics for frames whose maps pass through the device, so that no core sums them. The
// result is map_stats' (stats.hpp) bit for bit: the same blocks and lanes, summed in the same
// order (src/analysis/stats_blocks.hpp), and the histogram binned in double as on the CPU.
#pragma once
#include <cstddef>
#include <memory>

#include "dcsgrid/analysis/stats.hpp"

namespace dcsgrid::engine {
class DeviceMap;
}

namespace dcsgrid::analysis {

// One per thread: it keeps a stream and scratch memory on the device of the maps it is given (made
// again when a map comes from another device). Without CUDA, compute() throws Error.
class DeviceMapStats {
 public:
  // Maps of up to this many points: the device counts in 32 bits.
  static constexpr std::size_t kMaxPoints = (std::size_t(1) << 32) - 1;

  DeviceMapStats();
  ~DeviceMapStats();
  DeviceMapStats(const DeviceMapStats&) = delete;
  DeviceMapStats& operator=(const DeviceMapStats&) = delete;

  // map_stats of the map's first `points` values (at most map.points() and kMaxPoints), with its
  // device current; waits for the results. The map must stay unchanged until it returns.
  MapStats compute(const engine::DeviceMap& map, std::size_t points, const HistogramOptions& options = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dcsgrid::analysis
