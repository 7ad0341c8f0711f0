// The CPU FFT against a naive O(N²) discrete Fourier transform written here, on random data:
// 1D sizes with every radix, 3D shapes with odd sizes and unit axes, the real transforms with
// even and odd row lengths and an odd number of rows, and inverse∘forward = N·identity.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/prims/fft.hpp"

namespace dcsgrid::test {
namespace {

using prims::FftDirection;
using prims::FftPlan3d;
using cplx = std::complex<double>;
using Dims = std::array<std::size_t, 3>;

std::vector<cplx> random_complex(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<cplx> v(n);
  for (cplx& c : v) c = {u(rng), u(rng)};
  return v;
}

std::vector<double> random_real(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& c : v) c = u(rng);
  return v;
}

// X[k] = Σ_j x[j] e^{sign·2πi (j·k/n summed over the axes)}, every pair of points, x fastest.
std::vector<cplx> naive_dft(const std::vector<cplx>& x, const Dims& d, double sign) {
  std::vector<cplx> out(x.size());
  const auto phase = [&](std::size_t j, std::size_t k, std::size_t n) {
    return double(j * k % n) / double(n);
  };
  for (std::size_t kz = 0; kz < d[2]; ++kz)
    for (std::size_t ky = 0; ky < d[1]; ++ky)
      for (std::size_t kx = 0; kx < d[0]; ++kx) {
        cplx sum = 0;
        for (std::size_t z = 0; z < d[2]; ++z)
          for (std::size_t y = 0; y < d[1]; ++y)
            for (std::size_t xx = 0; xx < d[0]; ++xx) {
              const double t = phase(xx, kx, d[0]) + phase(y, ky, d[1]) + phase(z, kz, d[2]);
              sum += x[(z * d[1] + y) * d[0] + xx] * std::polar(1.0, sign * 2 * std::numbers::pi * t);
            }
        out[(kz * d[1] + ky) * d[0] + kx] = sum;
      }
  return out;
}

template <typename T>
double relative_error(const std::vector<T>& a, const std::vector<T>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += std::norm(a[i] - ref[i]);
    den += std::norm(ref[i]);
  }
  return std::sqrt(num / den);
}

std::string shape(const Dims& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

TEST(PrimsFft, GoodSizeIsTheNextProductOfSmallPrimes) {
  EXPECT_EQ(prims::fft_good_size(0), 1u);
  EXPECT_EQ(prims::fft_good_size(1), 1u);
  EXPECT_EQ(prims::fft_good_size(11), 12u);
  EXPECT_EQ(prims::fft_good_size(13), 14u);
  EXPECT_EQ(prims::fft_good_size(97), 98u);
  EXPECT_EQ(prims::fft_good_size(101), 105u);
  EXPECT_EQ(prims::fft_good_size(1023), 1024u);
  for (std::size_t n = 1; n < 3000; ++n) {
    const std::size_t g = prims::fft_good_size(n);
    ASSERT_GE(g, n);
    ASSERT_TRUE(prims::fft_size_supported(g)) << n;
    for (std::size_t m = n; m < g; ++m) ASSERT_FALSE(prims::fft_size_supported(m)) << m;
  }
  EXPECT_FALSE(prims::fft_size_supported(0));
  EXPECT_FALSE(prims::fft_size_supported(22));
  EXPECT_TRUE(prims::fft_size_supported(2 * 3 * 5 * 7 * 4 * 9));
}

TEST(PrimsFft, RefusesSizesWithLargePrimeFactors) {
  EXPECT_THROW(FftPlan3d({11, 4, 4}), Error);
  EXPECT_THROW(FftPlan3d({4, 0, 4}), Error);
  try {
    FftPlan3d({4, 4, 26});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("26"), std::string::npos) << e.what();
  }
}

TEST(PrimsFft, OneDimensionalMatchesNaiveDftForEveryRadix) {
  for (std::size_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 14, 15, 16, 21, 25, 27, 35, 49, 64, 98, 100,
                        105, 128, 210, 243, 343, 480}) {
    const Dims d{n, 1, 1};
    const FftPlan3d plan(d);
    for (FftDirection dir : {FftDirection::forward, FftDirection::inverse}) {
      const auto x = random_complex(n, unsigned(n));
      auto y = x;
      plan.transform(y.data(), dir);
      const auto ref = naive_dft(x, d, dir == FftDirection::forward ? -1 : 1);
      EXPECT_LT(relative_error(y, ref), 1e-13) << "n=" << n;
    }
  }
}

TEST(PrimsFft, ThreeDimensionalMatchesNaiveDft) {
  for (const Dims& d : {Dims{4, 6, 5}, Dims{7, 3, 9}, Dims{1, 5, 8}, Dims{10, 1, 1}, Dims{1, 1, 12},
                        Dims{2, 2, 2}, Dims{12, 10, 9}, Dims{21, 1, 10}}) {
    const FftPlan3d plan(d);
    const auto x = random_complex(plan.points(), unsigned(d[0] * 131 + d[1] * 7 + d[2]));
    for (FftDirection dir : {FftDirection::forward, FftDirection::inverse}) {
      auto y = x;
      plan.transform(y.data(), dir);
      const auto ref = naive_dft(x, d, dir == FftDirection::forward ? -1 : 1);
      EXPECT_LT(relative_error(y, ref), 1e-13) << shape(d);
    }
  }
}

TEST(PrimsFft, InverseOfForwardIsNTimesIdentity) {
  // The last shapes have enough points for the threaded path.
  for (const Dims& d : {Dims{48, 35, 27}, Dims{64, 60, 49}, Dims{100, 100, 21}}) {
    const FftPlan3d plan(d);
    const auto x = random_complex(plan.points(), 5);
    auto y = x;
    plan.transform(y.data(), FftDirection::forward);
    plan.transform(y.data(), FftDirection::inverse);
    for (cplx& v : y) v /= double(plan.points());
    EXPECT_LT(relative_error(y, x), 1e-14) << shape(d);
  }
}

TEST(PrimsFft, RealForwardIsTheHalfOfTheComplexSpectrum) {
  // Even and odd row lengths; odd and even row counts (rows are transformed in pairs).
  for (const Dims& d : {Dims{8, 3, 3}, Dims{9, 4, 5}, Dims{1, 3, 7}, Dims{2, 1, 1}, Dims{15, 7, 1},
                        Dims{12, 10, 9}, Dims{7, 1, 1}}) {
    const FftPlan3d plan(d);
    const auto x = random_real(plan.points(), unsigned(d[0] + 10 * d[1] + 100 * d[2]));
    std::vector<cplx> half(plan.half_spectrum_size());
    plan.forward_real(x.data(), half.data());
    const auto full = naive_dft(std::vector<cplx>(x.begin(), x.end()), d, -1);
    const std::size_t h = d[0] / 2 + 1;
    std::vector<cplx> expected(half.size());
    for (std::size_t row = 0; row < d[1] * d[2]; ++row)
      for (std::size_t k = 0; k < h; ++k) expected[row * h + k] = full[row * d[0] + k];
    EXPECT_LT(relative_error(half, expected), 1e-13) << shape(d);
  }
}

TEST(PrimsFft, RealInverseMatchesNaiveInverseOfTheHermitianSpectrum) {
  for (const Dims& d : {Dims{8, 3, 3}, Dims{9, 4, 5}, Dims{6, 5, 1}, Dims{5, 1, 3}, Dims{64, 60, 49}}) {
    const FftPlan3d plan(d);
    const auto x = random_real(plan.points(), 17);
    std::vector<cplx> half(plan.half_spectrum_size());
    plan.forward_real(x.data(), half.data());
    std::vector<double> back(plan.points());
    plan.inverse_real(half.data(), back.data());
    for (double& v : back) v /= double(plan.points());
    EXPECT_LT(relative_error(back, x), 1e-14) << shape(d);
  }
  // A spectrum whose x-frequency-0 entries are not real: those imaginary parts are dropped, and
  // the rest is the naive inverse of the Hermitian extension.
  const Dims d{6, 3, 2};
  const FftPlan3d plan(d);
  const std::size_t h = d[0] / 2 + 1;
  auto half = random_complex(plan.half_spectrum_size(), 3);
  std::vector<cplx> full(plan.points());
  for (std::size_t z = 0; z < d[2]; ++z)
    for (std::size_t y = 0; y < d[1]; ++y)
      for (std::size_t k = 0; k < d[0]; ++k) {
        const std::size_t row = z * d[1] + y;
        const std::size_t mirrored = ((d[2] - z) % d[2]) * d[1] + (d[1] - y) % d[1];
        full[row * d[0] + k] = k < h ? half[row * h + k] : std::conj(half[mirrored * h + d[0] - k]);
      }
  std::vector<double> ref(plan.points());
  const auto inv = naive_dft(full, d, 1);
  // The Hermitian part of the extension (what a real signal can carry): Re of the naive inverse.
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = inv[i].real();
  std::vector<double> out(plan.points());
  plan.inverse_real(half.data(), out.data());
  EXPECT_LT(relative_error(out, ref), 1e-13);
}


// The float transforms against the naive float64 DFT: within float rounding (a few 1e-7 of the
// norm) for every radix and odd and even row lengths, and there and back to the input.
TEST(PrimsFft, FloatRealTransformsMatchTheFloat64Dft) {
  for (const Dims& d : {Dims{8, 3, 3}, Dims{9, 4, 5}, Dims{15, 7, 1}, Dims{14, 10, 9}, Dims{12, 25, 2}}) {
    const FftPlan3d plan(d);
    const auto x = random_real(plan.points(), unsigned(d[0] + 7 * d[1] + 31 * d[2]));
    const std::vector<float> single(x.begin(), x.end());
    std::vector<std::complex<float>> half(plan.half_spectrum_size());
    plan.forward_real(single.data(), half.data());
    const auto full = naive_dft(std::vector<cplx>(single.begin(), single.end()), d, -1);
    const std::size_t h = d[0] / 2 + 1;
    std::vector<cplx> expected(half.size()), got(half.begin(), half.end());
    for (std::size_t row = 0; row < d[1] * d[2]; ++row)
      for (std::size_t k = 0; k < h; ++k) expected[row * h + k] = full[row * d[0] + k];
    EXPECT_LT(relative_error(got, expected), 1e-6) << shape(d);
    std::vector<float> back(plan.points());
    plan.inverse_real(half.data(), back.data());
    std::vector<double> scaled(back.begin(), back.end());
    for (double& v : scaled) v /= double(plan.points());
    EXPECT_LT(relative_error(scaled, std::vector<double>(single.begin(), single.end())), 1e-6) << shape(d);
  }
}

}  // namespace
}  // namespace dcsgrid::test
