// The exact Ewald reciprocal sum on the CPU (engine/periodic.hpp), in double. The k vectors are
// k = 2π(m1 a* + m2 b* + m3 c*); e^{±ik·r} = e^{±2πi m·f} with f the fractional coordinates, so a
// point's (or an atom's) phases are three tables of e^{2πi m f_a}, |m| ≤ kmax[a], and each k
// vector costs two complex products. Only half of k space is kept: S(−k) = conj S(k), and the
// pair k, −k adds 2·Re[S(k) e^{ik·r}].
#include <algorithm>
#include <cmath>
#include <numbers>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/periodic.hpp"

namespace dcsgrid::engine {
namespace {

using cplx = std::complex<double>;
constexpr double kTwoPi = 2 * std::numbers::pi;
// Atoms whose phase tables are held at once while S(k) is summed.
constexpr std::size_t kAtomBlock = 1024;

// a·b without the C library's NaN/Inf handling of std::complex products (__muldc3).
cplx mul(cplx a, cplx b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// e^{sign·2πi m f} for m = −kmax..kmax at table[m + kmax].
void phase_table(double f, int kmax, double sign, cplx* table) {
  for (int m = -kmax; m <= kmax; ++m) table[m + kmax] = std::polar(1.0, sign * kTwoPi * m * f);
}

// True for one of each pair k, −k (k ≠ 0): the first nonzero of (m3, m2, m1) is positive.
bool upper_half(int m1, int m2, int m3) {
  return m3 > 0 || (m3 == 0 && (m2 > 0 || (m2 == 0 && m1 > 0)));
}

}  // namespace

EwaldVectors ewald_vectors(const UnitCell& cell, const EwaldParameters& p) {
  if (!(p.beta > 0 && p.k_cutoff > 0))
    throw Error("Ewald reciprocal sum: the Ewald coefficient and k cutoff must be positive");
  // Half the k vectors in the sphere |k| ≤ k_cutoff: (4/3)π k³ V/(2π)³ / 2.
  const double estimate = 2.0 / 3.0 * std::numbers::pi * std::pow(p.k_cutoff, 3) * cell.volume /
                          std::pow(kTwoPi, 3);
  if (estimate > 1.5 * double(kMaxEwaldVectors))
    throw Error(fmt::format("Ewald sum: about {:.3g} k vectors for this cell ({}) and β {:g} Å⁻¹, "
                            "more than the {} the exact sum takes; use --method pme",
                            estimate, cell.describe(), p.beta, kMaxEwaldVectors));
  const double k2_max = p.k_cutoff * p.k_cutoff, four_beta2 = 4 * p.beta * p.beta;
  const auto& r = cell.reciprocal;
  EwaldVectors v;
  for (int m3 = 0; m3 <= p.kmax[2]; ++m3)
    for (int m2 = -p.kmax[1]; m2 <= p.kmax[1]; ++m2)
      for (int m1 = -p.kmax[0]; m1 <= p.kmax[0]; ++m1) {
        if (!upper_half(m1, m2, m3)) continue;
        double k2 = 0;
        for (int d = 0; d < 3; ++d) {
          const double k = kTwoPi * (m1 * r[0][d] + m2 * r[1][d] + m3 * r[2][d]);
          k2 += k * k;
        }
        if (k2 > k2_max) continue;
        if (v.m.size() == kMaxEwaldVectors)
          throw Error(fmt::format("Ewald sum: more than {} k vectors for this cell ({}); use "
                                  "--method pme",
                                  kMaxEwaldVectors, cell.describe()));
        v.m.push_back({m1 + p.kmax[0], m2 + p.kmax[1], m3 + p.kmax[2]});
        v.coefficient.push_back(2 * 4 * std::numbers::pi / cell.volume * std::exp(-k2 / four_beta2) / k2);
      }
  return v;
}

EwaldReciprocal::EwaldReciprocal(const UnitCell& cell, const EwaldParameters& p, double scale,
                                 bool background)
    : cell_(cell), parameters_(p), scale_(scale), background_(background) {
  EwaldVectors v = ewald_vectors(cell, p);
  m_ = std::move(v.m);
  coefficient_ = std::move(v.coefficient);
  structure_factor_.assign(m_.size(), cplx(0));
}

void EwaldReciprocal::set_atoms(const AtomSet& atoms) {
  total_charge_ = atoms.total_charge();
  std::fill(structure_factor_.begin(), structure_factor_.end(), cplx(0));
  const std::array<int, 3>& kmax = parameters_.kmax;
  const std::array<std::size_t, 3> width{std::size_t(2 * kmax[0] + 1), std::size_t(2 * kmax[1] + 1),
                                         std::size_t(2 * kmax[2] + 1)};
  std::array<std::vector<cplx>, 3> phases;
  for (int a = 0; a < 3; ++a) phases[a].resize(kAtomBlock * width[a]);
  for (std::size_t first = 0; first < atoms.size(); first += kAtomBlock) {
    const std::size_t count = std::min(kAtomBlock, atoms.size() - first);
    for (std::size_t j = 0; j < count; ++j) {
      const std::size_t i = first + j;
      const Vec3 f = cell_.fractional({atoms.x[i], atoms.y[i], atoms.z[i]});
      for (int a = 0; a < 3; ++a) phase_table(f[a], kmax[a], -1.0, &phases[a][j * width[a]]);
    }
    const std::int64_t vectors = std::int64_t(m_.size());
#pragma omp parallel for num_threads(team_size()) schedule(static)
    for (std::int64_t k = 0; k < vectors; ++k) {
      const auto& m = m_[k];
      cplx sum = 0;
      for (std::size_t j = 0; j < count; ++j)
        sum += double(atoms.q[first + j]) *
               mul(mul(phases[0][j * width[0] + m[0]], phases[1][j * width[1] + m[1]]),
                   phases[2][j * width[2] + m[2]]);
      structure_factor_[k] += sum;
    }
  }
}

void EwaldReciprocal::add_to(const GridSpec& grid, Slab slab, float* out) const {
  const std::array<int, 3>& kmax = parameters_.kmax;
  const double background =
      background_ ? background_potential(total_charge_, parameters_.beta, cell_.volume) : 0.0;
  const std::int64_t ny = grid.ny(), nx = grid.nx(), vectors = std::int64_t(m_.size());
#pragma omp parallel num_threads(team_size())
  {
    std::array<std::vector<cplx>, 3> phases;
    for (int a = 0; a < 3; ++a) phases[a].resize(std::size_t(2 * kmax[a] + 1));
#pragma omp for collapse(2) schedule(dynamic, 1)
    for (std::int64_t k = slab.z_begin; k < slab.z_end; ++k)
      for (std::int64_t j = 0; j < ny; ++j) {
        float* row = out + ((k - slab.z_begin) * ny + j) * nx;
        for (std::int64_t i = 0; i < nx; ++i) {
          const Vec3 f = cell_.fractional(grid.position(i, j, k));
          for (int a = 0; a < 3; ++a) phase_table(f[a], kmax[a], 1.0, phases[a].data());
          double sum = 0;
          for (std::int64_t v = 0; v < vectors; ++v) {
            const auto& m = m_[v];
            const cplx e = mul(mul(phases[0][m[0]], phases[1][m[1]]), phases[2][m[2]]);
            const cplx s = structure_factor_[v];
            sum += coefficient_[v] * (s.real() * e.real() - s.imag() * e.imag());
          }
          row[i] += float(scale_ * (sum - background));
        }
      }
  }
}

}  // namespace dcsgrid::engine
