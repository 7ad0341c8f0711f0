// The signed distance fields behind analysis::molecular_surface (surface.hpp): values on a grid,
// and the exact field at any point near the surface for placing vertices.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dcsgrid/analysis/surface.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/atom_cells.hpp"

namespace dcsgrid::analysis::detail {

using Vec3 = std::array<double, 3>;

// A cubic grid, x fastest.
struct FieldGrid {
  Vec3 origin{};
  double h = 0.5;
  std::array<std::int64_t, 3> n{};
  std::size_t count() const { return std::size_t(n[0]) * n[1] * n[2]; }
  std::size_t at(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return (std::size_t(k) * n[1] + j) * n[0] + i;
  }
  Vec3 position(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return {origin[0] + h * i, origin[1] + h * j, origin[2] + h * k};
  }
};

// Negative inside. SES: samples are points on the SAS boundary and nearest_sample each node's
// nearest of them (−1: none within reach); both empty for the SAS.
struct SurfaceField {
  FieldGrid grid;
  std::vector<float> value;
  std::vector<Vec3> samples;
  std::vector<std::int32_t> nearest_sample;
};

SurfaceField surface_field(const AtomSet& atoms, const SurfaceOptions& options);

// Appends the parts to `out` one after another, each copied by a thread to its place and then
// freed (a 10^6-atom surface's lists per plane or per atom are gigabytes, which one thread took
// seconds to copy). Returns where each part starts in `out`, and out's size last.
template <class T>
std::vector<std::size_t> concatenate_in_parallel(std::vector<std::vector<T>>& parts, std::vector<T>& out) {
  std::vector<std::size_t> start(parts.size() + 1, out.size());
  for (std::size_t p = 0; p < parts.size(); ++p) start[p + 1] = start[p] + parts[p].size();
  out.resize(start.back());
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 64)
  for (std::int64_t p = 0; p < std::int64_t(parts.size()); ++p) {
    std::copy(parts[std::size_t(p)].begin(), parts[std::size_t(p)].end(), out.begin() + std::ptrdiff_t(start[std::size_t(p)]));
    std::vector<T>().swap(parts[std::size_t(p)]);
  }
  return start;
}

// The field, exact for the SAS, and for the SES the distance to the nearest of the samples of two
// nodes and of the exposed atom spheres, at points near one grid edge.
class SurfaceEvaluator {
 public:
  SurfaceEvaluator(const AtomSet& atoms, const SurfaceOptions& options, const SurfaceField& field);
  // What the points within a body diagonal of a node need (a thread reuses one): the atoms whose
  // sphere may bound them, and the samples to measure from (set per edge: its two nodes').
  struct Local {
    std::vector<std::size_t> atoms;
    std::array<std::int32_t, 2> samples{-1, -1};
  };
  void gather(std::size_t node, Local& local) const;
  void set_edge(std::size_t node_a, std::size_t node_b, Local& local) const;
  // The sphere whose surface gives the field near a point, where the field is zero on it: an
  // atom's SAS sphere (SAS), the atom's own sphere or the probe's at a sample (SES). radius < 0:
  // none (a point deep inside). inside_out: the field is positive inside it (a probe's).
  struct Sphere {
    Vec3 centre{};
    double radius = -1;
    bool inside_out = false;
  };
  // The field at x; sphere, when given, receives the sphere that gives it there.
  double value(const Vec3& x, const Local& local, Sphere* sphere = nullptr) const;
  // The unit outward normal at x, on the surface of sphere (value's), and the atom whose surface
  // is nearest.
  void describe(const Vec3& x, const Local& local, const Sphere& sphere, std::array<float, 3>& normal,
                std::uint32_t& atom) const;

  // Whether the surface is the union of the atoms' spheres of radius + probe (the SAS, and the SES
  // with no probe), whose vertices each lie on the sphere of their atom (describe's).
  bool union_of_spheres() const { return !ses(); }
  Sphere atom_sphere(std::size_t atom) const;
  // The atoms whose sphere (radius + probe) comes within `distance` of x.
  void spheres_near(const Vec3& x, double distance, std::vector<std::size_t>& out) const;

 private:
  // The SES's distance to the SAS boundary, and the feature giving it: a sample (index >= 0) or
  // an atom sphere (−2 − atom).
  double boundary_distance(const Vec3& x, const Local& local, std::int64_t& feature) const;
  bool exposed(const Vec3& q, std::size_t atom) const;
  bool ses() const;

  const AtomSet& atoms_;
  SurfaceOptions options_;
  const SurfaceField& field_;
  engine::AtomCells cells_;
  // SES: each atom's neighbours, the atoms whose SAS sphere meets its own (CSR), which alone can
  // cover a point of its sphere; nearest first (they cover the most), with their centres and
  // squared SAS radii at hand.
  struct Neighbour {
    double x, y, z, reach2;
  };
  std::vector<std::size_t> neighbour_start_;
  std::vector<Neighbour> neighbours_;
};

}  // namespace dcsgrid::analysis::detail
