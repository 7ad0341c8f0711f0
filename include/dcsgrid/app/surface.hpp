// The molecular surface of a structure coloured by a potential: the mesh (analysis/surface.hpp),
// the potential at its vertices (from a given map, or computed on a grid around the mesh) and the
// potential over each atom's and residue's patch. For `dcsgrid surface` and Python's surface().
#pragma once
#include <string>
#include <vector>

#include "dcsgrid/analysis/surface.hpp"
#include "dcsgrid/analysis/surface_table.hpp"
#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/core/mesh.hpp"
#include "dcsgrid/io/structure/atom_labels.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::app {

// The medium a surface's potential is computed in where the caller chose none: water with
// physiological salt (Debye–Hückel). In vacuum (ε = 1) nearly every vertex of a protein lies
// beyond ±5 kT/e, and the picture is two flat colours.
inline constexpr double kSurfaceDielectric = 78.54;      // water at 298 K
inline constexpr double kSurfaceIonicStrength = 0.15;  // mol/L

struct SurfaceRequest {
  analysis::SurfaceOptions surface;  // kind, probe radius, mesh spacing
  double grid_spacing = 1.0;         // of the potential computed around the mesh, Å
  ComputeSettings compute;           // its method and physics
  // Compute the whole grid (a viewer's script shows it), not only the points the vertices read.
  bool whole_map = false;
};

struct SurfaceResult {
  TriangleMesh mesh;  // value: the potential at each vertex (trilinear, as `dcsgrid sample`)
  analysis::SurfaceTable table;
  io::MapFile map;  // the map computed for the values (empty when the caller gave one)
};

// The structure's atoms need radii. labels: one per atom (io::atom_labels), or empty. map: the
// potential to take (its grid must cover every vertex: else Error naming map_name, how many vertices
// fall outside and how far), or null to compute it.
SurfaceResult compute_surface(const io::Structure& structure, const std::vector<io::AtomLabel>& labels,
                              const SurfaceRequest& request, const io::MapFile* map, const std::string& map_name);

}  // namespace dcsgrid::app
