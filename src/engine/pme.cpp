// Smooth particle-mesh Ewald's reciprocal part on the CPU (engine/periodic.hpp).
//
// A charge at mesh coordinate u = K·f (f fractional) spreads onto mesh points floor(u) − j,
// j < p, with weights M_p(u − floor(u) + j) along each axis. With e^{2πi m·f} ≈ b(m)·Σ_k M_p(u −
// k) e^{2πi m·k/K} on both the charges and the output point,
//   φ(r) ≈ Σ_k M_p(u_r − k) φ_mesh(k),   φ_mesh = inverse FFT[ C(m)·|b(m)|²·forward FFT[Q] ],
// C(m) = (4π/V)·e^{−k²/4β²}/k² (0 at m = 0), so spreading and interpolation use one set of
// splines and the phases of b cancel.
//
// Spreading: the atoms are sorted by the slab of mesh planes (along c) that their spline starts
// in; slabs are at least p − 1 planes thick, so an atom writes only into its slab and the one
// below, and the even slabs, then the odd ones, are spread by threads side by side without
// atomics. Interpolation: the lattice is lower triangular (UnitCell), so u3 depends on z only,
// u2 on (y, z) and u1 on (x, y, z): each output plane first sums the p mesh planes its u3 needs
// (K1·K2·p), each row then the p mesh rows its u2 needs (K1·p), each point p values: the work is
// linear in points and mesh, not p³ a point.
#include <algorithm>
#include <cmath>
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
// weights weight[0..P−1]. contiguous: no point wraps, so they are start..start + P − 1 in memory.
template <int P>
struct AscendingSpline {
  std::int64_t start = 0;
  bool contiguous = true;
  double weight[P];
};

template <int P>
AscendingSpline<P> ascending_spline(double u, std::int64_t k) {
  double descending[P];
  bspline_weights(u - std::floor(u), P, descending);
  AscendingSpline<P> a;
  a.start = bspline_first_point(u, k) - (P - 1);
  a.contiguous = a.start >= 0;
  if (!a.contiguous) a.start += k;
  for (int j = 0; j < P; ++j) a.weight[j] = descending[P - 1 - j];
  return a;
}

// The mesh index j points after start, wrapped.
inline std::int64_t after(std::int64_t start, int j, std::int64_t k) {
  const std::int64_t i = start + j;
  return i >= k ? i - k : i;
}

// Adds q·M(u1)M(u2)M(u3) of one atom at mesh coordinates u onto the mesh (K1·K2·K3, x fastest).
template <int P>
void spread_atom(double q, const double (&u)[3], const std::array<std::int64_t, 3>& k, double* mesh) {
  const AscendingSpline<P> sx = ascending_spline<P>(u[0], k[0]), sy = ascending_spline<P>(u[1], k[1]),
                           sz = ascending_spline<P>(u[2], k[2]);
  std::int64_t x[P];
  for (int j = 0; j < P; ++j) x[j] = after(sx.start, j, k[0]);
  for (int j3 = 0; j3 < P; ++j3) {
    const std::int64_t z = after(sz.start, j3, k[2]);
    for (int j2 = 0; j2 < P; ++j2) {
      const std::int64_t y = after(sy.start, j2, k[1]);
      const double w = q * sz.weight[j3] * sy.weight[j2];
      double* row = mesh + (z * k[1] + y) * k[0];
      if (sx.contiguous) {
        double* run = row + sx.start;
        for (int j1 = 0; j1 < P; ++j1) run[j1] += w * sx.weight[j1];
      } else {
        for (int j1 = 0; j1 < P; ++j1) row[x[j1]] += w * sx.weight[j1];
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
  mesh_.assign(fft_.points(), 0.0);
  spectrum_.assign(fft_.half_spectrum_size(), {});
  times_.plan = seconds_since(start);
}

void PmeReciprocal::set_atoms(const AtomSet& atoms) {
  total_charge_ = atoms.total_charge();
  LapTimer timer;
  spread(atoms);
  times_.spread = timer.lap();
  fft_.forward_real(mesh_.data(), spectrum_.data());
  times_.forward = timer.lap();
  const std::int64_t n = std::int64_t(spectrum_.size());
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) spectrum_[i] *= influence_[i];
  times_.solve = timer.lap();
  fft_.inverse_real(spectrum_.data(), mesh_.data());
  times_.inverse = timer.lap();
}

void PmeReciprocal::spread(const AtomSet& atoms) {
  const int order = parameters_.order;
  const std::array<std::int64_t, 3> k{std::int64_t(parameters_.mesh[0]),
                                      std::int64_t(parameters_.mesh[1]),
                                      std::int64_t(parameters_.mesh[2])};
  std::fill(mesh_.begin(), mesh_.end(), 0.0);
  const std::int64_t n = std::int64_t(atoms.size());
  // Each atom's mesh coordinates u = K·f, computed once.
  std::vector<double> u(3 * atoms.size());
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const Vec3 f = cell_.fractional({atoms.x[i], atoms.y[i], atoms.z[i]});
    for (int a = 0; a < 3; ++a) u[std::size_t(3 * i + a)] = f[a] * double(k[a]);
  }
  // Slabs of at least order − 1 planes, an even number of them (so that slab 0 and the last,
  // which meet across the periodic boundary, differ in parity): an atom writes only into the slab
  // its spline starts in and the one below, so the even slabs, then the odd ones, are spread by
  // threads side by side without atomics. Thin slabs also keep the planes a slab's atoms write
  // in cache.
  std::int64_t slabs = std::min<std::int64_t>(kMaxSpreadSlabs, k[2] / (order - 1));
  slabs -= slabs % 2;
  if (slabs < 2) {
    with_order(order, [&](auto p) {
      for (std::size_t i = 0; i < atoms.size(); ++i) {
        const double ui[3] = {u[3 * i], u[3 * i + 1], u[3 * i + 2]};
        spread_atom<decltype(p)::value>(atoms.q[i], ui, k, mesh_.data());
      }
    });
    return;
  }
  // A stable counting sort of the atoms by slab (slab c holds the planes z with z·slabs/K3 = c),
  // into a copy of what spreading reads, so that it reads memory in order; a full sort by mesh
  // cell would read the atoms in random order (measured slower).
  struct MeshCharge {
    double u[3];
    double q;
  };
  std::vector<std::uint32_t> slab_of(atoms.size());
  std::vector<std::size_t> start(std::size_t(slabs) + 1, 0);
  for (std::size_t i = 0; i < atoms.size(); ++i) {
    slab_of[i] = std::uint32_t(bspline_first_point(u[3 * i + 2], k[2]) * slabs / k[2]);
    ++start[slab_of[i] + 1];
  }
  for (std::size_t c = 1; c < start.size(); ++c) start[c] += start[c - 1];
  std::vector<MeshCharge> sorted(atoms.size());
  std::vector<std::size_t> fill(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < atoms.size(); ++i)
    sorted[fill[slab_of[i]]++] = MeshCharge{{u[3 * i], u[3 * i + 1], u[3 * i + 2]}, double(atoms.q[i])};
  with_order(order, [&](auto p) {
    for (std::int64_t parity = 0; parity < 2; ++parity) {
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1)
      for (std::int64_t c = parity; c < slabs; c += 2)
        for (std::size_t m = start[std::size_t(c)]; m < start[std::size_t(c) + 1]; ++m)
          spread_atom<decltype(p)::value>(sorted[m].q, sorted[m].u, k, mesh_.data());
    }
  });
}

namespace {

// dst[n] = Σ_j w[j]·src[j][n] for n < count: the P sources read once each, dst written once.
template <int P>
void weighted_sum(const double* const (&src)[P], const double (&w)[P], std::int64_t count, double* dst) {
  for (std::int64_t n = 0; n < count; ++n) {
    double v = 0;
    for (int j = 0; j < P; ++j) v += w[j] * src[j][n];
    dst[n] = v;
  }
}

// The interpolation onto the slab's planes (PmeReciprocal::add_to) for order P.
template <int P>
void interpolate(const std::vector<double>& mesh, const std::array<std::int64_t, 3>& k, const UnitCell& cell,
                 const GridSpec& grid, Slab slab, double scale, double background, float* out) {
  const std::int64_t k1 = k[0], k2 = k[1], k3 = k[2];
  const std::int64_t nx = grid.nx(), ny = grid.ny();
  const Mat3& r = cell.reciprocal;
  // u1 = K1·(x a*x + y a*y + z a*z): its x part, the same on every row; where a* lies along x
  // (a*y = a*z = 0: b and c have no x component) the whole spline is, and is made once.
  std::vector<double> u1_x(static_cast<std::size_t>(nx));
  for (std::int64_t i = 0; i < nx; ++i) u1_x[std::size_t(i)] = double(k1) * grid.position(i, 0, 0)[0] * r[0][0];
  const bool x_only = r[0][1] == 0 && r[0][2] == 0;
  std::vector<AscendingSpline<P>> x_splines(x_only ? std::size_t(nx) : 0);
  for (std::size_t i = 0; i < x_splines.size(); ++i) x_splines[i] = ascending_spline<P>(u1_x[i], k1);
#pragma omp parallel num_threads(team_size())
  {
    // The row is padded with its first P − 1 values after its end, so that every spline's points
    // are P consecutive values.
    std::vector<double> plane(static_cast<std::size_t>(k1 * k2)), row(static_cast<std::size_t>(k1 + P - 1));
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t kz = slab.z_begin; kz < slab.z_end; ++kz) {
      const double z = grid.position(0, 0, kz)[2];
      // The plane: the P mesh planes of the point's u3, weighted.
      const AscendingSpline<P> s3 = ascending_spline<P>(double(k3) * z * r[2][2], k3);
      const double* planes[P];
      for (int j = 0; j < P; ++j) planes[j] = &mesh[std::size_t(after(s3.start, j, k3) * k1 * k2)];
      weighted_sum<P>(planes, s3.weight, k1 * k2, plane.data());
      for (std::int64_t j = 0; j < ny; ++j) {
        const double y = grid.position(0, j, 0)[1];
        const AscendingSpline<P> s2 = ascending_spline<P>(double(k2) * (y * r[1][1] + z * r[1][2]), k2);
        const double* rows[P];
        for (int m = 0; m < P; ++m) rows[m] = &plane[std::size_t(after(s2.start, m, k2) * k1)];
        weighted_sum<P>(rows, s2.weight, k1, row.data());
        for (int m = 0; m + 1 < P; ++m) row[std::size_t(k1 + m)] = row[std::size_t(m)];
        const double u1_yz = double(k1) * (y * r[0][1] + z * r[0][2]);
        float* dst = out + ((kz - slab.z_begin) * ny + j) * nx;
        for (std::int64_t i = 0; i < nx; ++i) {
          const AscendingSpline<P> s1 =
              x_only ? x_splines[std::size_t(i)] : ascending_spline<P>(u1_x[std::size_t(i)] + u1_yz, k1);
          const double* run = &row[std::size_t(s1.start)];
          double v = 0;
          for (int m = 0; m < P; ++m) v += s1.weight[m] * run[m];
          dst[i] += float(scale * (v - background));
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
    interpolate<decltype(p)::value>(mesh_, k, cell_, grid, slab, scale_, background, out);
  });
}

}  // namespace dcsgrid::engine
