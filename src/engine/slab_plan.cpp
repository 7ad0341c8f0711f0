#include "dcsgrid/engine/slab_plan.hpp"

#include <algorithm>

namespace dcsgrid::engine {

std::int64_t slab_planes(std::int64_t preferred, std::int64_t allowed, std::int64_t plane_multiple) {
  const std::int64_t m = std::max<std::int64_t>(plane_multiple, 1);
  const std::int64_t cap = std::max<std::int64_t>(std::min(preferred, allowed), 1);
  if (cap >= m) return cap / m * m;
  return allowed >= m ? m : cap;
}

std::vector<Slab> plan_slabs(Slab range, std::int64_t cap, std::int64_t devices,
                             std::int64_t plane_multiple) {
  const std::int64_t planes = range.planes();
  std::int64_t count = std::max((planes + cap - 1) / cap, std::min(planes, 2 * devices));
  const std::int64_t balanced = (count + devices - 1) / devices * devices;
  if (balanced <= planes) count = balanced;
  std::int64_t per_slab = (planes + count - 1) / count;  // <= cap
  const std::int64_t m = std::max<std::int64_t>(plane_multiple, 1);
  // Bounds at multiples of per_slab from the multiple at or below the range's start; rounding
  // per_slab down keeps at least `count` slabs.
  std::int64_t base = range.z_begin;
  if (cap % m == 0) {
    per_slab = std::max(m, per_slab / m * m);
    base -= range.z_begin % m;
  }
  std::vector<Slab> slabs;
  for (std::int64_t z = base; z < range.z_end; z += per_slab)
    slabs.push_back({std::max(z, range.z_begin), std::min(range.z_end, z + per_slab)});
  return slabs;
}

}  // namespace dcsgrid::engine
