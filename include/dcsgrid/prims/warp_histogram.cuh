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

// Whether this key is worth matching: enough lane pairs (l, l^1) hold the same key that the
// plain atomics would be serialised. Two shuffles' cost, versus __match_any_sync's.
__device__ __forceinline__ bool warp_keys_look_skewed(std::uint32_t key) {
  const unsigned agree =
      __ballot_sync(full_warp_mask, key == __shfl_xor_sync(full_warp_mask, key, 1));
  return __popc(agree) >= 4;
}

template <HistogramAggregation A>
__device__ __forceinline__ void warp_count(std::uint32_t* counts, std::uint32_t key,
                                           std::uint32_t limit) {
  if (A == HistogramAggregation::always ||
      (A == HistogramAggregation::adaptive && warp_keys_look_skewed(key))) {
    warp_count_matched(counts, key, limit);
  } else if (key < limit) {
    atomicAdd(&counts[key], 1u);
  }
}

}  // namespace dcsgrid::prims
