// Warp-level counting of keys into a histogram (shared or global memory), combining lanes that
// hold equal keys so that skewed keys (many lanes on one bin) cost one atomic, not 32.
// Must be called by all 32 lanes of the warp, converged; a lane with nothing to count passes a
// key >= limit.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "dcsgrid/prims/histogram.hpp"
#include "dcsgrid/prims/warp_scan.cuh"

namespace dcsgrid::prims {

// counts[key] += 1 for each lane whose key < limit, one atomicAdd per distinct key of the warp.
__device__ __forceinline__ void warp_count_matched(std::uint32_t* counts, std::uint32_t key,
                                                   std::uint32_t limit) {
  const unsigned peers = __match_any_sync(full_warp_mask, key);
  const bool leader = (__ffs(peers) - 1) == int(lane_id());
  if (leader && key < limit) atomicAdd(&counts[key], std::uint32_t(__popc(peers)));
}

// Whether enough lane pairs (l, l^1) hold the same countable key that plain atomics would be
// serialised: two instructions, against __match_any_sync's cost.
__device__ __forceinline__ bool warp_keys_look_skewed(std::uint32_t key, std::uint32_t limit) {
  // The shuffle first and by every lane: behind a short-circuit it would leave out the lanes
  // with nothing to count, and a full-mask shuffle waits for them for ever.
  const std::uint32_t neighbour = __shfl_xor_sync(full_warp_mask, key, 1);
  const bool agree = key < limit && key == neighbour;
  return __popc(__ballot_sync(full_warp_mask, agree)) >= 4;
}

// When lane 0's key is held by at least this many lanes, lane 0 counts them all with one atomic.
inline constexpr int dominant_key_lanes = 8;

// adaptive: (1) a key that dominates the warp (one hot bin) is counted by lane 0 with one atomic,
// for the price of a shuffle and a vote; (2) among the other lanes, __match_any_sync only when
// neighbouring lanes agree; (3) otherwise one plain atomic per key.
// No lane branches away before the warp-wide intrinsics: the lane-0 atomic comes last, so every
// *_sync call is reached by the whole warp together.
template <HistogramAggregation A>
__device__ __forceinline__ void warp_count(std::uint32_t* counts, std::uint32_t key,
                                           std::uint32_t limit) {
  if constexpr (A == HistogramAggregation::always) {
    warp_count_matched(counts, key, limit);
  } else if constexpr (A == HistogramAggregation::adaptive) {
    const std::uint32_t lane0_key = __shfl_sync(full_warp_mask, key, 0);
    const unsigned same = __ballot_sync(full_warp_mask, key == lane0_key);
    const bool peel = __popc(same) >= dominant_key_lanes;  // warp-uniform
    const std::uint32_t rest = peel && key == lane0_key ? limit : key;
    if (warp_keys_look_skewed(rest, limit))  // warp-uniform
      warp_count_matched(counts, rest, limit);
    else if (rest < limit)
      atomicAdd(&counts[rest], 1u);
    if (peel && lane_id() == 0 && lane0_key < limit)
      atomicAdd(&counts[lane0_key], std::uint32_t(__popc(same)));
  } else if (key < limit) {
    atomicAdd(&counts[key], 1u);
  }
}

}  // namespace dcsgrid::prims
