// Smooth particle-mesh Ewald's reciprocal part on the CPU (engine/periodic.hpp).
//
// A charge at mesh coordinate u = K·f (f fractional) spreads onto mesh points floor(u) − j,
// j < p, with weights M_p(u − floor(u) + j) along each axis. With e^{2πi m·f} ≈ b(m)·Σ_k M_p(u −
// k) e^{2πi m·k/K} on both the charges and the output point,
//   φ(r) ≈ Σ_k M_p(u_r − k) φ_mesh(k),   φ_mesh = inverse FFT[ C(m)·|b(m)|²·forward FFT[Q] ],
// C(m) = (4π/V)·e^{−k²/4β²}/k² (0 at m = 0), so spreading and interpolation use one set of
// splines and the phases of b cancel.
//
// Spreading: each atom's spline origin is computed once and the atoms are sorted by the slab of
// mesh planes (along c) their spline starts in; they are spread onto a mesh padded by p − 1
// planes, rows and columns, so that no spline wraps (the padding is folded back onto the periodic
// mesh after). Slabs are at least p − 1 planes thick, so an atom writes only into its slab and the
// one above, and the even slabs, then the odd ones, are spread by threads side by side without
// atomics. Interpolation: the lattice is lower triangular (UnitCell), so u3 depends on z only,
// u2 on (y, z) and u1 on (x, y, z): each output plane first sums the p mesh planes its u3 needs
// (K1·K2·p), each row then the p mesh rows its u2 needs (K1·p), each point p values: the work is
// linear in points and mesh, not p³ a point. Rows go four at a time, so that where u1 depends on
// x alone one vector multiply-add weighs four rows' values.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <type_traits>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/periodic.hpp"

namespace dcsgrid::engine {
namespace {

// The most slabs spreading sorts the atoms into.
constexpr std::int64_t kMaxSpreadSlabs = 512;
// How many atoms ahead spreading fetches an atom's origin.
constexpr std::int64_t kSpreadPrefetch = 8;

// Calls fn(std::integral_constant<int, P>) for P = order (4..kMaxBsplineOrder): the spline loops
// then have a fixed length, which the compiler unrolls and vectorises.
template <typename Fn>
void with_order(int order, Fn&& fn) {
  static_assert(kMaxBsplineOrder == 12);
  switch (order) {
    case 4: return fn(std::integral_constant<int, 4>{});
    case 5: return fn(std::integral_constant<int, 5>{});
    case 6: return fn(std::integral_constant<int, 6>{});
    case 7: return fn(std::integral_constant<int, 7>{});
    case 8: return fn(std::integral_constant<int, 8>{});
    case 9: return fn(std::integral_constant<int, 9>{});
    case 10: return fn(std::integral_constant<int, 10>{});
    case 11: return fn(std::integral_constant<int, 11>{});
    case 12: return fn(std::integral_constant<int, 12>{});
  }
  throw Error(fmt::format("PME: B-spline order {} is outside 4..{}", order, kMaxBsplineOrder));
}

// One axis of a spline in ascending mesh order: the P points start, start + 1, ... (wrapped) with
// weights weight[0..P−1].
template <int P>
struct AscendingSpline {
  std::int64_t start = 0;
  double weight[P];
};

template <int P>
AscendingSpline<P> ascending_spline(double u, std::int64_t k) {
  double descending[P];
  bspline_weights(u - std::floor(u), P, descending);
  AscendingSpline<P> a;
  a.start = bspline_first_point(u, k) - (P - 1);
  if (a.start < 0) a.start += k;
  for (int j = 0; j < P; ++j) a.weight[j] = descending[P - 1 - j];
  return a;
}

// The mesh index j points after start, wrapped.
inline std::int64_t after(std::int64_t start, int j, std::int64_t k) {
  const std::int64_t i = start + j;
  return i >= k ? i - k : i;
}

// One AVX2 vector (32 bytes) of the spreading mesh's type: four doubles or eight floats. Spreading
// writes whole vectors of a row; interpolation takes four output rows at once.
template <typename T>
struct Simd;
template <>
struct Simd<double> {
  using type = double __attribute__((vector_size(32)));
  using index = std::int64_t __attribute__((vector_size(32)));
  static constexpr int lanes = 4;
};
template <>
struct Simd<float> {
  using type = float __attribute__((vector_size(32)));
  using index = std::int32_t __attribute__((vector_size(32)));
  static constexpr int lanes = 8;
};
using v4d = Simd<double>::type;
template <typename T>
inline typename Simd<T>::type load_vector(const T* p) {
  typename Simd<T>::type v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
inline void store_vector(T* p, typename Simd<T>::type v) {
  std::memcpy(p, &v, sizeof v);
}

// Spreading's padded mesh: the periodic mesh with P − 1 more planes and rows, and rows long enough
// for a spline's run of whole vectors, so that a spline starting at floor(u) (wrapped into [0, K))
// covers padded indices floor(u) .. floor(u) + P − 1 along each axis without wrapping. Padded
// index p belongs to mesh index (p − P + 1) mod K (fold_padded).
struct PaddedShape {
  std::int64_t x, y, z;
  std::size_t points() const { return std::size_t(x * y * z); }
};
template <typename T>
PaddedShape padded_shape(const std::array<std::int64_t, 3>& k, int order) {
  constexpr int lanes = Simd<T>::lanes;
  const std::int64_t run = (order + lanes - 1) / lanes * lanes;
  return {k[0] + run - 1, k[1] + order - 1, k[2] + order - 1};
}

// The P pieces of the cardinal B-spline M_P as polynomials in w ∈ [0, 1): lane j of power[k] is
// the coefficient of w^k in M_P(w + P − 1 − j), the weight of padded point floor(u) + j as
// spread_atom orders them (lanes past P are 0). Made once, in double, by bspline_weights'
// recursion on polynomials: M_n(w + j) = ((w + j)·M_{n−1}(w + j) + (n − j − w)·M_{n−1}(w + j − 1))/(n − 1).
template <int P>
struct SplinePolynomials {
  Simd<float>::type power[P];
};
template <int P>
const SplinePolynomials<P>& spline_polynomials() {
  static const SplinePolynomials<P> table = [] {
    double piece[P][P] = {};  // piece[j][k]: the coefficient of w^k in M_n(w + j)
    piece[0][0] = 1;          // M_1
    for (int n = 2; n <= P; ++n) {
      double next[P][P] = {};
      for (int j = 0; j < n; ++j)
        for (int k = 0; k + 1 < n; ++k) {
          const double a = j + 1 < n ? piece[j][k] : 0.0, b = j >= 1 ? piece[j - 1][k] : 0.0;
          next[j][k] += (j * a + (n - j) * b) / (n - 1);
          next[j][k + 1] += (a - b) / (n - 1);
        }
      std::memcpy(piece, next, sizeof piece);
    }
    SplinePolynomials<P> t{};
    for (int k = 0; k < P; ++k)
      for (int j = 0; j < P; ++j) t.power[k][j] = float(piece[P - 1 - j][k]);
    return t;
  }();
  return table;
}

// The P weights of a spline at w in lanes (SplinePolynomials), by Horner's rule.
template <int P>
inline Simd<float>::type spline_lanes(const SplinePolynomials<P>& s, float w) {
  Simd<float>::type v = s.power[P - 1];
  for (int k = P - 2; k >= 0; --k) v = v * w + s.power[k];
  return v;
}

// Adds q·M(u1)M(u2)M(u3) of one atom onto the padded mesh: P² runs of P points, written as whole
// vectors (the weights past P are zero).
template <int P, typename T>
void spread_atom(const PmeSplineOrigin& a, const PaddedShape& s, T* padded) {
  using V = typename Simd<T>::type;
  constexpr int lanes = Simd<T>::lanes, kVectors = (P + lanes - 1) / lanes;
  T* base = padded + (std::int64_t(a.first[2]) * s.y + a.first[1]) * s.x + a.first[0];
  if constexpr (std::is_same_v<T, float> && P <= lanes) {
    // A run is one vector of weights; a plane's row weights q·w3·w2 are another, each row's taken
    // from its lane.
    using I = Simd<float>::index;
    const SplinePolynomials<P>& polynomials = spline_polynomials<P>();
    const V run_weights = spline_lanes(polynomials, float(a.offset[0]));
    const V row_weights = spline_lanes(polynomials, float(a.offset[1]));
    const V plane_weights = float(a.q) * spline_lanes(polynomials, float(a.offset[2]));
    DCSGRID_HOST_UNROLL
    for (int j3 = 0; j3 < P; ++j3) {
      const V c = __builtin_shuffle(plane_weights, I{} + j3) * row_weights;
      T* plane = base + j3 * s.y * s.x;
      DCSGRID_HOST_UNROLL
      for (int j2 = 0; j2 < P; ++j2) {
        T* run = plane + j2 * s.x;
        store_vector(run, load_vector(run) + __builtin_shuffle(c, I{} + j2) * run_weights);
      }
    }
    return;
  }
  // The three axes' splines at once, in double.
  v4d m[P];  // m[j]: the weight of mesh point floor(u) − j, padded index floor(u) + P − 1 − j
  bspline_weights(v4d{a.offset[0], a.offset[1], a.offset[2], 0.0}, P, m);
  T wx[lanes * kVectors] = {};
  for (int j = 0; j < P; ++j) wx[j] = T(m[P - 1 - j][0]);
  V runs[kVectors];
  for (int r = 0; r < kVectors; ++r) runs[r] = load_vector(wx + lanes * r);
  DCSGRID_HOST_UNROLL
  for (int j3 = 0; j3 < P; ++j3) {
    const double qz = a.q * m[P - 1 - j3][2];
    T* plane = base + j3 * s.y * s.x;
    DCSGRID_HOST_UNROLL
    for (int j2 = 0; j2 < P; ++j2) {
      const T c = T(qz * m[P - 1 - j2][1]);
      T* run = plane + j2 * s.x;
      for (int r = 0; r < kVectors; ++r)
        store_vector(run + lanes * r, load_vector(run + lanes * r) + c * runs[r]);
    }
  }
}

// mesh (K1·K2·K3) ← the padded mesh folded onto it: each mesh index i takes padded index i + P − 1
// and, where i + P − 1 − K ≥ 0, that one as well, along each axis.
template <typename T>
void fold_padded(const T* padded, const PaddedShape& s, int order, const std::array<std::int64_t, 3>& k, T* mesh) {
  const std::int64_t lead = order - 1;
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t z = 0; z < k[2]; ++z)
    for (std::int64_t y = 0; y < k[1]; ++y) {
      T* out = mesh + (z * k[1] + y) * k[0];
      bool first = true;
      for (const std::int64_t pz : {z + lead, z + lead - k[2]}) {
        if (pz < 0) continue;
        for (const std::int64_t py : {y + lead, y + lead - k[1]}) {
          if (py < 0) continue;
          const T* row = padded + (pz * s.y + py) * s.x + lead;
          if (first)
            for (std::int64_t x = 0; x < k[0]; ++x) out[x] = row[x];
          else
            for (std::int64_t x = 0; x < k[0]; ++x) out[x] += row[x];
          for (std::int64_t x = k[0] - lead; x < k[0]; ++x) out[x] += row[x - k[0]];
          first = false;
        }
      }
    }
}

}  // namespace

// For odd orders the sum vanishes at m = K/2 (even K); that entry takes the mean of its neighbours
// (as GROMACS does), a term the e^{−k²/4β²} factor makes negligible anyway.
std::vector<double> bspline_moduli(std::int64_t k, int order) {
  double m_int[kMaxBsplineOrder];
  bspline_weights(0.0, order, m_int);  // M_p(j), j = 0..p−1
  std::vector<double> moduli(static_cast<std::size_t>(k));
  for (std::int64_t m = 0; m < k; ++m) {
    double re = 0, im = 0;
    for (int j = 0; j + 1 < order; ++j) {
      const double angle = 2 * std::numbers::pi * double(m * j % k) / double(k);
      re += m_int[j + 1] * std::cos(angle);
      im += m_int[j + 1] * std::sin(angle);
    }
    const double norm = re * re + im * im;
    moduli[std::size_t(m)] = norm > 1e-10 ? 1.0 / norm : -1.0;
  }
  for (std::int64_t m = 0; m < k; ++m)
    if (moduli[std::size_t(m)] < 0)
      moduli[std::size_t(m)] = 0.5 * (moduli[std::size_t((m + k - 1) % k)] +
                                      moduli[std::size_t((m + 1) % k)]);
  return moduli;
}

void validate_pme(const UnitCell& cell, const PmeParameters& p) {
  if (p.order < 4 || p.order > kMaxBsplineOrder)
    throw Error(fmt::format("--pme-order must lie in 4..{}, got {}", kMaxBsplineOrder, p.order));
  if (!(p.beta > 0 && std::isfinite(p.beta)))
    throw Error(fmt::format("PME: the Ewald coefficient must be positive, got {:g}", p.beta));
  const double points = double(p.mesh[0]) * double(p.mesh[1]) * double(p.mesh[2]);
  if (!(points <= double(kMaxPmeMeshPoints)))
    throw Error(fmt::format("PME mesh {}x{}x{} has more than the {} points this run may "
                            "hold; use a larger --pme-spacing",
                            p.mesh[0], p.mesh[1], p.mesh[2], kMaxPmeMeshPoints));
  for (int a = 0; a < 3; ++a)
    if (p.mesh[a] < std::size_t(p.order))
      throw Error(fmt::format("PME mesh: {} points along cell vector {} are fewer than the "
                              "B-spline order {}",
                              p.mesh[a], "abc"[a], p.order));
  // The interpolation's pass order relies on the lattice's lower triangular form.
  const Mat3& r = cell.reciprocal;
  if (r[1][0] != 0 || r[2][0] != 0 || r[2][1] != 0)
    throw Error("PME: the cell's lattice vectors are not in the lower triangular convention");
}

double background_potential(double total_charge, double beta, double volume) {
  return std::numbers::pi * total_charge / (beta * beta * volume);
}

PmeReciprocal::PmeReciprocal(const UnitCell& cell, const PmeParameters& p, double scale,
                             bool background)
    : cell_(cell), parameters_(p), scale_(scale), background_(background), fft_([&] {
        validate_pme(cell, p);
        return p.mesh;
      }()) {
  const auto start = clock_type::now();
  const std::array<std::int64_t, 3> k{std::int64_t(p.mesh[0]), std::int64_t(p.mesh[1]),
                                      std::int64_t(p.mesh[2])};
  const std::array<std::vector<double>, 3> moduli{
      bspline_moduli(k[0], p.order), bspline_moduli(k[1], p.order), bspline_moduli(k[2], p.order)};
  const std::int64_t h = k[0] / 2 + 1;
  influence_.assign(fft_.half_spectrum_size(), 0.0);
#pragma omp parallel for num_threads(team_size()) collapse(2) schedule(static)
  for (std::int64_t m3 = 0; m3 < k[2]; ++m3)
    for (std::int64_t m2 = 0; m2 < k[1]; ++m2)
      for (std::int64_t m1 = 0; m1 < h; ++m1)
        influence_[std::size_t((m3 * k[1] + m2) * h + m1)] =
            pme_ewald_factor(m1, m2, m3, k[0], k[1], k[2], cell.reciprocal, p.beta, cell.volume) *
            moduli[0][std::size_t(m1)] * moduli[1][std::size_t(m2)] * moduli[2][std::size_t(m3)];
  if (single()) {
    single_mesh_.assign(fft_.points(), 0.0f);
    single_spectrum_.assign(fft_.half_spectrum_size(), {});
  } else {
    mesh_.assign(fft_.points(), 0.0);
    spectrum_.assign(fft_.half_spectrum_size(), {});
  }
  times_.plan = seconds_since(start);
}

void PmeReciprocal::set_atoms(const AtomSet& atoms) {
  total_charge_ = atoms.total_charge();
  if (single()) solve(atoms, padded_single_, single_mesh_, single_spectrum_);
  else solve(atoms, padded_, mesh_, spectrum_);
}

template <typename T>
void PmeReciprocal::solve(const AtomSet& atoms, std::vector<T>& padded, std::vector<T>& mesh,
                          std::vector<std::complex<T>>& spectrum) {
  LapTimer timer;
  spread(atoms, padded, mesh);
  times_.spread = timer.lap();
  fft_.forward_real(mesh.data(), spectrum.data());
  times_.forward = timer.lap();
  const std::int64_t n = std::int64_t(spectrum.size());
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) spectrum[i] *= T(influence_[i]);
  times_.solve = timer.lap();
  fft_.inverse_real(spectrum.data(), mesh.data());
  times_.inverse = timer.lap();
}

std::vector<std::int64_t> PmeReciprocal::sort_by_slab(const AtomSet& atoms, std::int64_t slabs) {
  const std::array<std::int64_t, 3> k{std::int64_t(parameters_.mesh[0]), std::int64_t(parameters_.mesh[1]),
                                      std::int64_t(parameters_.mesh[2])};
  const std::int64_t n = std::int64_t(atoms.size());
  if (atoms.size() > std::numeric_limits<std::uint32_t>::max())
    throw Error(fmt::format("PME: {} atoms are more than the {} one spreading takes", atoms.size(),
                            std::numeric_limits<std::uint32_t>::max()));
  // UnitCell::fractional written out, with the atoms' arrays and the reciprocal lattice in locals:
  // the call and the reloads it forced took as long as spreading's splines.
  const float *x = atoms.x.data(), *y = atoms.y.data(), *z = atoms.z.data(), *q = atoms.q.data();
  const Mat3 reciprocal = cell_.reciprocal;
  auto origin = [&](std::int64_t i) {
    PmeSplineOrigin o;
    for (int a = 0; a < 3; ++a) {
      const Vec3& r = reciprocal[std::size_t(a)];
      const double u = (double(x[i]) * r[0] + double(y[i]) * r[1] + double(z[i]) * r[2]) * double(k[a]);
      o.offset[a] = u - std::floor(u);
      o.first[a] = std::int32_t(bspline_first_point(u, k[a]));
    }
    o.q = q[i];
    return o;
  };
  // Slab c holds the planes z with z·slabs/K3 = c.
  std::vector<std::int64_t> slab_of_plane(static_cast<std::size_t>(k[2]));
  for (std::int64_t z = 0; z < k[2]; ++z) slab_of_plane[std::size_t(z)] = z * slabs / k[2];
  // Each thread takes a contiguous share of the atoms, so the order within a slab is the atoms'
  // order whatever the number of threads.
  const int team = team_size();
  std::vector<std::int64_t> counts(std::size_t(team * slabs), 0), slab_start(std::size_t(slabs) + 1, 0);
  origins_.resize(atoms.size());
  spread_order_.resize(atoms.size());
#pragma omp parallel num_threads(team)
  {
    const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    const std::int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    for (std::int64_t i = begin; i < end; ++i) {
      origins_[std::size_t(i)] = origin(i);
      ++counts[std::size_t(t * slabs + slab_of_plane[std::size_t(origins_[std::size_t(i)].first[2])])];
    }
#pragma omp barrier
#pragma omp single
    {
      std::int64_t sum = 0;  // counts become each thread's first place in each slab
      for (std::int64_t c = 0; c < slabs; ++c) {
        slab_start[std::size_t(c)] = sum;
        for (std::int64_t u = 0; u < team; ++u) {
          const std::int64_t count = counts[std::size_t(u * slabs + c)];
          counts[std::size_t(u * slabs + c)] = sum;
          sum += count;
        }
      }
      slab_start[std::size_t(slabs)] = sum;
    }
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t c = slab_of_plane[std::size_t(origins_[std::size_t(i)].first[2])];
      spread_order_[std::size_t(counts[std::size_t(t * slabs + c)]++)] = std::uint32_t(i);
    }
  }
  return slab_start;
}

template <typename T>
void PmeReciprocal::spread(const AtomSet& atoms, std::vector<T>& padded, std::vector<T>& mesh) {
  const int order = parameters_.order;
  const std::array<std::int64_t, 3> k{std::int64_t(parameters_.mesh[0]), std::int64_t(parameters_.mesh[1]),
                                      std::int64_t(parameters_.mesh[2])};
  const PaddedShape shape = padded_shape<T>(k, order);
  // Slabs of at least order − 1 planes: an atom writes only into the padded planes of the slab its
  // spline starts in and of the one above, so the even slabs, then the odd ones, are spread by
  // threads side by side without atomics. Thin slabs also keep the planes a slab's atoms write in
  // cache.
  const std::int64_t slabs = std::clamp<std::int64_t>(k[2] / (order - 1), 1, kMaxSpreadSlabs);
  const std::vector<std::int64_t> slab_start = sort_by_slab(atoms, slabs);
  padded.resize(shape.points());
  const int team = team_size();
#pragma omp parallel for num_threads(team) schedule(static)
  for (std::int64_t z = 0; z < shape.z; ++z)
    std::fill_n(padded.data() + z * shape.y * shape.x, shape.y * shape.x, T(0));
  with_order(order, [&](auto p) {
    for (std::int64_t parity = 0; parity < 2; ++parity) {
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
      for (std::int64_t c = parity; c < slabs; c += 2)
        for (std::int64_t m = slab_start[std::size_t(c)]; m < slab_start[std::size_t(c) + 1]; ++m) {
          // The origins of a slab lie a dozen records apart: fetch ahead.
          if (m + kSpreadPrefetch < slab_start[std::size_t(c) + 1])
            __builtin_prefetch(&origins_[spread_order_[std::size_t(m + kSpreadPrefetch)]]);
          spread_atom<decltype(p)::value>(origins_[spread_order_[std::size_t(m)]], shape, padded.data());
        }
    }
  });
  fold_padded(padded.data(), shape, order, k, mesh.data());
}

namespace {

// dst[n·stride] = Σ_j w[j]·src[j][n] for n < count: the P sources read once each, dst written once.
template <int P, typename T>
void weighted_sum(const T* const (&src)[P], const T (&w)[P], std::int64_t count, T* dst, std::int64_t stride = 1) {
  for (std::int64_t n = 0; n < count; ++n) {
    T v = 0;
    DCSGRID_HOST_UNROLL
    for (int j = 0; j < P; ++j) v += w[j] * src[j][n];
    dst[n * stride] = v;
  }
}

template <int P, typename T>
void to_type(const double (&from)[P], T (&to)[P]) {
  for (int j = 0; j < P; ++j) to[j] = T(from[j]);
}

// The interpolation onto the slab's planes (PmeReciprocal::add_to) for order P, in the mesh's type.
template <int P, typename T>
void interpolate(const T* mesh, const std::array<std::int64_t, 3>& k, const UnitCell& cell, const GridSpec& grid,
                 Slab slab, double scale, double background, float* out) {
  using V = typename Simd<T>::type;
  constexpr int lanes = Simd<T>::lanes;
  const std::int64_t k1 = k[0], k2 = k[1], k3 = k[2];
  const std::int64_t nx = grid.nx(), ny = grid.ny();
  const Mat3& r = cell.reciprocal;
  // u1 = K1·(x a*x + y a*y + z a*z): its x part, the same on every row; where a* lies along x
  // (a*y = a*z = 0: b and c have no x component) the whole spline is, and is made once.
  std::vector<double> u1_x(static_cast<std::size_t>(nx));
  for (std::int64_t i = 0; i < nx; ++i) u1_x[std::size_t(i)] = double(k1) * grid.position(i, 0, 0)[0] * r[0][0];
  // (On a skewed grid the rows start at other x, so their splines differ.)
  const bool x_only = r[0][1] == 0 && r[0][2] == 0 && grid.skew[0] == 0 && grid.skew[1] == 0;
  std::vector<std::int64_t> x_start(x_only ? std::size_t(nx) : 0);
  std::vector<T> x_weight(x_start.size() * P);
  for (std::size_t i = 0; i < x_start.size(); ++i) {
    const AscendingSpline<P> s1 = ascending_spline<P>(u1_x[i], k1);
    x_start[i] = s1.start;
    for (int m = 0; m < P; ++m) x_weight[i * P + std::size_t(m)] = T(s1.weight[m]);
  }
#pragma omp parallel num_threads(team_size())
  {
    // Output rows go `lanes` at a time: their mesh rows interleaved (value n of row r at
    // [lanes·n + r]) and padded with their first P − 1 values after their end, so that every
    // spline's points are P consecutive vectors, and where the x spline is the same on every row
    // one vector multiply-add weighs the rows at once.
    std::vector<T> plane(static_cast<std::size_t>(k1 * k2)), rows(static_cast<std::size_t>(lanes * (k1 + P - 1)), T(0));
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t kz = slab.z_begin; kz < slab.z_end; ++kz) {
      const double z = grid.position(0, 0, kz)[2];
      // The plane: the P mesh planes of the point's u3, weighted.
      const AscendingSpline<P> s3 = ascending_spline<P>(double(k3) * z * r[2][2], k3);
      const T* planes[P];
      for (int j = 0; j < P; ++j) planes[j] = mesh + after(s3.start, j, k3) * k1 * k2;
      T w3[P];
      to_type(s3.weight, w3);
      weighted_sum<P>(planes, w3, k1 * k2, plane.data());
      for (std::int64_t j0 = 0; j0 < ny; j0 += lanes) {
        const std::int64_t used = std::min<std::int64_t>(lanes, ny - j0);
        double u1_yz[lanes];
        float* dst[lanes];
        for (std::int64_t l = 0; l < used; ++l) {
          const auto first = grid.position(0, j0 + l, kz);  // the row's first point
          const double y = first[1];
          const AscendingSpline<P> s2 = ascending_spline<P>(double(k2) * (y * r[1][1] + z * r[1][2]), k2);
          const T* source_rows[P];
          for (int m = 0; m < P; ++m) source_rows[m] = &plane[std::size_t(after(s2.start, m, k2) * k1)];
          T w2[P];
          to_type(s2.weight, w2);
          T* row = rows.data() + l;
          weighted_sum<P>(source_rows, w2, k1, row, lanes);
          for (int m = 0; m + 1 < P; ++m) row[lanes * (k1 + m)] = row[lanes * m];
          u1_yz[l] = double(k1) * ((first[0] - grid.origin[0]) * r[0][0] + y * r[0][1] + z * r[0][2]);
          dst[l] = out + ((kz - slab.z_begin) * ny + j0 + l) * nx;
        }
        if (x_only) {
          for (std::int64_t i = 0; i < nx; ++i) {
            const T* run = &rows[std::size_t(lanes * x_start[std::size_t(i)])];
            const T* w1 = &x_weight[std::size_t(i) * P];
            V v{};
            DCSGRID_HOST_UNROLL
            for (int m = 0; m < P; ++m) v += w1[m] * load_vector(run + lanes * m);
            const V value = T(scale) * (v - T(background));
            for (std::int64_t l = 0; l < used; ++l) dst[l][i] += float(value[l]);
          }
          continue;
        }
        for (std::int64_t l = 0; l < used; ++l)
          for (std::int64_t i = 0; i < nx; ++i) {
            const AscendingSpline<P> s1 = ascending_spline<P>(u1_x[std::size_t(i)] + u1_yz[l], k1);
            const T* run = &rows[std::size_t(lanes * s1.start + l)];
            double v = 0;
            DCSGRID_HOST_UNROLL
            for (int m = 0; m < P; ++m) v += s1.weight[m] * double(run[lanes * m]);
            dst[l][i] += float(scale * (v - background));
          }
      }
    }
  }
}

}  // namespace

void PmeReciprocal::add_to(const GridSpec& grid, Slab slab, float* out) const {
  const std::array<std::int64_t, 3> k{std::int64_t(parameters_.mesh[0]), std::int64_t(parameters_.mesh[1]),
                                      std::int64_t(parameters_.mesh[2])};
  const double background =
      background_ ? background_potential(total_charge_, parameters_.beta, cell_.volume) : 0.0;
  with_order(parameters_.order, [&](auto p) {
    if (single())
      interpolate<decltype(p)::value>(single_mesh_.data(), k, cell_, grid, slab, scale_, background, out);
    else
      interpolate<decltype(p)::value>(mesh_.data(), k, cell_, grid, slab, scale_, background, out);
  });
}

}  // namespace dcsgrid::engine
