// What the CPU and CUDA scan tests share: the sizes to cover, random inputs, a naive sequential
// reference and the comparison (exact for integers, a tolerance derived from n for floats).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "dcsgrid/prims/scan.hpp"

namespace dcsgrid::test {

// 0, 1, small odd sizes, 2^k − 1, 2^k, 2^k + 1 and 3·2^k − 1, 3·2^k, 3·2^k + 1 for k ≤ max_power
// (tile and chunk edges of either kind), primes, and sizes of several million (many CUDA tiles,
// many CPU chunks).
inline std::vector<std::size_t> scan_test_sizes(int max_power) {
  std::vector<std::size_t> sizes = {0, 1, 2, 3, 5, 7, 97, 7919, 104729, 1299709};
  for (int k = 2; k <= max_power; ++k) {
    const std::size_t p = std::size_t(1) << k;
    sizes.insert(sizes.end(), {p - 1, p, p + 1, 3 * p - 1, 3 * p, 3 * p + 1});
  }
  sizes.insert(sizes.end(), {3145739, 5000011});
  return sizes;
}

// int32: in [−100, 100] (no overflow in the sums); uint32: full range (sums wrap, as documented);
// float: in [0, 1), or small integers when exact (every partial sum exact in float for n < 5.5e6).
template <typename T>
std::vector<T> random_scan_input(std::size_t n, std::uint64_t seed, bool exact_floats = false) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  if constexpr (std::is_same_v<T, std::int32_t>) {
    std::uniform_int_distribution<std::int32_t> d(-100, 100);
    for (auto& x : v) x = d(rng);
  } else if constexpr (std::is_same_v<T, std::uint32_t>) {
    for (auto& x : v) x = std::uint32_t(rng());
  } else {
    std::uniform_real_distribution<float> d(0.0f, 1.0f);
    std::uniform_int_distribution<int> small(0, 3);
    for (auto& x : v) x = exact_floats ? float(small(rng)) : d(rng);
  }
  return v;
}

// Sequential scan: integers in uint32 arithmetic (wrapping), floats in double.
template <typename T>
auto naive_scan(const std::vector<T>& in, prims::ScanKind kind) {
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, std::uint32_t>;
  std::vector<Acc> out(in.size());
  Acc sum = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (kind == prims::ScanKind::inclusive) sum += Acc(in[i]);
    out[i] = sum;
    if (kind == prims::ScanKind::exclusive) sum += Acc(in[i]);
  }
  return out;
}

// Integers must match exactly. Floats: any summation order of m terms errs by at most
// (m − 1)·u·Σ|x| (u = 2^-24), but rounding errors of random sign add up to about √m·u·Σ|x|. We
// allow 2·√n·ε·Σ|x| (ε = 2u, Σ over the terms of that prefix): rigorous for n ≤ 17; measured, a
// sequential loop and the chunked CPU scan reach at most 0.35·√n·ε·Σ|x| (n = 2^16 .. 2^24).
// exact: integer-valued floats whose every partial sum is representable.
template <typename T>
void expect_scan_matches(const std::vector<T>& in, const std::vector<T>& out,
                         prims::ScanKind kind, const std::string& what, bool exact = false) {
  ASSERT_EQ(in.size(), out.size()) << what;
  const auto ref = naive_scan(in, kind);
  const double factor = 2.0 * std::sqrt(double(in.size())) * std::numeric_limits<float>::epsilon();
  double abs_prefix = 0;  // Σ|x| over the terms of out[i]
  std::size_t bad = 0, first_bad = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (kind == prims::ScanKind::inclusive) abs_prefix += std::fabs(double(in[i]));
    bool ok;
    if constexpr (std::is_same_v<T, float>)
      ok = exact ? double(out[i]) == ref[i] : std::fabs(double(out[i]) - ref[i]) <= factor * abs_prefix;
    else
      ok = std::uint32_t(out[i]) == ref[i];
    if (!ok && bad++ == 0) first_bad = i;
    if (kind == prims::ScanKind::exclusive) abs_prefix += std::fabs(double(in[i]));
  }
  EXPECT_EQ(bad, 0u) << what << ": first mismatch at " << first_bad << " of " << in.size()
                     << ": got " << double(out[first_bad]) << ", expected "
                     << double(ref[first_bad]);
}

inline const char* kind_name(prims::ScanKind kind) {
  return kind == prims::ScanKind::inclusive ? "inclusive" : "exclusive";
}

}  // namespace dcsgrid::test
