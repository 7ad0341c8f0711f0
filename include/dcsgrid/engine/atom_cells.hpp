// AtomCells: atoms bucketed in cubes, to find the atoms near a place (PB's surface points, the
// molecular surface's distance fields).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/scalar_math.hpp"  // DCSGRID_HD

namespace dcsgrid::engine {

// AtomCells::near's test of one atom (its packed x, y, z, r) against p: within reach + r. A device
// copy of the cells (cuda_atom_cells.cuh) tests with it too, so both find the same atoms.
DCSGRID_HD bool within_reach(double px, double py, double pz, float ax, float ay, float az, float ar, double reach) {
  const double dx = px - ax, dy = py - ay, dz = pz - az;
  const double reach_a = reach + ar;
  return dx * dx + dy * dy + dz * dz <= reach_a * reach_a;
}

// Cubes of edge `cell` over the atoms' box (smaller cells: fewer atoms tested, more cells
// visited); the atoms need radii. Keeps its own copy of their positions and radii.
class AtomCells {
 public:
  AtomCells(const AtomSet& atoms, double cell);
  // The atoms other than self whose centres lie within reach + their radius of p (self: pass
  // atoms.size() or more to keep every atom).
  void near(const std::array<double, 3>& p, double reach, std::size_t self,
            std::vector<std::size_t>& out) const;

  // The layout, for a copy on a device: cell (cx, cy, cz), numbered x fastest, holds the atoms
  // members()[start()[c]] .. members()[start()[c + 1] − 1] in increasing order, and packed() their
  // x, y, z, r in the same order; an atom at p lies in cell floor((p − lo())/edge()), clamped to
  // counts() − 1.
  double edge() const { return cell_; }
  const std::array<double, 3>& lo() const { return lo_; }
  const std::array<std::int64_t, 3>& counts() const { return n_; }
  const std::vector<std::size_t>& start() const { return start_; }
  const std::vector<std::size_t>& members() const { return members_; }
  const std::vector<std::array<float, 4>>& packed() const { return packed_; }

 private:
  std::array<std::int64_t, 3> cell_coords(const std::array<double, 3>& p) const;
  std::size_t index(const std::array<std::int64_t, 3>& c) const {
    return std::size_t((c[2] * n_[1] + c[1]) * n_[0] + c[0]);
  }
  double cell_, max_radius_ = 0;
  std::array<double, 3> lo_{};
  std::array<std::int64_t, 3> n_{};
  std::vector<std::size_t> start_, members_;
  std::vector<std::array<float, 4>> packed_;  // x, y, z, r of members_, in their order
};

}  // namespace dcsgrid::engine
