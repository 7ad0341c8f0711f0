#include <algorithm>
#include <array>
#include <cmath>

#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::io {
namespace {

// The per-axis median of up to 4096 atoms taken at a fixed stride: a central point that a few
// wild atoms cannot move, found in time independent of the size.
std::array<double, 3> sampled_median(const AtomSet& atoms) {
  constexpr std::size_t kSamples = 4096;
  const std::size_t stride = std::max<std::size_t>(1, atoms.size() / kSamples);
  std::array<double, 3> center{};
  const std::vector<float>* axes[3] = {&atoms.x, &atoms.y, &atoms.z};
  for (int a = 0; a < 3; ++a) {
    std::vector<float> sample;
    for (std::size_t i = 0; i < atoms.size(); i += stride) sample.push_back((*axes[a])[i]);
    const auto middle = sample.begin() + std::ptrdiff_t(sample.size() / 2);
    std::nth_element(sample.begin(), middle, sample.end());
    center[a] = *middle;
  }
  return center;
}

// In double: squares of float32 coordinates cannot overflow there.
double distance(const AtomSet& atoms, std::size_t i, double x, double y, double z) {
  const double dx = atoms.x[i] - x, dy = atoms.y[i] - y, dz = atoms.z[i] - z;
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

// The atoms whose distance from `center` is among the `tail` largest (ties at the smallest of
// those included), as (distance, index) in ascending order. A histogram of the distances finds
// the bin that holds the tail's smallest, so only the atoms from that bin on are collected and
// sorted: three passes over the atoms (in parallel for many) and no array of n distances.
std::vector<std::pair<double, std::size_t>> outermost(const AtomSet& atoms, const std::array<double, 3>& center,
                                                      std::size_t tail) {
  const std::ptrdiff_t n = std::ptrdiff_t(atoms.size());
  const double cx = center[0], cy = center[1], cz = center[2];
  const bool parallel = n > (std::ptrdiff_t(1) << 16);
  double farthest = 0;
#pragma omp parallel for num_threads(team_size()) reduction(max : farthest) if (parallel)
  for (std::ptrdiff_t i = 0; i < n; ++i) farthest = std::max(farthest, distance(atoms, std::size_t(i), cx, cy, cz));
  // A bin of each distance, non-decreasing in it: the distances from any bin on include the tail.
  // About 64 atoms a bin, up to 2^14 bins (a small structure's check stays small).
  const int bins = int(std::clamp<std::ptrdiff_t>(n / 64, 64, std::ptrdiff_t(1) << 14));
  const double per_angstrom = farthest > 0 ? bins / farthest : 0;
  const auto bin_of = [&](double r) { return std::min(bins - 1, int(r * per_angstrom)); };
  std::vector<std::size_t> counts(std::size_t(bins), 0);
#pragma omp parallel num_threads(team_size()) if (parallel)
  {
    std::vector<std::size_t> mine(std::size_t(bins), 0);
#pragma omp for schedule(static) nowait
    for (std::ptrdiff_t i = 0; i < n; ++i) ++mine[std::size_t(bin_of(distance(atoms, std::size_t(i), cx, cy, cz)))];
#pragma omp critical
    for (int b = 0; b < bins; ++b) counts[std::size_t(b)] += mine[std::size_t(b)];
  }
  int first_bin = bins - 1;
  for (std::size_t above = counts.back(); above < tail && first_bin > 0;) above += counts[std::size_t(--first_bin)];
  std::vector<std::pair<double, std::size_t>> outer;
#pragma omp parallel num_threads(team_size()) if (parallel)
  {
    std::vector<std::pair<double, std::size_t>> mine;
#pragma omp for schedule(static) nowait
    for (std::ptrdiff_t i = 0; i < n; ++i)
      if (const double r = distance(atoms, std::size_t(i), cx, cy, cz); bin_of(r) >= first_bin) mine.emplace_back(r, i);
#pragma omp critical
    outer.insert(outer.end(), mine.begin(), mine.end());
  }
  std::sort(outer.begin(), outer.end());
  // From the tail's smallest distance on (the atoms from first_bin on number at least `tail`).
  const double threshold = outer[outer.size() - tail].first;
  outer.erase(outer.begin(), std::lower_bound(outer.begin(), outer.end(), std::pair{threshold, std::size_t(0)}));
  return outer;
}

}  // namespace

std::optional<Outlier> find_outlier(const AtomSet& atoms, double min_gap) {
  const std::size_t n = atoms.size();
  if (n < 3) return std::nullopt;
  // The outermost `tail` distances from the centre: the gap is looked for among them.
  const std::size_t tail = std::min(n - 1, std::max<std::size_t>(16, n / 1000)) + 1;
  const std::vector<std::pair<double, std::size_t>> outer = outermost(atoms, sampled_median(atoms), tail);
  for (std::size_t j = 0; j + 1 < outer.size(); ++j) {
    if (outer[j + 1].first - outer[j].first <= min_gap) continue;
    Outlier o{outer.back().second, HUGE_VAL, outer.size() - 1 - j};
    const double x = atoms.x[o.index], y = atoms.y[o.index], z = atoms.z[o.index];
    double nearest = HUGE_VAL;
#pragma omp parallel for num_threads(team_size()) reduction(min : nearest) if (n > (std::size_t(1) << 16))
    for (std::size_t i = 0; i < n; ++i)
      if (i != o.index) nearest = std::min(nearest, distance(atoms, i, x, y, z));
    o.nearest_distance = nearest;
    return o;
  }
  return std::nullopt;
}

}  // namespace dcsgrid::io
