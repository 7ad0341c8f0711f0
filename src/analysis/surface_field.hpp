// The signed distance fields behind analysis::molecular_surface (surface.hpp): values on a grid,
// and the exact field at any point near the surface for placing vertices.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dcsgrid/analysis/surface.hpp"
#include "dcsgrid/engine/atom_cells.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "surface_field_point.hpp"
#include "surface_mesh_point.hpp"

namespace dcsgrid::analysis::detail {

// Negative inside. SES: samples are points on the SAS boundary and nearest_sample each node's
// nearest of them (−1: none within reach); both empty for the SAS.
struct SurfaceField {
  FieldGrid grid;
  std::vector<float> value;
  std::vector<Vec3> samples;
  std::vector<std::int32_t> nearest_sample;
};

// On a GPU where use_gpu(device) says so (surface_field.cu: the same field bit for bit), else on
// the CPU's threads.
SurfaceField surface_field(const AtomSet& atoms, const SurfaceOptions& options, const std::string& device);
// Throws Error when the SES's samples would overflow their 32-bit numbers.
void check_sample_count(std::size_t samples);
#ifdef DCSGRID_HAVE_CUDA
// The values, samples and nearest samples of field.grid (set) on the current device.
void surface_field_cuda(const AtomSet& atoms, const SurfaceOptions& options, SurfaceField& field);
// molecular_surface's mesh of the fields of grid, made on the current device (surface_mesh.cu),
// before any creases; samples receives the number of boundary samples (0: a union of spheres),
// stages the time of each step.
TriangleMesh surface_mesh_cuda(const AtomSet& atoms, const SurfaceOptions& options, const FieldGrid& grid,
                               std::size_t& samples, std::vector<engine::StageTime>& stages);
#endif
// The grid of the fields: the atoms' box grown so that the field is positive on its faces.
FieldGrid field_grid(const AtomSet& atoms, const SurfaceOptions& options);

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
  // The sphere whose surface gives the field near a point (surface_mesh_point.hpp).
  using Sphere = FieldSphere;
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
