// CPU histograms: each OpenMP thread counts its chunk into private counts, then the copies are
// summed per bin in parallel. With few bins each thread keeps 4 interleaved copies so that runs
// of equal keys do not wait on the previous increment of the same counter.
#include "dcsgrid/prims/histogram.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::prims {
namespace {

constexpr std::size_t min_items_per_thread = std::size_t(1) << 15;
// Up to this many counters, a thread keeps `interleave` copies.
constexpr std::uint32_t max_interleaved_counters = 4096;
constexpr int interleave = 4;
// Value histograms count bins + 3 counters in 32-bit key space.
constexpr std::uint32_t max_value_bins = std::uint32_t(1) << 31;

// Adds the keys of items [begin, end) to COPIES interleaved histograms hist[c * counters + key];
// keys >= counters are skipped.
template <int COPIES, typename Counter, typename KeyOf>
void count_range(std::size_t begin, std::size_t end, const KeyOf& key_of, std::uint32_t counters,
                 Counter* hist) {
  std::size_t i = begin;
  for (; i + COPIES <= end; i += COPIES)
    for (int c = 0; c < COPIES; ++c) {
      const std::uint32_t key = key_of(i + c);
      if (key < counters) ++hist[std::size_t(c) * counters + key];
    }
  for (; i < end; ++i) {
    const std::uint32_t key = key_of(i);
    if (key < counters) ++hist[key];
  }
}

// out[k] = number of items i in [0, n) with key_of(i) == k, for k < counters.
template <typename Counter, typename KeyOf>
void count_keys(std::size_t n, const KeyOf& key_of, std::uint32_t counters, Counter* out) {
  const int copies = counters <= max_interleaved_counters ? interleave : 1;
  const std::size_t copy_size = std::size_t(copies) * counters;
  // A thread must have enough items to pay for zeroing and merging its copies.
  const std::size_t wanted = std::max<std::size_t>(1, n / std::max(min_items_per_thread, copy_size));
  const int threads = int(std::min<std::size_t>(wanted, std::size_t(omp_get_max_threads())));
  std::vector<Counter> partial(std::size_t(threads) * copy_size);
  int used = 1;
#pragma omp parallel num_threads(threads)
  {
    const std::size_t t = std::size_t(omp_get_thread_num());
    const std::size_t chunks = std::size_t(omp_get_num_threads());
#pragma omp single
    used = int(chunks);
    Counter* hist = partial.data() + t * copy_size;
    const std::size_t begin = n * t / chunks, end = n * (t + 1) / chunks;
    if (copies == interleave)
      count_range<interleave>(begin, end, key_of, counters, hist);
    else
      count_range<1>(begin, end, key_of, counters, hist);
  }
  const std::size_t sources = std::size_t(used) * copies;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t k = 0; k < std::int64_t(counters); ++k) {
    Counter sum = 0;
    for (std::size_t s = 0; s < sources; ++s) sum += partial[s * counters + std::size_t(k)];
    out[k] = sum;
  }
}

void check_range(double lo, double hi, std::uint32_t bins) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
    throw Error("value histogram: need finite lo < hi, got [" + std::to_string(lo) + ", " +
                std::to_string(hi) + ")");
  if (bins == 0 || bins > max_value_bins)
    throw Error("value histogram: need 1 to " + std::to_string(max_value_bins) + " bins, got " +
                std::to_string(bins));
}

}  // namespace

void histogram_cpu(const std::uint32_t* keys, std::size_t n, std::uint32_t* counts,
                   std::uint32_t bins) {
  count_keys(n, [keys](std::size_t i) { return keys[i]; }, bins, counts);
}

ValueHistogram histogram_values_cpu(const float* values, std::size_t n, double lo, double hi,
                                    std::uint32_t bins) {
  check_range(lo, hi, bins);
  const double scale = bins / (hi - lo);
  const std::uint32_t underflow = bins, overflow = bins + 1, nan = bins + 2;
  const auto bin_of = [=](std::size_t i) -> std::uint32_t {
    const float v = values[i];
    if (v < lo) return underflow;
    if (v >= hi) return overflow;
    if (std::isnan(v)) return nan;
    return std::min(bins - 1, std::uint32_t((double(v) - lo) * scale));
  };
  std::vector<std::uint64_t> counts(std::size_t(bins) + 3);
  count_keys(n, bin_of, bins + 3, counts.data());
  ValueHistogram h;
  h.lo = lo;
  h.hi = hi;
  h.underflow = counts[underflow];
  h.overflow = counts[overflow];
  h.nan = counts[nan];
  counts.resize(bins);
  h.counts = std::move(counts);
  return h;
}

}  // namespace dcsgrid::prims
