// Eight-lane float vectors for the CPU engine (private to src/engine), and ScalarMath<v8f>: the
// primitives the pair terms of core/physics.hpp and the cutoff forms of engine/cutoff_form.hpp
// are written in, so the CPU engine instantiates the same form templates for 8 points at once.
// The library is built for x86-64-v3 (AVX2 + FMA); other targets get the same arithmetic
// through GCC's generic vector code.
#pragma once
#include <bit>
#include <cstdint>

#include "dcsgrid/core/scalar_math.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define DCSGRID_CPU_AVX2 1
#endif

namespace dcsgrid::engine::simd {

inline constexpr int kLanes = 8;
using v8f = float __attribute__((vector_size(32)));
using v8i = std::int32_t __attribute__((vector_size(32)));

inline v8f splat(float a) { return v8f{a, a, a, a, a, a, a, a}; }
inline v8f lane_index() { return v8f{0, 1, 2, 3, 4, 5, 6, 7}; }

inline v8f max(v8f a, v8f b) { return a < b ? b : a; }
// a*b + c in one rounding (explicit, so the result does not depend on -ffp-contract).
inline v8f fma(v8f a, v8f b, v8f c) {
#ifdef DCSGRID_CPU_AVX2
  return _mm256_fmadd_ps(a, b, c);
#else
  return a * b + c;
#endif
}
// c − a*b in one rounding.
inline v8f fnma(v8f a, v8f b, v8f c) {
#ifdef DCSGRID_CPU_AVX2
  return _mm256_fnmadd_ps(a, b, c);
#else
  return c - a * b;
#endif
}
// Lanes where mask is set, else 0.
inline v8f select(v8i mask, v8f a) { return mask ? a : v8f{}; }

inline v8f sqrt(v8f x) {
#ifdef DCSGRID_CPU_AVX2
  return _mm256_sqrt_ps(x);
#else
  for (int i = 0; i < kLanes; ++i) x[i] = __builtin_sqrtf(x[i]);
  return x;
#endif
}
inline v8f floor(v8f x) {
#ifdef DCSGRID_CPU_AVX2
  return _mm256_floor_ps(x);
#else
  for (int i = 0; i < kLanes; ++i) x[i] = __builtin_floorf(x[i]);
  return x;
#endif
}
inline v8f ceil(v8f x) {
#ifdef DCSGRID_CPU_AVX2
  return _mm256_ceil_ps(x);
#else
  for (int i = 0; i < kLanes; ++i) x[i] = __builtin_ceilf(x[i]);
  return x;
#endif
}

// Bit i set where lane i of the comparison result m is true.
inline unsigned movemask(v8i m) {
#ifdef DCSGRID_CPU_AVX2
  return unsigned(_mm256_movemask_ps(std::bit_cast<__m256>(m)));
#else
  unsigned bits = 0;
  for (int i = 0; i < kLanes; ++i) bits |= unsigned(m[i] != 0) << i;
  return bits;
#endif
}

// For each 8-bit mask, the lanes whose bit is set, in order (AVX2 has no compress store).
struct PackTable {
  std::int32_t lanes[256][kLanes];
};
constexpr PackTable make_pack_table() {
  PackTable t{};
  for (int m = 0; m < 256; ++m)
    for (int i = 0, k = 0; i < kLanes; ++i)
      if (m >> i & 1) t.lanes[m][k++] = i;
  return t;
}
inline constexpr PackTable kPackTable = make_pack_table();

// Writes the lanes of v whose mask bit is set, in order, to out; returns how many. Stores a whole
// vector: out must have room for 8 values.
template <typename V, typename T>
inline int compress_store(V v, unsigned mask, T* out) {
  static_assert(sizeof(V) == 32 && sizeof(T) == 4);
#ifdef DCSGRID_CPU_AVX2
  const __m256i lanes =
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kPackTable.lanes[mask]));
  const __m256 packed = _mm256_permutevar8x32_ps(std::bit_cast<__m256>(v), lanes);
  _mm256_storeu_ps(reinterpret_cast<float*>(out), packed);
#else
  for (int i = 0, k = 0; i < kLanes; ++i)
    if (mask >> i & 1) out[k++] = v[i];
#endif
  return __builtin_popcount(mask);
}

// 1/sqrt(x) for x > 0 to about 1 ulp: the 12-bit hardware estimate and one Newton step written
// as y + y/2·(1 − x·y²), whose residual is formed with FMA. Faster than sqrt + divide, and
// accurate enough for the 1e-6 (relative L2) goal with a wide margin (bench_cpu_direct
// measures both).
inline v8f rsqrt(v8f x) {
#ifdef DCSGRID_CPU_AVX2
  const v8f y = _mm256_rsqrt_ps(x);
  const v8f residual = fnma(x * y, y, splat(1.0f));
  return fma(y * splat(0.5f), residual, y);
#else
  v8f y;
  for (int i = 0; i < kLanes; ++i) y[i] = 1.0f / __builtin_sqrtf(x[i]);
  return y;
#endif
}

// 1/sqrt(x) as an unevaluated sum hi + lo: hi the 12-bit hardware estimate, lo its Newton
// correction hi/2·(1 − x·hi²). Summed apart, the two keep the estimate's value exactly and the
// correction to float precision, so 1/sqrt(x) is carried to well below one ulp.
struct RsqrtParts {
  v8f hi, lo;
};
inline RsqrtParts rsqrt_parts(v8f x) {
#ifdef DCSGRID_CPU_AVX2
  const v8f y = _mm256_rsqrt_ps(x);
  return {y, y * splat(0.5f) * fnma(x * y, y, splat(1.0f))};
#else
  v8f y;
  for (int i = 0; i < kLanes; ++i) y[i] = 1.0f / __builtin_sqrtf(x[i]);
  return {y, splat(0.0f)};
#endif
}

// 1/x for x > 0 to about 1 ulp: the 12-bit estimate and one Newton step, y + y·(1 − x·y).
inline v8f rcp(v8f x) {
#ifdef DCSGRID_CPU_AVX2
  const v8f y = _mm256_rcp_ps(x);
  return fma(y, fnma(x, y, splat(1.0f)), y);
#else
  return splat(1.0f) / x;
#endif
}

// 2^x for x <= 0, relative error about 1e-7; below −126 it returns 2^−126 instead of
// underflowing (the caller multiplies it by a bounded 1/r). Range reduction x = n + f with n an
// integer and |f| <= 1/2 (exact in float), 2^f = e^t with t = f·ln2 by its Taylor series to
// degree 7 (truncation error 5e-9), 2^n built in the exponent bits.
inline v8f exp2_nonpositive(v8f x) {
  x = max(x, splat(-126.0f));
  const v8f n = __builtin_convertvector(__builtin_convertvector(x - splat(0.5f), v8i), v8f);
  const v8f t = (x - n) * splat(0.693147181f);
  v8f p = splat(1.0f / 5040);
  p = fma(p, t, splat(1.0f / 720));
  p = fma(p, t, splat(1.0f / 120));
  p = fma(p, t, splat(1.0f / 24));
  p = fma(p, t, splat(1.0f / 6));
  p = fma(p, t, splat(0.5f));
  p = fma(p, t, splat(1.0f));
  p = fma(p, t, splat(1.0f));
  const v8i bits = (__builtin_convertvector(n, v8i) + 127) << 23;
  return p * std::bit_cast<v8f>(bits);
}

// e^{−(h + l)} for h ≥ 0 given as an unevaluated sum with |l| ≤ ulp(h) (a square split by FMA),
// relative error about 1e-7 wherever the result is a normal float (h < 87), 0 beyond. −h = n·ln2
// + r with ln2 in two parts (Cody–Waite): n·ln2_hi has few bits, so r is exact before l and the
// small part come off, and the error does not grow with h as it would through exp2(h·log2 e).
// e^r, |r| ≤ 0.35, by its Taylor series to degree 7 (truncation error 6e-9).
inline v8f exp_negative_split(v8f h, v8f l) {
  const v8f n = floor(fma(h, splat(-1.44269504f), splat(0.5f)));
  v8f r = fma(n, splat(-0.693359375f), -h);  // ln2_hi = 355/512, exact products
  r = fma(n, splat(2.12194440e-4f), r) - l;  // ln2 = ln2_hi − 2.12194440e-4
  v8f p = splat(1.0f / 5040);
  p = fma(p, r, splat(1.0f / 720));
  p = fma(p, r, splat(1.0f / 120));
  p = fma(p, r, splat(1.0f / 24));
  p = fma(p, r, splat(1.0f / 6));
  p = fma(p, r, splat(0.5f));
  p = fma(p, r, splat(1.0f));
  p = fma(p, r, splat(1.0f));
  const v8i in_range = n >= splat(-126.0f);
  const v8i bits = (__builtin_convertvector(max(n, splat(-126.0f)), v8i) + 127) << 23;
  return select(in_range, p * std::bit_cast<v8f>(bits));
}

// erfc(x) for x ≥ 0 as e^{−x²}·t·P(s): t = 1/(1 + x) ∈ (1/11, 1] for x ≤ 10, s = 2.2·t − 1.2
// ∈ [−1, 1], and P the degree-12 Chebyshev fit of erfc(x)·e^{x²}/t (1 at x = 0, 0.62 at x = 10;
// fit error 1.4e-8 relative), whose small range keeps Horner's rule in float from cancelling.
// t = 1/(1 + x) rather than 1/(1 + p·x) with p < 1: the rounding of t then moves x by no more
// than its own rounding, where a smaller p magnifies it (2.5× at p = 0.4). t is a correctly
// rounded division, and x² is split exactly (FMA) so that e^{−x²} keeps float precision for
// large x. Relative error about 3e-7 (a few float roundings) up to x = 9 (erfc 4e-37;
// tests/test_engine_cpu_cutoff.cpp measures it); 0 where erfc underflows float.
inline v8f erfc_nonnegative(v8f x) {
  const v8f t = splat(1.0f) / (x + splat(1.0f));
  const v8f s = fma(t, splat(2.2f), splat(-1.2f));
  static constexpr float kP[] = {3.84853579477e-5f, -1.14055451767e-4f, 4.98813145934e-5f,
                                 3.00882992457e-4f, -8.48938713522e-4f, 1.12687011728e-3f,
                                 3.50611455283e-4f, -6.00944977113e-3f, 1.43358061073e-2f,
                                 -4.11168794342e-3f, -8.11263901451e-2f, 2.0003197622e-1f,
                                 8.75976009432e-1f};
  v8f p = splat(kP[0]);
  for (int i = 1; i < 13; ++i) p = fma(p, s, splat(kP[i]));
  const v8f h = x * x;
  return (t * p) * exp_negative_split(h, fma(x, x, -h));
}

// Adds the 8 floats of v to the 8 doubles at sum (the per-point float64 accumulators).
inline void add_to_double(double* sum, v8f v) {
#ifdef DCSGRID_CPU_AVX2
  const __m256 f = v;
  _mm256_storeu_pd(sum, _mm256_add_pd(_mm256_loadu_pd(sum),
                                      _mm256_cvtps_pd(_mm256_castps256_ps128(f))));
  _mm256_storeu_pd(sum + 4, _mm256_add_pd(_mm256_loadu_pd(sum + 4),
                                          _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1))));
#else
  for (int i = 0; i < kLanes; ++i) sum[i] += v[i];
#endif
}

inline v8f load(const float* p) {
  v8f v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, v8f v) { __builtin_memcpy(p, &v, sizeof v); }

}  // namespace dcsgrid::engine::simd

namespace dcsgrid {

template <>
struct ScalarMath<engine::simd::v8f> {
  using v8f = engine::simd::v8f;
  static v8f constant(double c) { return engine::simd::splat(float(c)); }
  static v8f mul_add(v8f a, v8f b, v8f c) { return engine::simd::fma(a, b, c); }
  static v8f neg_mul_add(v8f a, v8f b, v8f c) { return engine::simd::fnma(a, b, c); }
  static v8f max(v8f a, v8f b) { return engine::simd::max(a, b); }
  static v8f recip(v8f x) { return engine::simd::rcp(x); }
  static v8f rsqrt(v8f x) { return engine::simd::rsqrt(x); }
  static v8f exp2(v8f x) { return engine::simd::exp2_nonpositive(x); }
  static v8f erfc(v8f x) { return engine::simd::erfc_nonnegative(x); }
};

}  // namespace dcsgrid
