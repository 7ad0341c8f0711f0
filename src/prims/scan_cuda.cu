// Single-pass CUDA scan with decoupled look-back (Merrill & Garland 2016). Each block takes the
// next tile from an atomic counter (so a tile only ever waits on tiles that blocks already
// running own: no deadlock whatever the scheduling), scans it with BlockScan, publishes its
// aggregate, then warp 0 sums predecessors' published values 32 tiles at a time until it meets
// an inclusive prefix.
#include <cuda/atomic>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/prims/block_scan.cuh"
#include "dcsgrid/prims/scan.hpp"

namespace dcsgrid::prims {
namespace {

constexpr int scan_threads = 256;
constexpr int scan_vec = 4;                       // items per vector load (int4/uint4/float4)
// Four vectors in flight a thread. The integer kernels must stay within 32 registers for 8 blocks
// of 256 a SM: BlockScan's exclusive form shifts inclusive sums for that reason (it had carried
// the items and needed 34 registers: 6 blocks, ~10% slower on an H100). Forcing 8 blocks with
// __launch_bounds__ spilled; three vectors a thread (3072-item tiles) was slower.
// Input and output are touched once, so they are loaded and stored as streaming (.cs: evict first)
// data. Measured on an H100, 2^28 int32: exclusive 1.011 -> 0.899 ms, inclusive 0.956 -> 0.888 ms
// (CUB 0.873 and 0.875 in the same run); __ldg loads alone gave 0.982 ms, 128 or 512 threads a
// block and a look-back without __nanosleep no gain.
constexpr int scan_items = 4 * scan_vec;
constexpr std::size_t tile_items = std::size_t(scan_threads) * scan_items;  // 4096
// Workspace: the tile counter, padded, then one status word per tile.
constexpr std::size_t status_offset = 16;

template <typename T> struct Vec4Of;
template <> struct Vec4Of<std::int32_t> { using type = int4; };
template <> struct Vec4Of<std::uint32_t> { using type = uint4; };
template <> struct Vec4Of<float> { using type = float4; };

// A tile's status word: flag in the high 32 bits, the value's bits in the low 32, written and
// read as one 64-bit word so a reader never sees a flag with a stale value.
enum : std::uint32_t { tile_invalid = 0, tile_aggregate = 1, tile_inclusive = 2 };
using StatusWord = unsigned long long;
using StatusRef = ::cuda::atomic_ref<StatusWord, ::cuda::thread_scope_device>;

template <typename T>
__device__ std::uint32_t to_bits(T v) {
  if constexpr (std::is_same_v<T, float>) return __float_as_uint(v);
  else return std::uint32_t(v);
}
template <typename T>
__device__ T from_bits(std::uint32_t bits) {
  if constexpr (std::is_same_v<T, float>) return __uint_as_float(bits);
  else return T(bits);
}

template <typename T>
__device__ void publish(StatusWord* status, std::uint32_t flag, T value) {
  StatusRef(*status).store((StatusWord(flag) << 32) | to_bits(value), ::cuda::memory_order_relaxed);
}

// Sum of all tiles before `tile` (> 0), in every lane of the calling warp. Lane l looks at tile
// (last − l); the window moves back 32 tiles until some lane sees an inclusive prefix, and only
// the lanes up to the nearest such tile are summed.
template <typename T>
__device__ T look_back(StatusWord* status, std::uint32_t tile) {
  const unsigned lane = lane_id();
  T before = T(0);
  for (std::int64_t last = std::int64_t(tile) - 1;; last -= warp_threads) {
    const std::int64_t p = last - lane;
    StatusWord word = StatusWord(tile_inclusive) << 32;  // "tiles" before 0: inclusive zero
    if (p >= 0) {
      word = StatusRef(status[p]).load(::cuda::memory_order_relaxed);
      while (std::uint32_t(word >> 32) == tile_invalid) {
        __nanosleep(32);
        word = StatusRef(status[p]).load(::cuda::memory_order_relaxed);
      }
    }
    const unsigned inclusive_lanes =
        __ballot_sync(full_warp_mask, std::uint32_t(word >> 32) == tile_inclusive);
    const unsigned stop = inclusive_lanes ? unsigned(__ffs(inclusive_lanes) - 1) : warp_threads - 1;
    const T value = lane <= stop ? from_bits<T>(std::uint32_t(word)) : T(0);
    T window_sum;
    warp_exclusive_sum(value, window_sum);
    before += window_sum;
    if (inclusive_lanes) return before;
  }
}

template <typename T, bool INCLUSIVE>
__global__ void __launch_bounds__(scan_threads)
    scan_kernel(const T* in, T* out, std::size_t n, bool aligned, std::uint32_t* tile_counter,
                StatusWord* status) {
  using Scan = BlockScan<scan_threads, scan_items, T, scan_vec>;
  using Vec = typename Vec4Of<T>::type;
  __shared__ typename Scan::TempStorage scan_storage;
  __shared__ std::uint32_t shared_tile;
  __shared__ T shared_prefix;

  if (threadIdx.x == 0) shared_tile = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const std::uint32_t tile = shared_tile;
  const std::size_t tile_begin = std::size_t(tile) * tile_items;
  const bool vector_io = aligned && tile_begin + tile_items <= n;

  // Vector r of this thread starts at first + r · 32 · VEC (BlockScan's arrangement with VEC).
  const unsigned warp = threadIdx.x / warp_threads;
  const std::size_t first =
      tile_begin + (std::size_t(warp) * Scan::groups * warp_threads + lane_id()) * scan_vec;
  const auto vector_at = [&](int r) { return first + std::size_t(r) * warp_threads * scan_vec; };

  T items[scan_items];
#pragma unroll
  for (int r = 0; r < Scan::groups; ++r) {
    const std::size_t at = vector_at(r);
    if (vector_io) {
      const Vec v = __ldcs(reinterpret_cast<const Vec*>(in + at));
      items[r * scan_vec + 0] = v.x;
      items[r * scan_vec + 1] = v.y;
      items[r * scan_vec + 2] = v.z;
      items[r * scan_vec + 3] = v.w;
    } else {
#pragma unroll
      for (int j = 0; j < scan_vec; ++j) items[r * scan_vec + j] = at + j < n ? in[at + j] : T(0);
    }
  }

  T tile_total;
  if constexpr (INCLUSIVE)
    Scan(scan_storage).inclusive_sum(items, tile_total);
  else
    Scan(scan_storage).exclusive_sum(items, tile_total);

  T prefix = T(0);
  if (tile == 0) {
    if (threadIdx.x == 0) publish(&status[0], tile_inclusive, tile_total);
  } else {
    if (threadIdx.x == 0) publish(&status[tile], tile_aggregate, tile_total);
    if (warp == 0) {
      const T before = look_back<T>(status, tile);
      if (threadIdx.x == 0) {
        publish(&status[tile], tile_inclusive, before + tile_total);
        shared_prefix = before;
      }
    }
    __syncthreads();
    prefix = shared_prefix;
  }

#pragma unroll
  for (int r = 0; r < Scan::groups; ++r) {
    const std::size_t at = vector_at(r);
    T* item = items + r * scan_vec;
    if (vector_io) {
      __stcs(reinterpret_cast<Vec*>(out + at),
             Vec{prefix + item[0], prefix + item[1], prefix + item[2], prefix + item[3]});
    } else {
#pragma unroll
      for (int j = 0; j < scan_vec; ++j)
        if (at + j < n) out[at + j] = prefix + item[j];
    }
  }
}

std::size_t tile_count(std::size_t n) { return (n + tile_items - 1) / tile_items; }

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

std::size_t scan_cuda_workspace_bytes(std::size_t n) {
  return status_offset + tile_count(n) * sizeof(StatusWord);
}

template <typename T>
void scan_cuda(const T* d_in, T* d_out, std::size_t n, ScanKind kind, void* d_workspace,
               cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t tiles = tile_count(n);
  if (tiles > std::size_t(INT_MAX))
    throw Error("scan_cuda: " + std::to_string(n) + " items is more than one launch can scan");
  if (d_workspace == nullptr || reinterpret_cast<std::uintptr_t>(d_workspace) % 8 != 0)
    throw Error("scan_cuda: the workspace must be device memory aligned to 8 bytes");
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(d_workspace, 0, scan_cuda_workspace_bytes(n), stream));
  auto* counter = static_cast<std::uint32_t*>(d_workspace);
  auto* status = reinterpret_cast<StatusWord*>(static_cast<char*>(d_workspace) + status_offset);
  const bool aligned = aligned16(d_in) && aligned16(d_out);
  const auto kernel = kind == ScanKind::inclusive ? scan_kernel<T, true> : scan_kernel<T, false>;
  kernel<<<unsigned(tiles), scan_threads, 0, stream>>>(d_in, d_out, n, aligned, counter, status);
  DCSGRID_CHECK_LAUNCH();
}

template void scan_cuda<std::int32_t>(const std::int32_t*, std::int32_t*, std::size_t, ScanKind,
                                      void*, cudaStream_t);
template void scan_cuda<std::uint32_t>(const std::uint32_t*, std::uint32_t*, std::size_t,
                                       ScanKind, void*, cudaStream_t);
template void scan_cuda<float>(const float*, float*, std::size_t, ScanKind, void*, cudaStream_t);

}  // namespace dcsgrid::prims
