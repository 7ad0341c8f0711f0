// Warp-level prefix sums with register shuffles: the bottom layer of the scans (warp → block →
// device). Every function here must be called by all 32 lanes of the warp, converged.
#pragma once
#include <cuda_runtime.h>

namespace dcsgrid::prims {

inline constexpr int warp_threads = 32;
inline constexpr unsigned full_warp_mask = 0xffffffffu;

// This thread's lane in its warp (valid for any block shape).
__device__ __forceinline__ unsigned lane_id() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// x0 + ... + x_lane over the lanes of the warp (Hillis–Steele, 5 shuffle steps).
template <typename T>
__device__ __forceinline__ T warp_inclusive_sum(T x) {
  const unsigned lane = lane_id();
#pragma unroll
  for (unsigned delta = 1; delta < warp_threads; delta *= 2) {
    const T y = __shfl_up_sync(full_warp_mask, x, delta);
    if (lane >= delta) x += y;
  }
  return x;
}

// x0 + ... + x_(lane-1) (0 in lane 0); warp_total receives the sum over all 32 lanes.
template <typename T>
__device__ __forceinline__ T warp_exclusive_sum(T x, T& warp_total) {
  const T inclusive = warp_inclusive_sum(x);
  warp_total = __shfl_sync(full_warp_mask, inclusive, warp_threads - 1);
  const T before = __shfl_up_sync(full_warp_mask, inclusive, 1);
  return lane_id() == 0 ? T(0) : before;
}

}  // namespace dcsgrid::prims
