// Histograms of integer keys and of float values over a range, on the CPU (OpenMP threads with
// private counts) and on CUDA (shared-memory copies per warp or per block, merged once).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#ifdef DCSGRID_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace dcsgrid::prims {

// Integer keys into counts[0, bins) (overwritten). A key >= bins is counted in no bin. Counts
// wrap modulo 2^32.
void histogram_cpu(const std::uint32_t* keys, std::size_t n, std::uint32_t* counts,
                   std::uint32_t bins);

// Float values over [lo, hi) in `bins` equal bins. Value v in [lo, hi) goes to bin
// min(bins - 1, floor((v - lo) * (bins / (hi - lo)))); v < lo (and -inf) is underflow, v >= hi
// (and +inf) overflow, NaN counted apart. The CPU version computes in double.
struct ValueHistogram {
  double lo = 0, hi = 1;
  std::vector<std::uint64_t> counts;
  std::uint64_t underflow = 0, overflow = 0, nan = 0;
};
// Throws dcsgrid::Error unless lo < hi (both finite) and bins >= 1.
ValueHistogram histogram_values_cpu(const float* values, std::size_t n, double lo, double hi,
                                    std::uint32_t bins);

#ifdef DCSGRID_HAVE_CUDA
// Where the CUDA kernels count before the single merge into the output.
enum class HistogramCopies {
  global,     // atomics straight into the output (any number of bins)
  per_block,  // one shared-memory copy per block (bins up to the shared memory of a block)
  per_warp,   // one shared-memory copy per warp: less contention when bins are few
};
// How equal keys within a warp are combined before the atomic.
enum class HistogramAggregation {
  none,      // one atomic per key
  adaptive,  // cheap votes per key: a key held by >= 8 lanes costs one atomic; then
             // __match_any_sync only when neighbouring lanes still agree
  always,    // __match_any_sync on every key: one atomic per distinct key in the warp
};
struct HistogramMethod {
  HistogramCopies copies = HistogramCopies::per_warp;
  HistogramAggregation aggregation = HistogramAggregation::adaptive;
};
// The method the plain calls use for `counters` counters on the current device: per warp with
// adaptive aggregation up to 1024 counters, per block while a copy fits shared memory, else
// global (both adaptive).
HistogramMethod histogram_cuda_default_method(std::uint32_t counters);

// Device pointers; asynchronous on stream. d_counts[bins] is overwritten (zeroed with
// cudaMemsetAsync first). Keys >= bins are counted in no bin. Throws dcsgrid::Error on a CUDA
// failure or a method whose copies do not fit shared memory.
void histogram_cuda(const std::uint32_t* d_keys, std::size_t n, std::uint32_t* d_counts,
                    std::uint32_t bins, cudaStream_t stream);
void histogram_cuda(const std::uint32_t* d_keys, std::size_t n, std::uint32_t* d_counts,
                    std::uint32_t bins, HistogramMethod method, cudaStream_t stream);

// Float values, binned as histogram_values_cpu but in float: scale = float(bins) / (hi - lo)
// computed in float on the host, bin = min(bins - 1, uint32((v - lo) * scale)).
// d_counts has bins + 3 entries: the bins, then underflow, overflow, NaN (overwritten).
// Throws dcsgrid::Error unless lo < hi (both finite) and bins >= 1.
void histogram_values_cuda(const float* d_values, std::size_t n, float lo, float hi,
                           std::uint32_t bins, std::uint32_t* d_counts, cudaStream_t stream);
void histogram_values_cuda(const float* d_values, std::size_t n, float lo, float hi,
                           std::uint32_t bins, std::uint32_t* d_counts, HistogramMethod method,
                           cudaStream_t stream);
// Float values binned exactly as histogram_values_cpu does, in double (so the same counts, where
// histogram_values_cuda's float binning may place a value near an edge in the next bin). d_counts
// as above. Throws dcsgrid::Error as histogram_values_cpu does.
void histogram_values_exact_cuda(const float* d_values, std::size_t n, double lo, double hi,
                                 std::uint32_t bins, std::uint32_t* d_counts, cudaStream_t stream);
#endif

}  // namespace dcsgrid::prims
