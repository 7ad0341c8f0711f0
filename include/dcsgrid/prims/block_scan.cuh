// Block-level prefix sums for use inside kernels, built on the warp scan (CUB-style layering:
// warp → block → device).
//
//   using Scan = BlockScan<256, 16, int>;
//   __shared__ Scan::TempStorage scan_storage;
//   int items[16];  ...            // this thread's items
//   int block_total;
//   Scan(scan_storage).exclusive_sum(items, block_total);
//
// Every thread of the (1D) block must call it. Call __syncthreads() before reusing the same
// TempStorage for another scan.
#pragma once
#include <cuda_runtime.h>

#include "dcsgrid/prims/warp_scan.cuh"

namespace dcsgrid::prims {

// BLOCK_THREADS threads (a multiple of 32, at most 1024) with ITEMS_PER_THREAD items each.
// Which tile position each item holds: items come in groups of VEC consecutive elements; lane l
// of warp w holds groups r = 0 .. ITEMS_PER_THREAD/VEC − 1 at tile positions
//   (w · GROUPS · 32 + r · 32 + l) · VEC + [0, VEC).
// VEC = ITEMS_PER_THREAD (the default) is the blocked arrangement: each thread's items are
// consecutive and the threads follow each other. VEC = 4 matches coalesced int4/float4 loads in
// which a warp reads 32 vectors side by side per instruction.
template <int BLOCK_THREADS, int ITEMS_PER_THREAD, typename T, int VEC = ITEMS_PER_THREAD>
class BlockScan {
 public:
  static constexpr int warps = BLOCK_THREADS / warp_threads;
  static constexpr int groups = ITEMS_PER_THREAD / VEC;
  static_assert(BLOCK_THREADS % warp_threads == 0 && warps <= warp_threads,
                "BLOCK_THREADS must be a multiple of 32, at most 1024");
  static_assert(ITEMS_PER_THREAD % VEC == 0, "ITEMS_PER_THREAD must be a multiple of VEC");

  struct TempStorage {
    T warp_totals[warps];
  };

  __device__ explicit BlockScan(TempStorage& storage) : storage_(storage) {}

  // items[i] becomes the sum of all items before it in the tile; block_total (every thread)
  // the sum of the whole tile.
  __device__ void exclusive_sum(T (&items)[ITEMS_PER_THREAD], T& block_total) {
    scan<false>(items, block_total);
  }
  // items[i] becomes the sum of all items up to and including it.
  __device__ void inclusive_sum(T (&items)[ITEMS_PER_THREAD], T& block_total) {
    scan<true>(items, block_total);
  }

 private:
  // Each group is first scanned in place (inclusive), then only its offset is added. The exclusive
  // form shifts each group's inclusive sums by one place at the end rather than carrying the
  // original items to the end: the same registers as the inclusive form (ptxas had given the
  // exclusive scan kernels 34 registers against 32, which cost two of eight blocks per SM).
  template <bool INCLUSIVE>
  __device__ void scan(T (&items)[ITEMS_PER_THREAD], T& block_total) {
    // Sum before each of this thread's groups, within the warp: groups are ordered by row r,
    // then lane, so a group follows every group of earlier rows and earlier lanes of its row.
    T group_prefix[groups];
    T warp_total = T(0);
#pragma unroll
    for (int r = 0; r < groups; ++r) {
#pragma unroll
      for (int j = 1; j < VEC; ++j) items[r * VEC + j] += items[r * VEC + j - 1];
      T row_total;
      group_prefix[r] = warp_total + warp_exclusive_sum(items[r * VEC + VEC - 1], row_total);
      warp_total += row_total;
    }

    const unsigned warp = threadIdx.x / warp_threads;
    const unsigned lane = lane_id();
    if (lane == 0) storage_.warp_totals[warp] = warp_total;
    __syncthreads();
    // Each warp scans the warp totals itself: no second barrier.
    const T total_of_lane = lane < unsigned(warps) ? storage_.warp_totals[lane] : T(0);
    const T warps_before = warp_exclusive_sum(total_of_lane, block_total);
    const T warp_prefix = __shfl_sync(full_warp_mask, warps_before, warp);

#pragma unroll
    for (int r = 0; r < groups; ++r) {
      const T offset = warp_prefix + group_prefix[r];
#pragma unroll
      for (int j = 0; j < VEC; ++j) items[r * VEC + j] += offset;
    }
    if constexpr (!INCLUSIVE) {
      // Every item takes its predecessor's inclusive sum. A group's first item takes the last of
      // the group before it: lane − 1's in the same row, or for lane 0 lane 31's in the row before
      // (the warp's start for row 0). Rows go last to first so each reads unshifted values.
#pragma unroll
      for (int r = groups - 1; r >= 0; --r) {
        const T row_before = r > 0 ? items[(r - 1) * VEC + VEC - 1] : warp_prefix;
        const T sent = lane == warp_threads - 1 ? row_before : items[r * VEC + VEC - 1];
        const T before =
            __shfl_sync(full_warp_mask, sent, (lane + warp_threads - 1) % warp_threads);
#pragma unroll
        for (int j = VEC - 1; j > 0; --j) items[r * VEC + j] = items[r * VEC + j - 1];
        items[r * VEC] = before;
      }
    }
  }

  TempStorage& storage_;
};

}  // namespace dcsgrid::prims
