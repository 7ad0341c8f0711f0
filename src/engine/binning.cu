// Binning of atoms on the device (binning.hpp): keys, counts with the in-house histogram, the
// capacity choice, and the fixed-capacity and dynamic (prefix-sum) scatters.
#include <cooperative_groups.h>

#include <algorithm>
#include <bit>
#include <cub/device/device_radix_sort.cuh>
#include <vector>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/engine/binning.hpp"
#include "dcsgrid/prims/histogram.hpp"
#include "dcsgrid/prims/scan.hpp"

namespace dcsgrid::engine {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
// Occupancy histogram size: enough for any realistic capacity (counts at or above it make the
// capacity choice copy every count to the host).
constexpr std::uint32_t kOccupancyBins = 1024;

unsigned blocks_for(std::size_t n) {
  return unsigned(std::max<std::size_t>(1, (n + kThreads - 1) / kThreads));
}

// Grows a buffer to at least n elements (contents lost when it grows).
template <typename T>
void reserve(cuda::DeviceBuffer<T>& buf, std::size_t n) {
  if (buf.size() < n) buf.resize(n);
}

// The atoms as kernels read them, and the frame they are moved into.
struct AtomView {
  const float *x, *y, *z, *q;
  std::size_t n;
  float fx, fy, fz;  // frame origin
  __device__ float4 in_frame(std::size_t i) const {
    return make_float4(x[i] - fx, y[i] - fy, z[i] - fz, q[i]);
  }
};
AtomView arrays_of(const DeviceAtomArrays& a, const BinGeometry& g) {
  return {a.x.data(), a.y.data(), a.z.data(), a.q.data(), a.size(),
          g.frame_origin[0], g.frame_origin[1], g.frame_origin[2]};
}

__global__ void bin_keys_kernel(AtomView atoms, BinLookup lookup, std::uint32_t* __restrict__ keys) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < atoms.n) {
    const float4 p = atoms.in_frame(i);
    keys[i] = bin_key(lookup, p.x, p.y, p.z);
  }
}

__global__ void fill_kernel(float4* __restrict__ slots, std::size_t n, float4 value) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    slots[i] = value;
}

// One atom per thread. The bin's counter is read first and the atomic taken only when it shows
// room, so a crowded bin costs its overflowing atoms one plain load each; those are appended to
// the overflow list with one atomic per warp (the threads that overflow together).
__global__ void scatter_fixed_kernel(AtomView atoms, const std::uint32_t* __restrict__ keys,
                                     std::uint32_t dropped_key, std::uint32_t capacity,
                                     std::uint32_t* fill, float4* __restrict__ slots,
                                     std::uint32_t* __restrict__ overflow,
                                     std::uint32_t* overflow_count) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= atoms.n) return;
  const std::uint32_t bin = keys[i];
  if (bin == dropped_key) return;
  const float4 atom = atoms.in_frame(i);
  if (*static_cast<volatile std::uint32_t*>(fill + bin) < capacity) {
    const std::uint32_t slot = atomicAdd(fill + bin, 1u);
    if (slot < capacity) {
      slots[std::size_t(bin) * capacity + slot] = atom;
      return;
    }
  }
  const cg::coalesced_group group = cg::coalesced_threads();
  std::uint32_t base = 0;
  if (group.thread_rank() == 0) base = atomicAdd(overflow_count, group.size());
  base = group.shfl(base, 0);
  overflow[base + group.thread_rank()] = std::uint32_t(i);
}

__global__ void iota_kernel(std::uint32_t* __restrict__ out, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = std::uint32_t(i);
}

// Slot j holds the j-th atom in (bin, input order): the sorted keys put it at start[bin] + its
// rank in the bin. Dropped atoms sort last and are not copied.
__global__ void gather_sorted_kernel(AtomView atoms, const std::uint32_t* __restrict__ sorted_keys,
                                     const std::uint32_t* __restrict__ order,
                                     std::uint32_t dropped_key, float4* __restrict__ slots) {
  const std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < atoms.n && sorted_keys[j] != dropped_key) slots[j] = atoms.in_frame(order[j]);
}

void check_binned(const DeviceAtomArrays& atoms, const BinGeometry& g, const DeviceBins& bins) {
  if (bins.bins != g.bin_count() || bins.atoms != atoms.size())
    throw Error("binning: count_bins must run on these atoms and this geometry before a scatter");
}

}  // namespace

void upload_atom_arrays(const AtomSet& atoms, DeviceAtomArrays& device, cudaStream_t stream) {
  const std::size_t n = atoms.size();
  if (n > std::size_t(INT32_MAX))
    throw Error("too many atoms for the GPU cutoff engine: " + std::to_string(n) +
                " (at most 2^31 - 1)");
  const std::vector<float>* host[4] = {&atoms.x, &atoms.y, &atoms.z, &atoms.q};
  cuda::DeviceBuffer<float>* dev[4] = {&device.x, &device.y, &device.z, &device.q};
  for (int c = 0; c < 4; ++c) {
    dev[c]->resize(n);
    if (n)
      DCSGRID_CUDA_CHECK(cudaMemcpyAsync(dev[c]->data(), host[c]->data(), n * sizeof(float),
                                         cudaMemcpyHostToDevice, stream));
  }
}

void compute_bin_keys(const DeviceAtomArrays& atoms, const BinGeometry& g, DeviceBins& bins,
                      cudaStream_t stream) {
  const std::size_t n = atoms.size();
  bins.bins = g.bin_count();
  bins.atoms = n;
  reserve(bins.keys, std::max<std::size_t>(n, 1));
  if (n == 0) return;
  bin_keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(arrays_of(atoms, g), make_bin_lookup(g),
                                                         bins.keys.data());
  DCSGRID_CHECK_LAUNCH();
}

void count_bins(const DeviceAtomArrays& atoms, const BinGeometry& g, DeviceBins& bins,
                cudaStream_t stream) {
  compute_bin_keys(atoms, g, bins, stream);
  reserve(bins.counts, bins.bins + 1);
  if (atoms.size() == 0) {
    DCSGRID_CUDA_CHECK(cudaMemsetAsync(bins.counts.data(), 0,
                                       (bins.bins + 1) * sizeof(std::uint32_t), stream));
    return;
  }
  prims::histogram_cuda(bins.keys.data(), atoms.size(), bins.counts.data(),
                        std::uint32_t(bins.bins + 1), stream);
}

int choose_bin_capacity_cuda(DeviceBins& bins, cudaStream_t stream) {
  reserve(bins.occupancy, kOccupancyBins);
  // Counts used as keys: counts >= kOccupancyBins land in no bin and are the crowded ones.
  prims::histogram_cuda(bins.counts.data(), bins.bins, bins.occupancy.data(), kOccupancyBins,
                        stream);
  std::vector<std::uint32_t> with(kOccupancyBins);
  std::uint32_t dropped = 0;
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(with.data(), bins.occupancy.data(),
                                     kOccupancyBins * sizeof(std::uint32_t),
                                     cudaMemcpyDeviceToHost, stream));
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(&dropped, bins.counts.data() + bins.bins, sizeof(dropped),
                                     cudaMemcpyDeviceToHost, stream));
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));

  BinOccupancy occ;
  occ.bins_with.assign(with.begin(), with.end());
  std::uint64_t counted_bins = 0;
  for (std::uint32_t v = 0; v < kOccupancyBins; ++v) counted_bins += with[v];
  occ.crowded_bins = bins.bins - counted_bins;
  occ.atoms = bins.atoms - dropped;
  if (const int c = choose_bin_capacity(occ); c > 0) return c;
  std::vector<std::uint32_t> counts(bins.bins);
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(counts.data(), bins.counts.data(),
                                     bins.bins * sizeof(std::uint32_t), cudaMemcpyDeviceToHost,
                                     stream));
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  return choose_bin_capacity(bin_occupancy(counts));
}

void scatter_fixed(const DeviceAtomArrays& atoms, const BinGeometry& g, int capacity, DeviceBins& bins,
                   cudaStream_t stream) {
  check_binned(atoms, g, bins);
  if (capacity < 1) throw Error("binning: the bin capacity must be at least 1");
  const std::size_t n = atoms.size(), slot_count = bins.bins * std::size_t(capacity);
  if (slot_count >= std::size_t(UINT32_MAX))
    throw Error("binning: " + std::to_string(bins.bins) + " bins of " + std::to_string(capacity) +
                " atoms are too many slots; use a smaller --bin-capacity or 0 (prefix-sum bins)");
  bins.capacity = capacity;
  reserve(bins.slots, slot_count);
  reserve(bins.fill, bins.bins);
  reserve(bins.overflow, std::max<std::size_t>(n, 1));
  reserve(bins.overflow_count, 1);
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(bins.fill.data(), 0, bins.bins * sizeof(std::uint32_t), stream));
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(bins.overflow_count.data(), 0, sizeof(std::uint32_t), stream));
  const unsigned fill_blocks = std::min(blocks_for(slot_count), 65535u);
  fill_kernel<<<fill_blocks, kThreads, 0, stream>>>(bins.slots.data(), slot_count,
                                                    make_float4(kFarAway, kFarAway, kFarAway, 0.0f));
  DCSGRID_CHECK_LAUNCH();
  if (n == 0) return;
  scatter_fixed_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      arrays_of(atoms, g), bins.keys.data(), std::uint32_t(bins.bins), std::uint32_t(capacity),
      bins.fill.data(), bins.slots.data(), bins.overflow.data(), bins.overflow_count.data());
  DCSGRID_CHECK_LAUNCH();
}

void stable_key_order(const std::uint32_t* keys, std::size_t n, int key_bits, DeviceKeyOrder& out,
                      cudaStream_t stream) {
  if (n > std::size_t(INT32_MAX))
    throw Error("stable_key_order: " + std::to_string(n) + " keys, more than CUB sorts (2^31 - 1)");
  if (n == 0) return;
  const int count = int(n);
  reserve(out.sorted_keys, n);
  reserve(out.order, 2 * n);
  std::uint32_t* index = out.order.data() + n;
  std::size_t bytes = 0;
  DCSGRID_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, out.sorted_keys.data(), index,
                                                     out.order.data(), count, 0, key_bits, stream));
  reserve(out.workspace, std::max<std::size_t>(bytes, 1));
  iota_kernel<<<blocks_for(n), kThreads, 0, stream>>>(index, n);
  DCSGRID_CHECK_LAUNCH();
  DCSGRID_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(out.workspace.data(), bytes, keys, out.sorted_keys.data(),
                                                     index, out.order.data(), count, 0, key_bits, stream));
}

void scatter_dynamic(const DeviceAtomArrays& atoms, const BinGeometry& g, DeviceBins& bins,
                     cudaStream_t stream) {
  check_binned(atoms, g, bins);
  const std::size_t n = atoms.size();
  bins.capacity = 0;
  reserve(bins.start, bins.bins + 1);
  reserve(bins.slots, std::max<std::size_t>(n, 1));
  const std::size_t ws = prims::scan_cuda_workspace_bytes(bins.bins + 1);
  reserve(bins.scan_workspace, std::max<std::size_t>(ws, 1));
  // Over bins + 1 counts: start[bins] is then the number of atoms kept (the dropped count, last,
  // is not added to anything).
  prims::scan_cuda<std::uint32_t>(bins.counts.data(), bins.start.data(), bins.bins + 1,
                                  prims::ScanKind::exclusive, bins.scan_workspace.data(), stream);
  if (n == 0) return;
  // Keys run up to bins (the dropped key): only their low bits take part in the sort.
  stable_key_order(bins.keys.data(), n, std::bit_width(std::uint64_t(bins.bins)), bins.sorted, stream);
  gather_sorted_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      arrays_of(atoms, g), bins.sorted.sorted_keys.data(), bins.sorted.order.data(), std::uint32_t(bins.bins),
      bins.slots.data());
  DCSGRID_CHECK_LAUNCH();
}

}  // namespace dcsgrid::engine
