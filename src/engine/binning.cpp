// Bin geometry of a slab and the capacity rule (host side of binning.hpp).
#include "dcsgrid/engine/binning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::engine {
namespace {

// Offsets are tested against rc plus this much (Å), so an atom that float rounding puts in the
// bin next to its own (within ~1e-5 Å of a face) is still seen by every brick that needs it.
constexpr double kReachMargin = 0.01;

// Edge and pitch ratio along one axis: m bins per brick pitch or k pitches per bin, whichever
// brings the edge closest to target.
void choose_edge(BinAxis& axis, double spacing, double target) {
  const double pitch = kBrickPoints * spacing;
  axis.bins_per_brick = pitch >= target ? std::max(1, int(std::lround(pitch / target))) : 1;
  axis.bricks_per_bin = pitch < target ? std::max(1, int(std::lround(target / pitch))) : 1;
  axis.edge = pitch * axis.bricks_per_bin / axis.bins_per_brick;
}

// Distance along one axis between bin offset d (relative to a brick's anchor bin) and the union of
// the brick's point boxes within that bin.
struct AxisReach {
  double edge, box_lo, box_hi;
  double gap(int d) const { return std::max({0.0, d * edge - box_hi, box_lo - (d + 1) * edge}); }
};

AxisReach axis_reach(const BinAxis& axis, double spacing) {
  const double pitch = kBrickPoints * spacing;
  return {axis.edge, 0.5 * spacing,
          0.5 * spacing + (kBrickPoints - 1) * spacing + (axis.bricks_per_bin - 1) * pitch};
}

// Rows of neighbour offsets for reach R; min/max offset per axis returned through lo/hi.
std::vector<NeighbourRow> neighbour_rows(const std::array<AxisReach, 3>& reach, double R,
                                         std::array<int, 3>& lo, std::array<int, 3>& hi) {
  const double R2 = R * R;
  std::array<int, 3> first, last;
  for (int a = 0; a < 3; ++a) {
    first[a] = int(std::floor((reach[a].box_lo - R) / reach[a].edge)) - 1;
    last[a] = int(std::ceil((reach[a].box_hi + R) / reach[a].edge)) + 1;
    lo[a] = std::numeric_limits<int>::max();
    hi[a] = std::numeric_limits<int>::min();
  }
  std::vector<NeighbourRow> rows;
  for (int dz = first[2]; dz <= last[2]; ++dz) {
    const double gz = reach[2].gap(dz);
    for (int dy = first[1]; dy <= last[1]; ++dy) {
      const double gy = reach[1].gap(dy);
      const double room = R2 - gz * gz - gy * gy;
      if (room <= 0) continue;
      int x0 = 0, len = 0;  // gap along x is V-shaped: the offsets within reach are contiguous
      for (int dx = first[0]; dx <= last[0]; ++dx) {
        const double gx = reach[0].gap(dx);
        if (gx * gx >= room) continue;
        if (len == 0) x0 = dx;
        ++len;
      }
      if (len == 0) continue;
      if (std::max({-x0, x0 + len - 1, std::abs(dy), std::abs(dz)}) > 127 || len > 255)
        return {};  // too far for the packed rows: the caller grows the bins
      rows.push_back({std::int8_t(x0), std::int8_t(dy), std::int8_t(dz), std::uint8_t(len)});
      lo = {std::min(lo[0], x0), std::min(lo[1], dy), std::min(lo[2], dz)};
      hi = {std::max(hi[0], x0 + len - 1), std::max(hi[1], dy), std::max(hi[2], dz)};
    }
  }
  return rows;
}

}  // namespace

std::size_t BinGeometry::neighbour_bins() const {
  std::size_t n = 0;
  for (const auto& r : rows) n += r.len;
  return n;
}

std::string BinGeometry::describe() const {
  return fmt::format("{}x{}x{} bins of {:.3g}x{:.3g}x{:.3g} Å, {} neighbour bins in {} rows",
                     axis[0].bins, axis[1].bins, axis[2].bins, axis[0].edge, axis[1].edge,
                     axis[2].edge, neighbour_bins(), rows.size());
}

BinGeometry make_bin_geometry(const GridSpec& grid, Slab slab, double radius, double target_edge) {
  validate(grid);
  if (!(radius > 0) || !std::isfinite(radius))
    throw Error(fmt::format("cutoff radius must be a positive number of Å, not {}", radius));
  if (slab.z_begin < 0 || slab.z_end > grid.nz() || slab.planes() <= 0)
    throw Error(fmt::format("slab of planes [{}, {}) does not lie in a grid of {} planes",
                            slab.z_begin, slab.z_end, grid.nz()));
  BinGeometry g;
  g.radius = radius;
  g.points = {grid.nx(), grid.ny(), slab.planes()};
  g.skipped_planes = int(slab.z_begin % kBrickPoints);
  g.axis[2].first_brick = int(slab.z_begin / kBrickPoints);
  for (int a = 0; a < 3; ++a) {
    g.frame_origin[a] = float(grid.origin[a]);
    g.spacing[a] = float(grid.spacing[a]);
    g.first_point[a] = float(grid.origin[a] - double(g.frame_origin[a]));
    const std::int64_t points = g.points[a] + (a == 2 ? g.skipped_planes : 0);
    g.axis[a].bricks = int((points + kBrickPoints - 1) / kBrickPoints);
  }

  std::array<int, 3> lo{}, hi{};
  for (double target = target_edge;; target *= 1.25) {
    std::array<AxisReach, 3> reach;
    for (int a = 0; a < 3; ++a) {
      choose_edge(g.axis[a], grid.spacing[a], target);
      reach[a] = axis_reach(g.axis[a], grid.spacing[a]);
    }
    g.rows = neighbour_rows(reach, radius + kReachMargin, lo, hi);
    if (!g.rows.empty() && g.rows.size() <= std::size_t(kMaxNeighbourRows)) break;
  }

  double bins = 1;
  for (int a = 0; a < 3; ++a) {
    BinAxis& ax = g.axis[a];
    ax.halo = -lo[a];
    ax.bins = ax.anchor(ax.bricks - 1) + hi[a] + 1;
    ax.lattice_lower = g.first_point[a] - 0.5 * grid.spacing[a] - ax.halo * ax.edge;
    bins *= ax.bins;
  }
  if (bins >= double(std::numeric_limits<std::int32_t>::max()))
    throw Error(fmt::format("the cutoff bins of this grid ({}x{}x{}) are too many to index",
                            g.axis[0].bins, g.axis[1].bins, g.axis[2].bins));
  return g;
}

BinLookup make_bin_lookup(const BinGeometry& g) {
  BinLookup b{};
  for (int a = 0; a < 3; ++a) {
    b.lower[a] = float(g.axis[a].lattice_lower);
    b.inv_edge[a] = float(1.0 / g.axis[a].edge);
    b.bins[a] = g.axis[a].bins;
    b.first[a] = g.axis[a].first_bin();
  }
  return b;
}

BinOccupancy bin_occupancy(const std::vector<std::uint32_t>& counts_per_bin) {
  BinOccupancy occ;
  const std::uint32_t most =
      counts_per_bin.empty() ? 0 : *std::max_element(counts_per_bin.begin(), counts_per_bin.end());
  occ.bins_with.assign(std::size_t(most) + 2, 0);
  for (std::uint32_t c : counts_per_bin) {
    ++occ.bins_with[c];
    occ.atoms += c;
  }
  return occ;
}

int choose_bin_capacity(const BinOccupancy& occupancy, double fraction, int multiple) {
  if (multiple < 1 || !(fraction > 0 && fraction <= 1))
    throw Error(fmt::format("bin capacity rule: fraction {} and multiple {} are invalid", fraction,
                            multiple));
  const auto round_up = [multiple](std::uint64_t c) {
    return int(std::max<std::uint64_t>(1, (c + multiple - 1) / multiple) * multiple);
  };
  const double need = fraction * double(occupancy.atoms);
  if (occupancy.atoms == 0) return round_up(0);
  const auto& with = occupancy.bins_with;
  // Bins holding at least c atoms, for c = 1: everything but the empty ones.
  std::uint64_t at_least = occupancy.crowded_bins;
  for (std::size_t v = 1; v < with.size(); ++v) at_least += with[v];
  // Σ min(count, c) grows by the number of bins holding at least c atoms as c goes up by one.
  double fitting = 0;
  for (std::size_t c = 1; c < with.size(); ++c) {
    fitting += double(at_least);
    if (fitting >= need) return round_up(c);
    at_least -= with[c];
  }
  return 0;
}

}  // namespace dcsgrid::engine
