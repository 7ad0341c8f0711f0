// The molecular surface of atoms with radii as a closed triangle mesh: the solvent-accessible
// surface (SAS: the spheres of radius + probe) or the solvent-excluded surface (SES: where a probe
// sphere rolling over the atoms cannot reach; Connolly's surface). docs/surface.md.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/mesh.hpp"

namespace dcsgrid::analysis {

enum class SurfaceKind { ses, sas };
std::string surface_kind_name(SurfaceKind kind);  // "ses", "sas"
// "ses" or "sas"; throws Error naming the text otherwise.
SurfaceKind parse_surface_kind(const std::string& name);

struct SurfaceOptions {
  SurfaceKind kind = SurfaceKind::ses;
  double probe_radius = 1.4;  // Å
  double spacing = 0.5;       // Å: the distance field's grid, about the mesh's edge length
};

// The surface as marching tetrahedra over a signed distance field: SAS, min over atoms of
// |x − a| − (r + probe); SES, probe − the distance to the SAS boundary (sampled where the field's
// grid edges cross it, plus each exposed atom sphere exactly). Vertices lie on the grid's edges
// where the exact field is zero; normals are the field's gradient (unit, outward); faces are
// counter-clockwise seen from outside; each vertex gets the atom whose surface (radius, SES; radius +
// probe, SAS) is nearest. On a union of spheres (the SAS; the SES with probe 0) the creases where
// two spheres meet are put into the mesh: vertices on their circles and where three meet (normal:
// the mean of the spheres'; atom: the lowest-numbered). Every edge is in exactly two faces.
// Multithreaded (team_size()); the same mesh for any number of threads. device ("cpu", "gpu",
// "auto": engine::use_gpu): where the distance fields are computed (the current GPU), the same
// fields, so the same mesh, on either.
// Throws Error for atoms without radii, no atoms, or options out of range; throws when the field
// would not fit in memory.
TriangleMesh molecular_surface(const AtomSet& atoms, const SurfaceOptions& options, const std::string& device = "cpu");

// Each vertex's share of the surface: a third of the area of every face it is in (Å²), summed in
// face order; and the whole area, the faces' areas summed in face order.
struct SurfaceAreas {
  std::vector<double> vertex;
  double total = 0;
};
SurfaceAreas surface_areas(const TriangleMesh& mesh);
double mesh_area(const TriangleMesh& mesh);  // surface_areas' total alone

// How far a mesh is from a closed, consistently oriented 2-manifold: counts of edges in one face
// only (holes), in more than two, and in two faces that traverse it the same way (flipped
// orientation); and the Euler characteristic V − E + F (2 for a sphere, 2 per closed component
// without handles).
struct MeshTopology {
  std::size_t boundary_edges = 0, nonmanifold_edges = 0, misoriented_edges = 0;
  long long euler_characteristic = 0;
  bool closed_manifold() const {
    return boundary_edges == 0 && nonmanifold_edges == 0 && misoriented_edges == 0;
  }
};
MeshTopology mesh_topology(const TriangleMesh& mesh);

}  // namespace dcsgrid::analysis
