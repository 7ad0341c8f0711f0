// The ranks of an MPI job sharing the main job's grid (private to src/app): each rank computes
// its share of the z-slabs, rank 0 receives the others' in z order and alone writes the outputs.
#pragma once
#include <memory>

#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::app {

// Under mpirun with several ranks, this rank's share of its node: the cores split between the
// node's ranks (when the settings leave the thread count open) and one GPU, by its rank on the
// node (when they name none). Otherwise nothing changes.
void choose_rank_hardware(ComputeSettings& compute);

// Under mpirun with several ranks (and a build with MPI): `backend` wrapped so that run() shares
// the slabs out round-robin between the ranks and hands every slab, in z order, to rank 0's sink
// (the other ranks' sinks see none). Otherwise `backend` itself.
std::unique_ptr<engine::Backend> share_slabs_over_ranks(std::unique_ptr<engine::Backend> backend);

}  // namespace dcsgrid::app
