#include "dcsgrid/core/waterbox.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <vector>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid {
namespace {

// splitmix64: a tiny generator whose stream is fixed by its definition (std::uniform_*_distribution
// is not, across standard libraries).
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

using Mat3 = std::array<std::array<double, 3>, 3>;

// A uniformly distributed rotation, from a uniformly distributed unit quaternion (Shoemake).
Mat3 random_rotation(Random& rng) {
  const double u1 = rng.uniform(), u2 = 2 * M_PI * rng.uniform(), u3 = 2 * M_PI * rng.uniform();
  const double a = std::sqrt(1 - u1), b = std::sqrt(u1);
  const double w = a * std::sin(u2), x = a * std::cos(u2), y = b * std::sin(u3), z = b * std::cos(u3);
  return {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
           {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
           {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}

// One water per site (i, j, k) of a cubic lattice of the given spacing, site centres at
// (i + 1/2)·spacing, jittered and randomly turned.
AtomSet place_waters(const std::vector<std::array<std::int64_t, 3>>& sites, double spacing,
                     Random& rng) {
  const double half = kWaterHOHDegrees / 2 * M_PI / 180;
  const std::array<std::array<double, 3>, 2> hydrogens = {
      {{kWaterOH * std::sin(half), kWaterOH * std::cos(half), 0},
       {-kWaterOH * std::sin(half), kWaterOH * std::cos(half), 0}}};
  AtomSet atoms;
  atoms.reserve(3 * sites.size());
  for (const auto& site : sites) {
    std::array<double, 3> o;
    for (int a = 0; a < 3; ++a)
      o[a] = (double(site[a]) + 0.5 + 0.3 * (rng.uniform() - 0.5)) * spacing;
    const Mat3 r = random_rotation(rng);
    atoms.push_back(o[0], o[1], o[2], kWaterChargeO);
    for (const auto& h : hydrogens) {
      std::array<double, 3> p = o;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) p[i] += r[i][j] * h[j];
      atoms.push_back(p[0], p[1], p[2], kWaterChargeH);
    }
  }
  return atoms;
}

std::vector<std::array<std::int64_t, 3>> lattice(std::int64_t n) {
  std::vector<std::array<std::int64_t, 3>> sites;
  sites.reserve(std::size_t(n * n * n));
  for (std::int64_t k = 0; k < n; ++k)
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) sites.push_back({i, j, k});
  return sites;
}

double liquid_spacing() { return std::cbrt(1.0 / kWaterDensity); }  // 3.10 Å

}  // namespace

AtomSet water_box(double edge, std::uint64_t seed) {
  if (!(edge > 0) || !std::isfinite(edge))
    throw Error("water box: the edge must be a positive length in Å");
  const std::int64_t n = std::max<std::int64_t>(1, std::llround(edge / liquid_spacing()));
  Random rng{seed};
  return place_waters(lattice(n), edge / double(n), rng);
}

AtomSet water_box_atoms(std::size_t atoms, std::uint64_t seed) {
  if (atoms == 0) throw Error("water box: ask for at least one atom");
  const std::size_t molecules = (atoms + 2) / 3;
  std::int64_t n = std::max<std::int64_t>(1, std::int64_t(std::cbrt(double(molecules))));
  while (std::size_t(n * n * n) < molecules) ++n;
  Random rng{seed};
  auto sites = lattice(n);
  for (std::size_t i = sites.size() - 1; i > 0; --i)  // Fisher–Yates with our own generator
    std::swap(sites[i], sites[std::size_t(rng.next() % (i + 1))]);
  sites.resize(molecules);
  return place_waters(sites, liquid_spacing(), rng);
}

}  // namespace dcsgrid
