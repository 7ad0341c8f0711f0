// The creases of a union of spheres (the SAS; the SES with no probe) put into its mesh: where two
// atoms' spheres meet, the surface folds along their circle of intersection, and faces cut across
// that fold lose area in proportion to the spacing. docs/surface.md, "Accuracy".
#pragma once
#include "dcsgrid/core/mesh.hpp"
#include "surface_field.hpp"

namespace dcsgrid::analysis::detail {

// Each edge whose two vertices lie on different atoms' spheres is split at the point of the two
// spheres' circle nearest to it, where that point is on the surface (inside no third sphere); each
// face whose three edges were split on three different spheres also takes the point where the
// three meet. Faces are split along the new vertices, in their winding, so the mesh stays closed,
// manifold and oriented. A new vertex's normal is the mean of its spheres' outward normals; its
// atom, the lowest-numbered of its spheres' atoms. The same mesh for any number of threads.
void add_creases(const SurfaceEvaluator& evaluator, double spacing, TriangleMesh& mesh);

}  // namespace dcsgrid::analysis::detail
