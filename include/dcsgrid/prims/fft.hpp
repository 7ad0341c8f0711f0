// Fast Fourier transforms of double (and, real↔complex, float) data on the CPU: 3D complex↔complex and real↔complex
// (half spectrum), for sizes whose prime factors are 2, 3, 5 and 7 (the PME mesh takes such
// sizes, fft_good_size). Our own code, so that the CPU build needs no FFT library: a
// mixed-radix Stockham transform (radices 4, 2, 3, 5, 7; twiddles precomputed in the plan),
// applied to batches of lines gathered into a contiguous buffer, OpenMP threads over batches.
//
// Conventions (those of FFTW): arrays are x fastest; forward is X[k] = Σ_j x[j] e^{−2πi jk/n}
// along each axis, inverse the same with e^{+2πi jk/n}; neither is normalised, so inverse∘forward
// multiplies by nx·ny·nz. The real transforms keep the half spectrum along x: nx/2 + 1 complex
// values per row (x fastest), the rest being the complex conjugates.
#pragma once
#include <array>
#include <complex>
#include <cstddef>
#include <vector>

namespace dcsgrid::prims {

// The smallest 2^a·3^b·5^c·7^d at or above n (1 for n = 0).
std::size_t fft_good_size(std::size_t n);
// True when n ≥ 1 has no prime factor above 7.
bool fft_size_supported(std::size_t n);

enum class FftDirection { forward, inverse };

// One axis of a plan: the Stockham stages and their twiddles.
struct FftStage {
  int radix = 2;
  std::size_t m = 1;             // butterflies per stage = n_stage / radix
  std::size_t twiddles = 0;      // offset of this stage's (radix − 1)·m twiddles
};
struct FftAxisPlan {
  std::size_t n = 1;
  std::vector<FftStage> stages;
  std::vector<double> twiddle_re, twiddle_im;  // forward twiddles e^{−2πi p·u/n_stage}
  std::vector<float> twiddle_re_single, twiddle_im_single;  // the same, rounded to float
};

// A plan for one 3D shape; const after construction, so threads may share it.
class FftPlan3d {
 public:
  // Throws Error when a size is 0 or has a prime factor above 7.
  explicit FftPlan3d(const std::array<std::size_t, 3>& dims);

  const std::array<std::size_t, 3>& dims() const { return dims_; }
  std::size_t points() const { return dims_[0] * dims_[1] * dims_[2]; }
  // Complex values of the half spectrum: (nx/2 + 1)·ny·nz.
  std::size_t half_spectrum_size() const { return (dims_[0] / 2 + 1) * dims_[1] * dims_[2]; }

  // In place, nx·ny·nz values.
  void transform(std::complex<double>* data, FftDirection direction) const;
  // Forward transform of nx·ny·nz reals into the half spectrum (in double, or in float: the same
  // stages, with float twiddles).
  void forward_real(const double* in, std::complex<double>* out) const;
  void forward_real(const float* in, std::complex<float>* out) const;
  // Inverse transform of a half spectrum (overwritten) into nx·ny·nz reals. The imaginary parts
  // that a real signal's spectrum cannot have (x frequency 0, and nx/2 for even nx) are ignored.
  void inverse_real(std::complex<double>* in, double* out) const;
  void inverse_real(std::complex<float>* in, float* out) const;

 private:
  std::array<std::size_t, 3> dims_;
  std::array<FftAxisPlan, 3> axes_;
};

}  // namespace dcsgrid::prims
