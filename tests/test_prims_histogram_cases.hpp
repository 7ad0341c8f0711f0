// What the CPU and CUDA histogram tests share: key distributions (uniform, out of range, skewed,
// sorted runs), value inputs with every special case, and naive counting loops.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace dcsgrid::test {

enum class KeyPattern {
  uniform,       // uniform in [0, bins)
  out_of_range,  // uniform in [0, 2·bins + 10): about half are >= bins (and some = UINT32_MAX)
  one_bin,       // every key in the same bin
  ninety_one,    // 90 % in one bin, the rest uniform
  all_invalid,   // every key >= bins
  sorted_runs,   // runs of equal keys of random length (as in binned, sorted atoms)
};
inline const KeyPattern all_key_patterns[] = {KeyPattern::uniform,    KeyPattern::out_of_range,
                                              KeyPattern::one_bin,    KeyPattern::ninety_one,
                                              KeyPattern::all_invalid, KeyPattern::sorted_runs};
inline std::string pattern_name(KeyPattern p) {
  switch (p) {
    case KeyPattern::uniform: return "uniform";
    case KeyPattern::out_of_range: return "out_of_range";
    case KeyPattern::one_bin: return "one_bin";
    case KeyPattern::ninety_one: return "ninety_one";
    case KeyPattern::all_invalid: return "all_invalid";
    case KeyPattern::sorted_runs: return "sorted_runs";
  }
  return "?";
}

inline std::vector<std::uint32_t> make_keys(std::size_t n, std::uint32_t bins, KeyPattern p,
                                            std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::uint32_t top = bins ? bins - 1 : 0;
  std::uniform_int_distribution<std::uint32_t> in_range(0, top);
  std::uniform_int_distribution<std::uint32_t> wide(0, 2 * top + 11);
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<std::size_t> run_length(1, 300);
  const std::uint32_t hot = bins / 3;
  std::vector<std::uint32_t> keys(n);
  std::size_t run_left = 0;
  std::uint32_t run_key = 0;
  for (std::size_t i = 0; i < n; ++i) {
    switch (p) {
      case KeyPattern::uniform: keys[i] = in_range(rng); break;
      case KeyPattern::out_of_range: {
        const std::uint32_t k = wide(rng);
        keys[i] = k == 0 ? std::numeric_limits<std::uint32_t>::max() : k;
        break;
      }
      case KeyPattern::one_bin: keys[i] = hot; break;
      case KeyPattern::ninety_one: keys[i] = percent(rng) < 90 ? hot : in_range(rng); break;
      case KeyPattern::all_invalid: keys[i] = bins + std::uint32_t(i % 5); break;
      case KeyPattern::sorted_runs:
        if (run_left == 0) {
          run_left = run_length(rng);
          run_key = in_range(rng);
        }
        --run_left;
        keys[i] = run_key;
        break;
    }
  }
  return keys;
}

inline std::vector<std::uint32_t> naive_key_histogram(const std::vector<std::uint32_t>& keys,
                                                      std::uint32_t bins) {
  std::vector<std::uint32_t> counts(bins, 0);
  for (const std::uint32_t k : keys)
    if (k < bins) ++counts[k];
  return counts;
}

// Values for [lo, hi) = [-2, 3): uniform over a wider range, plus lo, hi, the floats next to
// them, ±inf, NaN, ±0, denormals and values just below each bin edge.
inline std::vector<float> make_values(std::size_t n, std::uint32_t bins, std::uint64_t seed) {
  const float lo = -2.0f, hi = 3.0f;
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> special = {lo, hi, std::nextafter(lo, -inf), std::nextafter(hi, -inf),
                                std::nextafter(lo, inf), std::nextafter(hi, inf), inf, -inf,
                                std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f,
                                std::numeric_limits<float>::denorm_min(), -1e30f, 1e30f};
  for (std::uint32_t b = 1; b < bins && special.size() < 64; ++b) {
    const float edge = lo + (hi - lo) * float(b) / float(bins);
    special.push_back(edge);
    special.push_back(std::nextafter(edge, -inf));
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> wide(-3.0f, 4.0f);
  std::uniform_int_distribution<int> pick(0, 9);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = pick(rng) == 0 ? special[i % special.size()] : wide(rng);
  return v;
}

// counts[bins + 3]: the bins, then underflow, overflow, NaN, with the binning of histogram.hpp
// done plainly in arithmetic R (double for the CPU version, float for the CUDA one).
template <typename R>
std::vector<std::uint64_t> naive_value_histogram(const std::vector<float>& values, R lo, R hi,
                                                 std::uint32_t bins) {
  std::vector<std::uint64_t> counts(std::size_t(bins) + 3, 0);
  const R scale = R(bins) / (hi - lo);
  for (const float v : values) {
    if (std::isnan(v))
      ++counts[bins + 2];
    else if (R(v) < lo)
      ++counts[bins];
    else if (R(v) >= hi)
      ++counts[bins + 1];
    else
      ++counts[std::min<std::uint64_t>(bins - 1, std::uint64_t(std::floor((R(v) - lo) * scale)))];
  }
  return counts;
}

}  // namespace dcsgrid::test
