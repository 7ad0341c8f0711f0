// The CPU FFT of prims/fft.hpp. A 3D transform is three passes of 1D transforms, one per axis.
// Each pass gathers a batch of up to kBatch lines into a buffer, the j-th values of the batch's
// lines side by side (split into real and imaginary arrays), so every butterfly of the Stockham
// stages runs over kBatch·stride contiguous doubles, which the compiler vectorises; along y and z
// the batch is kBatch neighbouring columns, so the gather reads whole runs of memory.
//
// Stockham stage of radix R on a line of current length n_s = R·m, stride s (the product of the
// radices before it), w = e^{∓2πi/n_s}:
//   y[q + s(R·p + u)] = w^{p·u} · Σ_t x[q + s(p + t·m)] · e^{∓2πi t·u/R},  p < m, q < s, u < R
// (a decimation in frequency that leaves the output in natural order after the last stage).
//
// Real transforms pair rows: rows A and B go in as A + iB, and after the complex transform
// A[k] = (Z[k] + conj Z[n−k])/2, B[k] = (Z[k] − conj Z[n−k])/2i; the inverse builds
// Z = A + iB from the two half spectra and reads A and B back as its real and imaginary parts.
#include "dcsgrid/prims/fft.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::prims {
namespace {

// Lines per gathered batch: 16 columns of complex doubles are 4 cache lines a row, and the
// buffers of a 128-point line (4 · 16 · 128 doubles) stay in L2.
constexpr std::size_t kBatch = 16;
// Below this many points a transform runs on one thread (a parallel region costs more).
constexpr std::size_t kMinParallelPoints = std::size_t(1) << 15;

// A batch of lines in split form: value j of line b at [j·width + b].
template <typename T>
struct Lines {
  T* re;
  T* im;
};

// The plan's forward twiddles in the transform's type.
template <typename T>
const std::vector<T>& twiddles_re(const FftAxisPlan& p) {
  if constexpr (std::is_same_v<T, double>) return p.twiddle_re;
  else return p.twiddle_re_single;
}
template <typename T>
const std::vector<T>& twiddles_im(const FftAxisPlan& p) {
  if constexpr (std::is_same_v<T, double>) return p.twiddle_im;
  else return p.twiddle_im_single;
}

// cos and sin of 2πk/R, k < R.
template <int R, typename T>
struct Roots {
  T c[R], s[R];
};
template <int R, typename T>
const Roots<R, T>& roots() {
  static const Roots<R, T> r = [] {
    Roots<R, T> t{};
    for (int k = 0; k < R; ++k) {
      t.c[k] = T(std::cos(2 * std::numbers::pi * k / R));
      t.s[k] = T(std::sin(2 * std::numbers::pi * k / R));
    }
    return t;
  }();
  return r;
}

// v[u] ← Σ_t v[t]·e^{∓2πi t·u/R} (− forward, + inverse), in place.
template <int R, bool Inverse, typename T>
inline void butterfly(T (&vr)[R], T (&vi)[R], const Roots<R, T>& w) {
  constexpr T sign = Inverse ? 1 : -1;
  if constexpr (R == 2) {
    const T r = vr[0] - vr[1], i = vi[0] - vi[1];
    vr[0] += vr[1];
    vi[0] += vi[1];
    vr[1] = r;
    vi[1] = i;
  } else if constexpr (R == 4) {
    const T t0r = vr[0] + vr[2], t0i = vi[0] + vi[2], t1r = vr[0] - vr[2], t1i = vi[0] - vi[2];
    const T t2r = vr[1] + vr[3], t2i = vi[1] + vi[3], t3r = vr[1] - vr[3], t3i = vi[1] - vi[3];
    vr[0] = t0r + t2r;
    vi[0] = t0i + t2i;
    vr[2] = t0r - t2r;
    vi[2] = t0i - t2i;
    vr[1] = t1r - sign * t3i;  // t1 + sign·i·t3
    vi[1] = t1i + sign * t3r;
    vr[3] = t1r + sign * t3i;
    vi[3] = t1i - sign * t3r;
  } else {
    // Odd R: pair t with R − t. y_u = a0 + Σ_t cos·(a_t + a_{R−t}) ± i·sign·Σ_t sin·(a_t − a_{R−t}).
    constexpr int h = (R - 1) / 2;
    T pr[h + 1], pi[h + 1], mr[h + 1], mi[h + 1];
    T y0r = vr[0], y0i = vi[0];
    for (int t = 1; t <= h; ++t) {
      pr[t] = vr[t] + vr[R - t];
      pi[t] = vi[t] + vi[R - t];
      mr[t] = vr[t] - vr[R - t];
      mi[t] = vi[t] - vi[R - t];
      y0r += pr[t];
      y0i += pi[t];
    }
    for (int u = 1; u <= h; ++u) {
      T ar = vr[0], ai = vi[0], br = 0, bi = 0;
      for (int t = 1; t <= h; ++t) {
        const int k = (t * u) % R;
        ar += w.c[k] * pr[t];
        ai += w.c[k] * pi[t];
        br += w.s[k] * mr[t];
        bi += w.s[k] * mi[t];
      }
      // sign·i·b = (−sign·b.im, sign·b.re)
      vr[u] = ar - sign * bi;
      vi[u] = ai + sign * br;
      vr[R - u] = ar + sign * bi;
      vi[R - u] = ai - sign * br;
    }
    vr[0] = y0r;
    vi[0] = y0i;
  }
}

// One Stockham stage of radix R over blocks of L = s·width contiguous values.
template <int R, bool Inverse, typename T>
void stage(Lines<T> x, Lines<T> y, std::size_t m, std::size_t L, const T* twr, const T* twi) {
  const Roots<R, T>& w = roots<R, T>();
  for (std::size_t p = 0; p < m; ++p) {
    T wr[R], wi[R];
    for (int u = 1; u < R; ++u) {
      wr[u] = twr[p * (R - 1) + u - 1];
      wi[u] = Inverse ? -twi[p * (R - 1) + u - 1] : twi[p * (R - 1) + u - 1];
    }
    const T* __restrict ar[R];
    const T* __restrict ai[R];
    T* __restrict br[R];
    T* __restrict bi[R];
    for (int t = 0; t < R; ++t) {
      ar[t] = x.re + (p + t * m) * L;
      ai[t] = x.im + (p + t * m) * L;
      br[t] = y.re + (R * p + t) * L;
      bi[t] = y.im + (R * p + t) * L;
    }
#pragma omp simd
    for (std::size_t e = 0; e < L; ++e) {
      T vr[R], vi[R];
      for (int t = 0; t < R; ++t) {
        vr[t] = ar[t][e];
        vi[t] = ai[t][e];
      }
      butterfly<R, Inverse, T>(vr, vi, w);
      br[0][e] = vr[0];
      bi[0][e] = vi[0];
      for (int u = 1; u < R; ++u) {
        br[u][e] = vr[u] * wr[u] - vi[u] * wi[u];
        bi[u][e] = vr[u] * wi[u] + vi[u] * wr[u];
      }
    }
  }
}

// Transforms `width` lines held in a, with b as scratch; returns the buffer holding the result.
template <bool Inverse, typename T>
Lines<T> run_stages(const FftAxisPlan& plan, std::size_t width, Lines<T> a, Lines<T> b) {
  std::size_t L = width;
  for (const FftStage& s : plan.stages) {
    const T* twr = twiddles_re<T>(plan).data() + s.twiddles;
    const T* twi = twiddles_im<T>(plan).data() + s.twiddles;
    switch (s.radix) {
      case 2: stage<2, Inverse, T>(a, b, s.m, L, twr, twi); break;
      case 3: stage<3, Inverse, T>(a, b, s.m, L, twr, twi); break;
      case 4: stage<4, Inverse, T>(a, b, s.m, L, twr, twi); break;
      case 5: stage<5, Inverse, T>(a, b, s.m, L, twr, twi); break;
      case 7: stage<7, Inverse, T>(a, b, s.m, L, twr, twi); break;
    }
    std::swap(a, b);
    L *= std::size_t(s.radix);
  }
  return a;
}

FftAxisPlan make_axis_plan(std::size_t n) {
  if (!fft_size_supported(n))
    throw Error("FFT: size " + std::to_string(n) +
                " is not a product of the factors 2, 3, 5 and 7 (use fft_good_size)");
  FftAxisPlan plan;
  plan.n = n;
  std::size_t length = n;
  while (length > 1) {
    int radix = 7;
    for (int r : {4, 2, 3, 5, 7})
      if (length % std::size_t(r) == 0) {
        radix = r;
        break;
      }
    FftStage s{radix, length / std::size_t(radix), plan.twiddle_re.size()};
    for (std::size_t p = 0; p < s.m; ++p)
      for (int u = 1; u < radix; ++u) {
        const double angle = -2 * std::numbers::pi * double(p * std::size_t(u)) / double(length);
        plan.twiddle_re.push_back(std::cos(angle));
        plan.twiddle_im.push_back(std::sin(angle));
      }
    plan.stages.push_back(s);
    length = s.m;
  }
  plan.twiddle_re_single.assign(plan.twiddle_re.begin(), plan.twiddle_re.end());
  plan.twiddle_im_single.assign(plan.twiddle_im.begin(), plan.twiddle_im.end());
  return plan;
}

// The lines of one pass: `count` lines of n values `stride` apart; line i starts at
// (i / inner)·outer_step + (i % inner)·inner_step. Batches take neighbouring i of one outer.
struct AxisLines {
  std::size_t n, stride, inner, inner_step, outer, outer_step;
};

// Lines along axis a of an array of shape d (x fastest).
AxisLines axis_lines(const std::array<std::size_t, 3>& d, int a) {
  const std::size_t plane = d[0] * d[1];
  if (a == 0) return {d[0], 1, d[1] * d[2], d[0], 1, 0};
  if (a == 1) return {d[1], d[0], d[0], 1, d[2], plane};
  return {d[2], plane, plane, 1, 1, 0};
}

// Calls fn(lines, batch begin, batch width, buffers) for every batch of up to kBatch lines
// (rows in pairs for the real passes, count = pairs), threads over batches, each thread with
// its own buffers of 4·n·kBatch values.
template <typename T, typename Fn>
void for_each_batch(std::size_t n, std::size_t inner, std::size_t outer, std::size_t points,
                    Fn&& fn) {
  const std::size_t per_outer = (inner + kBatch - 1) / kBatch, batches = outer * per_outer;
#pragma omp parallel num_threads(team_size()) if (points >= kMinParallelPoints)
  {
    std::vector<T> buffer(4 * n * kBatch);
    const Lines<T> a{buffer.data(), buffer.data() + n * kBatch};
    const Lines<T> b{buffer.data() + 2 * n * kBatch, buffer.data() + 3 * n * kBatch};
#pragma omp for schedule(static)
    for (std::size_t c = 0; c < batches; ++c) {
      const std::size_t o = c / per_outer, first = (c % per_outer) * kBatch;
      fn(o, first, std::min(kBatch, inner - first), a, b);
    }
  }
}

template <bool Inverse, typename T>
void transform_axis(const FftAxisPlan& plan, const AxisLines& g, T* data, std::size_t points) {
  if (plan.n == 1) return;
  for_each_batch<T>(g.n, g.inner, g.outer, points,
                    [&](std::size_t o, std::size_t first, std::size_t width, Lines<T> a, Lines<T> b) {
    const std::size_t base = o * g.outer_step + first * g.inner_step;
    for (std::size_t j = 0; j < g.n; ++j)
      for (std::size_t l = 0; l < width; ++l) {
        const T* v = data + 2 * (base + l * g.inner_step + j * g.stride);
        a.re[j * width + l] = v[0];
        a.im[j * width + l] = v[1];
      }
    const Lines<T> r = run_stages<Inverse>(plan, width, a, b);
    for (std::size_t j = 0; j < g.n; ++j)
      for (std::size_t l = 0; l < width; ++l) {
        T* v = data + 2 * (base + l * g.inner_step + j * g.stride);
        v[0] = r.re[j * width + l];
        v[1] = r.im[j * width + l];
      }
  });
}

// Forward real transform of `rows` rows of n reals into rows of n/2 + 1 complex values.
template <typename T>
void forward_real_rows(const FftAxisPlan& plan, const T* in, std::size_t rows, T* out) {
  const std::size_t n = plan.n, h = n / 2 + 1, pairs = (rows + 1) / 2;
  for_each_batch<T>(n, pairs, 1, n * rows, [&](std::size_t, std::size_t first, std::size_t width,
                                               Lines<T> a, Lines<T> b) {
    for (std::size_t l = 0; l < width; ++l) {
      const std::size_t row = 2 * (first + l);
      const T* ra = in + row * n;
      const T* rb = row + 1 < rows ? in + (row + 1) * n : nullptr;
      for (std::size_t j = 0; j < n; ++j) {
        a.re[j * width + l] = ra[j];
        a.im[j * width + l] = rb ? rb[j] : T(0);
      }
    }
    const Lines<T> z = run_stages<false>(plan, width, a, b);
    constexpr T half = 0.5;
    for (std::size_t l = 0; l < width; ++l) {
      const std::size_t row = 2 * (first + l);
      T* oa = out + 2 * row * h;
      T* ob = row + 1 < rows ? out + 2 * (row + 1) * h : nullptr;
      for (std::size_t k = 0; k < h; ++k) {
        const std::size_t zk = k * width + l, wk = ((n - k) % n) * width + l;
        const T zr = z.re[zk], zi = z.im[zk], wr = z.re[wk], wi = z.im[wk];
        oa[2 * k] = half * (zr + wr);
        oa[2 * k + 1] = half * (zi - wi);
        if (ob) {
          ob[2 * k] = half * (zi + wi);
          ob[2 * k + 1] = half * (wr - zr);
        }
      }
    }
  });
}

// Inverse real transform of `rows` half-spectrum rows into rows of n reals.
template <typename T>
void inverse_real_rows(const FftAxisPlan& plan, const T* in, std::size_t rows, T* out) {
  const std::size_t n = plan.n, h = n / 2 + 1, pairs = (rows + 1) / 2;
  for_each_batch<T>(n, pairs, 1, n * rows, [&](std::size_t, std::size_t first, std::size_t width,
                                               Lines<T> a, Lines<T> b) {
    for (std::size_t l = 0; l < width; ++l) {
      const std::size_t row = 2 * (first + l);
      const T* sa = in + 2 * row * h;
      const T* sb = row + 1 < rows ? in + 2 * (row + 1) * h : nullptr;
      for (std::size_t k = 0; k < n; ++k) {
        // The half spectrum's value at k, or the conjugate of its value at n − k; a real
        // signal's spectrum is real at 0 and n/2.
        const bool stored = k < h;
        const std::size_t s = stored ? k : n - k;
        const bool real_only = s == 0 || 2 * s == n;
        const T conj = stored ? 1 : -1;
        const T ar = sa[2 * s], ai = real_only ? T(0) : conj * sa[2 * s + 1];
        const T br = sb ? sb[2 * s] : T(0), bi = sb && !real_only ? conj * sb[2 * s + 1] : T(0);
        a.re[k * width + l] = ar - bi;  // A + iB
        a.im[k * width + l] = ai + br;
      }
    }
    const Lines<T> z = run_stages<true>(plan, width, a, b);
    for (std::size_t l = 0; l < width; ++l) {
      const std::size_t row = 2 * (first + l);
      for (std::size_t j = 0; j < n; ++j) out[row * n + j] = z.re[j * width + l];
      if (row + 1 < rows)
        for (std::size_t j = 0; j < n; ++j) out[(row + 1) * n + j] = z.im[j * width + l];
    }
  });
}

}  // namespace

bool fft_size_supported(std::size_t n) {
  if (n == 0) return false;
  for (std::size_t p : {2, 3, 5, 7})
    while (n % p == 0) n /= p;
  return n == 1;
}

std::size_t fft_good_size(std::size_t n) {
  std::size_t m = std::max<std::size_t>(n, 1);
  while (!fft_size_supported(m)) ++m;
  return m;
}

FftPlan3d::FftPlan3d(const std::array<std::size_t, 3>& dims) : dims_(dims) {
  for (int a = 0; a < 3; ++a) axes_[a] = make_axis_plan(dims[a]);
}

void FftPlan3d::transform(std::complex<double>* data, FftDirection direction) const {
  double* d = reinterpret_cast<double*>(data);
  for (int a = 0; a < 3; ++a) {
    if (direction == FftDirection::forward)
      transform_axis<false>(axes_[a], axis_lines(dims_, a), d, points());
    else
      transform_axis<true>(axes_[a], axis_lines(dims_, a), d, points());
  }
}

namespace {

template <typename T>
void forward_real_3d(const std::array<std::size_t, 3>& dims, const std::array<FftAxisPlan, 3>& axes,
                     const T* in, std::complex<T>* out) {
  T* d = reinterpret_cast<T*>(out);
  forward_real_rows(axes[0], in, dims[1] * dims[2], d);
  const std::array<std::size_t, 3> half{dims[0] / 2 + 1, dims[1], dims[2]};
  const std::size_t points = dims[0] * dims[1] * dims[2];
  for (int a = 1; a < 3; ++a) transform_axis<false>(axes[a], axis_lines(half, a), d, points);
}

template <typename T>
void inverse_real_3d(const std::array<std::size_t, 3>& dims, const std::array<FftAxisPlan, 3>& axes,
                     std::complex<T>* in, T* out) {
  T* d = reinterpret_cast<T*>(in);
  const std::array<std::size_t, 3> half{dims[0] / 2 + 1, dims[1], dims[2]};
  const std::size_t points = dims[0] * dims[1] * dims[2];
  for (int a = 2; a >= 1; --a) transform_axis<true>(axes[a], axis_lines(half, a), d, points);
  inverse_real_rows(axes[0], d, dims[1] * dims[2], out);
}

}  // namespace

void FftPlan3d::forward_real(const double* in, std::complex<double>* out) const {
  forward_real_3d(dims_, axes_, in, out);
}
void FftPlan3d::forward_real(const float* in, std::complex<float>* out) const {
  forward_real_3d(dims_, axes_, in, out);
}
void FftPlan3d::inverse_real(std::complex<double>* in, double* out) const {
  inverse_real_3d(dims_, axes_, in, out);
}
void FftPlan3d::inverse_real(std::complex<float>* in, float* out) const {
  inverse_real_3d(dims_, axes_, in, out);
}

}  // namespace dcsgrid::prims
