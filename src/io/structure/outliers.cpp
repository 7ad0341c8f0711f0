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

}  // namespace

std::optional<Outlier> find_outlier(const AtomSet& atoms, double min_gap) {
  const std::size_t n = atoms.size();
  if (n < 3) return std::nullopt;
  // Plain variables, not a structured binding: clang before 16 cannot use one in an OpenMP region.
  const std::array<double, 3> center = sampled_median(atoms);
  const double cx = center[0], cy = center[1], cz = center[2];
  std::vector<double> radius(n);
#pragma omp parallel for simd num_threads(team_size()) if (n > (std::size_t(1) << 16))
  for (std::size_t i = 0; i < n; ++i) radius[i] = distance(atoms, i, cx, cy, cz);

  // The outermost `tail` radii in order: the gap is looked for among them.
  const std::size_t tail = std::min(n - 1, std::max<std::size_t>(16, n / 1000)) + 1;
  std::vector<double> sorted = radius;
  std::nth_element(sorted.begin(), sorted.end() - std::ptrdiff_t(tail), sorted.end());
  const double threshold = *(sorted.end() - std::ptrdiff_t(tail));
  std::vector<std::pair<double, std::size_t>> outer;
  for (std::size_t i = 0; i < n; ++i)
    if (radius[i] >= threshold) outer.emplace_back(radius[i], i);
  std::sort(outer.begin(), outer.end());
  for (std::size_t j = 0; j + 1 < outer.size(); ++j) {
    if (outer[j + 1].first - outer[j].first <= min_gap) continue;
    Outlier o{outer.back().second, HUGE_VAL, outer.size() - 1 - j};
    const double x = atoms.x[o.index], y = atoms.y[o.index], z = atoms.z[o.index];
    for (std::size_t i = 0; i < n; ++i)
      if (i != o.index)
        o.nearest_distance = std::min(o.nearest_distance, distance(atoms, i, x, y, z));
    return o;
  }
  return std::nullopt;
}

}  // namespace dcsgrid::io
