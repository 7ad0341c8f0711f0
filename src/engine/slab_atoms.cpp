#include "dcsgrid/engine/slab_atoms.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "dcsgrid/engine/binning.hpp"

namespace dcsgrid::engine {
namespace {

// Squared distance from v to [lo, hi]: the CPU cutoff engine's test of an atom near the grid box.
double outside2(double v, double lo, double hi) {
  const double d = v < lo ? lo - v : (v > hi ? v - hi : 0.0);
  return d * d;
}

// The atoms that set the CPU cutoff engine's columns (cpu_cutoff.cpp, make_columns): among the
// atoms within rc of the grid box, those of least and greatest y and z. With them, a subset of
// the atoms is laid out in the same columns as the whole set, so each row sums its atoms in the
// same order. Atom 0 too, so that no rank's set is empty.
std::vector<std::size_t> column_anchors(const AtomSet& atoms, const GridSpec& grid, double rc) {
  const Box box = grid.bounds();
  std::array<std::size_t, 4> best{0, 0, 0, 0};
  bool any = false;
  for (std::size_t a = 0; a < atoms.size(); ++a) {
    if (!(outside2(atoms.x[a], box.lo[0], box.hi[0]) + outside2(atoms.y[a], box.lo[1], box.hi[1]) +
              outside2(atoms.z[a], box.lo[2], box.hi[2]) < rc * rc))
      continue;
    if (!any) best.fill(a);
    any = true;
    if (atoms.y[a] < atoms.y[best[0]]) best[0] = a;
    if (atoms.y[a] > atoms.y[best[1]]) best[1] = a;
    if (atoms.z[a] < atoms.z[best[2]]) best[2] = a;
    if (atoms.z[a] > atoms.z[best[3]]) best[3] = a;
  }
  std::vector<std::size_t> anchors(best.begin(), best.end());
  anchors.push_back(0);
  std::ranges::sort(anchors);
  anchors.erase(std::unique(anchors.begin(), anchors.end()), anchors.end());
  return anchors;
}

// The z range (Å) of the atoms a cutoff computation of these slabs can use: each slab's planes
// widened by the radius and, on a GPU, by the z extent of the GPU engine's bins for it
// (binning.hpp: the bricks overhang the slab and the bins the bricks), with a margin for rounding.
// Empty (lo > hi) without slabs.
std::array<double, 2> reach_in_z(const PotentialRequest& request,
                                 const std::vector<Slab>& slabs, bool gpu_bins) {
  const GridSpec& grid = request.grid;
  const double rc = request.cutoff.radius;
  std::array<double, 2> range{INFINITY, -INFINITY};
  for (const Slab& slab : slabs) {
    range[0] = std::min(range[0], grid.position(0, 0, slab.z_begin)[2] - rc);
    range[1] = std::max(range[1], grid.position(0, 0, slab.z_end - 1)[2] + rc);
    if (!gpu_bins) continue;
    const BinGeometry bins = make_bin_geometry(grid, slab, rc);
    const BinAxis& z = bins.axis[2];
    const double bins_lo = double(bins.frame_origin[2]) + z.lower();
    range[0] = std::min(range[0], bins_lo);
    range[1] = std::max(range[1], bins_lo + z.bins * z.edge);
  }
  const double margin = 1e-3 + 1e-6 * std::max(std::abs(range[0]), std::abs(range[1]));
  return {range[0] - margin, range[1] + margin};
}

}  // namespace

AtomSet atoms_for_slabs(const PotentialRequest& request, const std::vector<Slab>& slabs, bool gpu_bins) {
  const AtomSet& atoms = *request.atoms;
  if (!describe(request.method).local) return atoms;
  const std::vector<std::size_t> anchors = column_anchors(atoms, request.grid, request.cutoff.radius);
  const auto [lo, hi] = reach_in_z(request, slabs, gpu_bins);
  const bool radii = atoms.has_radii();
  AtomSet out;
  const auto from = atoms.columns(radii);
  const auto to = out.columns(radii);
  auto anchor = anchors.begin();
  for (std::size_t a = 0; a < atoms.size(); ++a) {
    const bool is_anchor = anchor != anchors.end() && *anchor == a;
    if (is_anchor) ++anchor;
    if (is_anchor || (atoms.z[a] >= lo && atoms.z[a] <= hi))
      for (std::size_t c = 0; c < from.size(); ++c) to[c]->push_back((*from[c])[a]);
  }
  return out;
}

}  // namespace dcsgrid::engine
