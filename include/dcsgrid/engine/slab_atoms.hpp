// Which atoms a part of the grid needs: what MPI ranks (and any caller that computes some slabs of
// a grid from a subset of the atoms) ask the engine, so that no rule of the engines is written again
// outside it.
#pragma once
#include <vector>

#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::engine {

// The atoms of *request.atoms, in their order, that computing `slabs` of request.grid needs: every
// atom unless the method is local (describe(method).local); for a local method, those within reach
// of the slabs' planes (gpu_bins: of the bins the CUDA engine's bricks read for them) plus the few
// that fix the CPU cutoff engine's column layout, so that the slabs' values are those of a run on
// every atom bit for bit. Radii travel with the atoms.
AtomSet atoms_for_slabs(const PotentialRequest& request, const std::vector<Slab>& slabs, bool gpu_bins);

}  // namespace dcsgrid::engine
