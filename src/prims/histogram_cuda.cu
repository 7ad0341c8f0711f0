// CUDA histograms: one kernel template for integer keys and binned float values. Each warp reads
// four-item vectors (coalesced, several in flight), turns them into keys and counts them into a
// shared-memory copy (per warp or per block) or straight into global memory; each block then adds
// its non-zero counts to the output once.
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>

#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/prims/histogram.hpp"
#include "dcsgrid/prims/warp_histogram.cuh"

namespace dcsgrid::prims {
namespace {

constexpr int hist_threads = 512;
constexpr int hist_warps = hist_threads / warp_threads;
constexpr int hist_unroll = 4;  // vectors of four items per thread per step
constexpr std::uint32_t per_warp_max_counters = 1024;
constexpr std::uint32_t no_key = UINT32_MAX;  // a lane with nothing to count

struct KeyIdentity {
  __device__ std::uint32_t operator()(std::uint32_t key) const { return key; }
};

// The binning documented in histogram.hpp; counters bins .. bins + 2 are under, over, NaN.
struct ValueBinner {
  float lo, hi, scale;
  std::uint32_t bins;
  __device__ std::uint32_t operator()(float v) const {
    if (v < lo) return bins;
    if (v >= hi) return bins + 1;
    if (isnan(v)) return bins + 2;
    return min(bins - 1, std::uint32_t((v - lo) * scale));
  }
};

// histogram_values_cpu's binning (histogram_cpu.cpp's bin_value_block), step for step in double;
// __dsub_rn and __dmul_rn so that no build fuses them.
struct ExactValueBinner {
  double lo, hi, scale, top;
  std::uint32_t bins;
  __device__ std::uint32_t operator()(float v) const {
    const double t = __dmul_rn(__dsub_rn(double(v), lo), scale);
    std::uint32_t key = std::uint32_t(std::int32_t(t > 0 ? (t < top ? t : top) : 0.0));
    key = t < 0 ? bins : key;
    key = double(v) >= hi ? bins + 1 : key;
    return v != v ? bins + 2 : key;
  }
};

constexpr int copies_per_block(HistogramCopies c) {
  return c == HistogramCopies::per_warp ? hist_warps : c == HistogramCopies::per_block ? 1 : 0;
}

// Counts key_of(in[i]) < counters for i in [0, n) into out[counters] (zeroed by the caller).
// in + head is 16-byte aligned; items before it and the last (n − head) % 4 are counted apart.
template <HistogramCopies C, HistogramAggregation A, typename In, typename Vec, typename KeyOf>
__global__ void __launch_bounds__(hist_threads)
    histogram_kernel(const In* in, std::size_t n, std::size_t head, KeyOf key_of,
                     std::uint32_t counters, std::uint32_t* out) {
  extern __shared__ std::uint32_t shared_counts[];
  constexpr int copies = copies_per_block(C);
  const unsigned warp = threadIdx.x / warp_threads, lane = lane_id();
  std::uint32_t* counts = out;
  if constexpr (copies > 0) {
    counts = shared_counts + (copies > 1 ? std::size_t(warp) * counters : 0);
    for (std::size_t k = threadIdx.x; k < std::size_t(copies) * counters; k += hist_threads)
      shared_counts[k] = 0;
    __syncthreads();
  }

  // Whole warps step together so that every lane takes part in the warp-level counting.
  const Vec* vectors = reinterpret_cast<const Vec*>(in + head);
  const std::size_t vector_count = (n - head) / 4;
  constexpr std::size_t warp_step = std::size_t(warp_threads) * hist_unroll;
  const std::size_t stride = std::size_t(gridDim.x) * hist_warps * warp_step;
  for (std::size_t base = (std::size_t(blockIdx.x) * hist_warps + warp) * warp_step;
       base < vector_count; base += stride) {
    Vec v[hist_unroll];
    bool valid[hist_unroll];
#pragma unroll
    for (int u = 0; u < hist_unroll; ++u) {  // all loads first: several in flight
      const std::size_t i = base + std::size_t(u) * warp_threads + lane;
      valid[u] = i < vector_count;
      v[u] = valid[u] ? vectors[i] : Vec{};  // never read an unset register
    }
#pragma unroll
    for (int u = 0; u < hist_unroll; ++u) {
      const In items[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
      for (int j = 0; j < 4; ++j) warp_count<A>(counts, valid[u] ? key_of(items[j]) : no_key, counters);
    }
  }

  // The at most 3 + 3 items outside the vectors: plain atomics in block 0.
  const std::size_t tail = (n - head) % 4;
  if (blockIdx.x == 0 && threadIdx.x < head + tail) {
    const std::size_t i = threadIdx.x < head ? threadIdx.x : n - tail + (threadIdx.x - head);
    const std::uint32_t key = key_of(in[i]);
    if (key < counters) atomicAdd(&counts[key], 1u);
  }

  if constexpr (copies > 0) {
    __syncthreads();
    for (std::uint32_t k = threadIdx.x; k < counters; k += hist_threads) {
      std::uint32_t sum = 0;
      for (int c = 0; c < copies; ++c) sum += shared_counts[std::size_t(c) * counters + k];
      if (sum) atomicAdd(&out[k], sum);
    }
  }
}

struct DeviceLimits {
  int sms = 0;
  std::size_t shared_per_block = 0;  // opt-in maximum of dynamic shared memory
};

DeviceLimits device_limits() {
  int device = 0, sms = 0, shared = 0;
  DCSGRID_CUDA_CHECK(cudaGetDevice(&device));
  DCSGRID_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  DCSGRID_CUDA_CHECK(
      cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return {sms, std::size_t(shared)};
}

const char* copies_name(HistogramCopies c) {
  return c == HistogramCopies::per_warp ? "per-warp" : c == HistogramCopies::per_block ? "per-block" : "global";
}

template <HistogramCopies C, HistogramAggregation A, typename In, typename Vec, typename KeyOf>
void launch(const In* d_in, std::size_t n, KeyOf key_of, std::uint32_t counters,
            std::uint32_t* d_out, cudaStream_t stream) {
  const auto kernel = histogram_kernel<C, A, In, Vec, KeyOf>;
  const DeviceLimits limits = device_limits();
  const std::size_t shared = std::size_t(copies_per_block(C)) * counters * sizeof(std::uint32_t);
  if (shared > limits.shared_per_block)
    throw Error("histogram_cuda: " + std::to_string(counters) + " counters in " + copies_name(C) +
                " copies need " + std::to_string(shared) + " bytes of shared memory, the device has " +
                std::to_string(limits.shared_per_block));
  // The attribute belongs to the kernel, not to this launch: threads launching it at once with
  // other counter counts would undo each other's value, so it is always the device's maximum (the
  // launch's own shared size still sets the occupancy).
  DCSGRID_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          int(limits.shared_per_block)));
  int per_sm = 0;
  DCSGRID_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, hist_threads, shared));
  const std::size_t head = std::min<std::size_t>(
      n, (16 - reinterpret_cast<std::uintptr_t>(d_in) % 16) % 16 / sizeof(In));
  const std::size_t items_per_block = std::size_t(hist_threads) * hist_unroll * 4;
  const std::size_t wanted = (n - head + items_per_block - 1) / items_per_block;
  const std::size_t resident = std::size_t(std::max(per_sm, 1)) * std::size_t(limits.sms);
  const unsigned blocks = unsigned(std::max<std::size_t>(1, std::min(wanted, resident)));
  kernel<<<blocks, hist_threads, shared, stream>>>(d_in, n, head, key_of, counters, d_out);
  DCSGRID_CHECK_LAUNCH();
}

template <HistogramCopies C, typename In, typename Vec, typename KeyOf>
void launch_with_aggregation(HistogramAggregation a, const In* d_in, std::size_t n, KeyOf key_of,
                             std::uint32_t counters, std::uint32_t* d_out, cudaStream_t stream) {
  switch (a) {
    case HistogramAggregation::none:
      return launch<C, HistogramAggregation::none, In, Vec>(d_in, n, key_of, counters, d_out, stream);
    case HistogramAggregation::adaptive:
      return launch<C, HistogramAggregation::adaptive, In, Vec>(d_in, n, key_of, counters, d_out, stream);
    case HistogramAggregation::always:
      return launch<C, HistogramAggregation::always, In, Vec>(d_in, n, key_of, counters, d_out, stream);
  }
}

// Zeroes d_out[counters], then counts with the given method.
template <typename In, typename Vec, typename KeyOf>
void count(const In* d_in, std::size_t n, KeyOf key_of, std::uint32_t counters,
           std::uint32_t* d_out, HistogramMethod m, cudaStream_t stream) {
  if (counters == 0) return;
  DCSGRID_CUDA_CHECK(cudaMemsetAsync(d_out, 0, std::size_t(counters) * sizeof(std::uint32_t), stream));
  if (n == 0) return;
  switch (m.copies) {
    case HistogramCopies::global:
      return launch_with_aggregation<HistogramCopies::global, In, Vec>(m.aggregation, d_in, n, key_of, counters, d_out, stream);
    case HistogramCopies::per_block:
      return launch_with_aggregation<HistogramCopies::per_block, In, Vec>(m.aggregation, d_in, n, key_of, counters, d_out, stream);
    case HistogramCopies::per_warp:
      return launch_with_aggregation<HistogramCopies::per_warp, In, Vec>(m.aggregation, d_in, n, key_of, counters, d_out, stream);
  }
}

ValueBinner make_binner(float lo, float hi, std::uint32_t bins) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
    throw Error("histogram_values_cuda: need finite lo < hi, got [" + std::to_string(lo) + ", " +
                std::to_string(hi) + ")");
  if (bins == 0 || bins > UINT32_MAX - 3)
    throw Error("histogram_values_cuda: need 1 to 2^32 - 4 bins, got " + std::to_string(bins));
  return {lo, hi, float(bins) / (hi - lo), bins};
}

}  // namespace

HistogramMethod histogram_cuda_default_method(std::uint32_t counters) {
  if (counters <= per_warp_max_counters)
    return {HistogramCopies::per_warp, HistogramAggregation::adaptive};
  if (std::size_t(counters) * sizeof(std::uint32_t) <= device_limits().shared_per_block)
    return {HistogramCopies::per_block, HistogramAggregation::adaptive};
  return {HistogramCopies::global, HistogramAggregation::adaptive};
}

void histogram_cuda(const std::uint32_t* d_keys, std::size_t n, std::uint32_t* d_counts,
                    std::uint32_t bins, HistogramMethod method, cudaStream_t stream) {
  count<std::uint32_t, uint4>(d_keys, n, KeyIdentity{}, bins, d_counts, method, stream);
}

void histogram_cuda(const std::uint32_t* d_keys, std::size_t n, std::uint32_t* d_counts,
                    std::uint32_t bins, cudaStream_t stream) {
  histogram_cuda(d_keys, n, d_counts, bins, histogram_cuda_default_method(bins), stream);
}

void histogram_values_cuda(const float* d_values, std::size_t n, float lo, float hi,
                           std::uint32_t bins, std::uint32_t* d_counts, HistogramMethod method,
                           cudaStream_t stream) {
  const ValueBinner binner = make_binner(lo, hi, bins);
  count<float, float4>(d_values, n, binner, bins + 3, d_counts, method, stream);
}

void histogram_values_exact_cuda(const float* d_values, std::size_t n, double lo, double hi,
                                 std::uint32_t bins, std::uint32_t* d_counts, cudaStream_t stream) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
    throw Error("histogram_values_exact_cuda: need finite lo < hi, got [" + std::to_string(lo) + ", " +
                std::to_string(hi) + ")");
  if (bins == 0 || bins > (std::uint32_t(1) << 31))
    throw Error("histogram_values_exact_cuda: need 1 to 2^31 bins, got " + std::to_string(bins));
  const ExactValueBinner binner{lo, hi, bins / (hi - lo), double(bins - 1), bins};
  count<float, float4>(d_values, n, binner, bins + 3, d_counts, histogram_cuda_default_method(bins + 3), stream);
}

void histogram_values_cuda(const float* d_values, std::size_t n, float lo, float hi,
                           std::uint32_t bins, std::uint32_t* d_counts, cudaStream_t stream) {
  histogram_values_cuda(d_values, n, lo, hi, bins, d_counts,
                        histogram_cuda_default_method(bins + 3), stream);
}

}  // namespace dcsgrid::prims
