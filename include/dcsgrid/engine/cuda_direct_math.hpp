// Reciprocal square root on the FMA pipe, for the CUDA direct-summation kernel. Host and device
// evaluate the same float operations in the same order, so the host tests measure exactly what the
// GPU computes.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "dcsgrid/core/physics.hpp"  // DCSGRID_HD

namespace dcsgrid::engine {

// Seed of the bit trick y0 = bits(kRsqrtMagic − (bits(x) >> 1)): within 3.5% of 1/√x.
inline constexpr std::uint32_t kRsqrtMagic = 0x5f375a86u;
// Newton steps y ← y·(1.5 − x·y²/2) square the error and leave it negative: with this seed, two
// steps end within [−4.7e-6, 0] (mean −1.9e-6). The last step's constant is raised by 16 ulp so the
// error is centred instead, within [−2.9e-6, +2.1e-6] with mean 3e-8 (measured over every float in
// [1, 4), which covers every exponent parity); a zero-mean error averages out in a sum of many
// pairs. Three steps reach float rounding (|error| < 1.5e-7) and need no centring.
inline constexpr float kNewtonHalf3 = 1.5f;
inline constexpr float kNewtonHalf3Centred = 1.50000191f;  // 1.5 + 16 ulp

DCSGRID_HD std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t i;
  std::memcpy(&i, &x, sizeof i);
  return i;
#endif
}

DCSGRID_HD float bits_float(std::uint32_t i) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(i);
#else
  float x;
  std::memcpy(&x, &i, sizeof x);
  return x;
#endif
}

// 1/√x for a normal positive x, on the integer and FMA pipes only (no MUFU): 2 + 3·Steps + 1 ops.
template <int Steps>
DCSGRID_HD float rsqrt_newton(float x) {
  static_assert(Steps == 2 || Steps == 3, "2 steps (error ~2e-6, centred) or 3 (float rounding)");
  const float neg_half_x = -0.5f * x;
  float y = bits_float(kRsqrtMagic - (float_bits(x) >> 1));
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int s = 0; s < Steps; ++s) {
    const float c = (Steps == 2 && s == Steps - 1) ? kNewtonHalf3Centred : kNewtonHalf3;
    y = y * fmaf(neg_half_x, y * y, c);
  }
  return y;
}

}  // namespace dcsgrid::engine
