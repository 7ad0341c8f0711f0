// CPU histograms: each OpenMP thread counts its chunk into private counts, then the copies are
// summed per bin in parallel. With few bins each thread keeps 4 interleaved copies so that
// nearby equal keys do not wait on the previous increment of the same counter (one core, keys in
// L1, 256 uniform bins: 0.54 -> 0.34 ns per key).
#include "dcsgrid/prims/histogram.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::prims {
namespace {

constexpr std::size_t min_items_per_thread = std::size_t(1) << 15;
// Up to this many counters, a thread keeps `interleave` copies (together 32 KB: L1-resident).
constexpr std::uint32_t max_interleaved_counters = 2048;
constexpr int interleave = 4;
// Value histograms count bins + 3 counters in 32-bit key space.
constexpr std::uint32_t max_value_bins = std::uint32_t(1) << 31;

// Items are keyed a block at a time, then counted: a keying loop with no stores to the counts in
// it vectorises (value binning: about 2x faster than keying while counting).
// key_block(begin, count, buffer) returns the keys of items [begin, begin + count): the input
// itself for integer keys, else `buffer` filled.
constexpr std::size_t key_block_size = 1024;

// Adds the keys of items [begin, end) to COPIES interleaved histograms hist[c * counters + key];
// keys >= counters are skipped.
template <int COPIES, typename Counter, typename KeyBlock>
void count_range(std::size_t begin, std::size_t end, const KeyBlock& key_block,
                 std::uint32_t counters, Counter* hist) {
  std::uint32_t buffer[key_block_size];
  for (std::size_t block = begin; block < end; block += key_block_size) {
    const std::size_t count = std::min(key_block_size, end - block);
    const std::uint32_t* keys = key_block(block, count, buffer);
    std::size_t j = 0;
    for (; j + COPIES <= count; j += COPIES)
      for (int c = 0; c < COPIES; ++c)
        if (keys[j + c] < counters) ++hist[std::size_t(c) * counters + keys[j + c]];
    for (; j < count; ++j)
      if (keys[j] < counters) ++hist[keys[j]];
  }
}

// out[k] = number of items in [0, n) whose key is k, for k < counters.
template <typename Counter, typename KeyBlock>
void count_keys(std::size_t n, const KeyBlock& key_block, std::uint32_t counters, Counter* out) {
  const int copies = counters <= max_interleaved_counters ? interleave : 1;
  const std::size_t copy_size = std::size_t(copies) * counters;
  // A thread must have enough items to pay for zeroing and merging its copies.
  const std::size_t wanted = std::max<std::size_t>(1, n / std::max(min_items_per_thread, copy_size));
  const int threads = int(std::min<std::size_t>(wanted, std::size_t(team_size())));
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
      count_range<interleave>(begin, end, key_block, counters, hist);
    else
      count_range<1>(begin, end, key_block, counters, hist);
  }
  const std::size_t sources = std::size_t(used) * copies;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t k = 0; k < std::int64_t(counters); ++k) {
    Counter sum = 0;
    for (std::size_t s = 0; s < sources; ++s) sum += partial[s * counters + std::size_t(k)];
    out[k] = sum;
  }
}

// The keys of values[0, count): bins (as documented in histogram.hpp), then underflow = bins,
// overflow = bins + 1, NaN = bins + 2. Selects rather than branches, so that the loop vectorises
// and out-of-range values cost no mispredictions: v < lo exactly when t < 0 (the subtraction in
// double keeps the sign); NaN fails every comparison; the bin goes through int32 (bins <= 2^31),
// which AVX2 converts packed.
void bin_value_block(const float* values, std::size_t count, double lo, double hi, double scale,
                     std::uint32_t bins, std::uint32_t* keys) {
  const double top = bins - 1;
  const std::uint32_t underflow = bins, overflow = bins + 1, nan = bins + 2;
  for (std::size_t j = 0; j < count; ++j) {
    const float v = values[j];
    const double t = (double(v) - lo) * scale;
    std::uint32_t key = std::uint32_t(std::int32_t(t > 0 ? (t < top ? t : top) : 0.0));
    key = t < 0 ? underflow : key;
    key = v >= hi ? overflow : key;
    keys[j] = v != v ? nan : key;
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
  const auto key_block = [keys](std::size_t begin, std::size_t, std::uint32_t*) {
    return keys + begin;
  };
  count_keys(n, key_block, bins, counts);
}

ValueHistogram histogram_values_cpu(const float* values, std::size_t n, double lo, double hi,
                                    std::uint32_t bins) {
  check_range(lo, hi, bins);
  const double scale = bins / (hi - lo);
  const std::uint32_t underflow = bins, overflow = bins + 1, nan = bins + 2;
  const auto bin_values = [=](std::size_t begin, std::size_t count, std::uint32_t* buffer) {
    bin_value_block(values + begin, count, lo, hi, scale, bins, buffer);
    return static_cast<const std::uint32_t*>(buffer);
  };
  std::vector<std::uint64_t> counts(std::size_t(bins) + 3);
  count_keys(n, bin_values, bins + 3, counts.data());
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
