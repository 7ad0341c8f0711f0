#include "dcsgrid/engine/atom_cells.hpp"

#include <algorithm>
#include <cmath>

namespace dcsgrid::engine {

AtomCells::AtomCells(const AtomSet& atoms, double cell) : cell_(cell) {
  const Box box = bounding_box(atoms);
  max_radius_ = atoms.r.empty() ? 0.0 : double(*std::max_element(atoms.r.begin(), atoms.r.end()));
  for (int d = 0; d < 3; ++d) {
    lo_[d] = box.lo[d];
    n_[d] = std::int64_t(std::floor((box.hi[d] - box.lo[d]) / cell)) + 1;
  }
  start_.assign(std::size_t(n_[0] * n_[1] * n_[2]) + 1, 0);
  std::vector<std::size_t> cell_of(atoms.size());
  for (std::size_t a = 0; a < atoms.size(); ++a) {
    cell_of[a] = index(cell_coords({atoms.x[a], atoms.y[a], atoms.z[a]}));
    ++start_[cell_of[a] + 1];
  }
  for (std::size_t c = 1; c < start_.size(); ++c) start_[c] += start_[c - 1];
  members_.resize(atoms.size());
  std::vector<std::size_t> fill(start_.begin(), start_.end() - 1);
  for (std::size_t a = 0; a < atoms.size(); ++a) members_[fill[cell_of[a]]++] = a;
  packed_.resize(atoms.size());
  for (std::size_t m = 0; m < members_.size(); ++m) {
    const std::size_t a = members_[m];
    packed_[m] = {atoms.x[a], atoms.y[a], atoms.z[a], atoms.r[a]};
  }
}

void AtomCells::near(const std::array<double, 3>& p, double reach, std::size_t self,
                     std::vector<std::size_t>& out) const {
  out.clear();
  // Only the cells that meet the ball of reach + the largest radius around p.
  const double limit = reach + max_radius_, limit2 = limit * limit;
  const auto gap = [&](int d, std::int64_t c) {  // from p to cell c's slab along axis d
    const double lo = lo_[d] + cell_ * double(c), hi = lo + cell_;
    return p[d] < lo ? lo - p[d] : p[d] > hi ? p[d] - hi : 0.0;
  };
  const auto first = [&](int d, double x) {
    return std::clamp<std::int64_t>(std::int64_t(std::floor((x - lo_[d]) / cell_)), 0, n_[d] - 1);
  };
  for (std::int64_t k = first(2, p[2] - limit), k1 = first(2, p[2] + limit); k <= k1; ++k) {
    const double gz = gap(2, k);
    if (gz * gz > limit2) continue;
    for (std::int64_t j = first(1, p[1] - limit), j1 = first(1, p[1] + limit); j <= j1; ++j) {
      const double gy = gap(1, j), rest = limit2 - gz * gz - gy * gy;
      if (rest < 0) continue;
      const double half = std::sqrt(rest);
      // The row's cells hold consecutive members.
      const std::size_t m0 = start_[index({first(0, p[0] - half), j, k})],
                        m1 = start_[index({first(0, p[0] + half), j, k}) + 1];
      for (std::size_t m = m0; m < m1; ++m) {
        const auto& atom = packed_[m];
        if (within_reach(p[0], p[1], p[2], atom[0], atom[1], atom[2], atom[3], reach) && members_[m] != self)
          out.push_back(members_[m]);
      }
    }
  }
}

std::array<std::int64_t, 3> AtomCells::cell_coords(const std::array<double, 3>& p) const {
  std::array<std::int64_t, 3> c;
  for (int d = 0; d < 3; ++d)
    c[d] = std::clamp<std::int64_t>(std::int64_t(std::floor((p[d] - lo_[d]) / cell_)), 0, n_[d] - 1);
  return c;
}

}  // namespace dcsgrid::engine
