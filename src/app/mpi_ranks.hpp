// The ranks of an MPI job sharing the main job's grid (private to src/app). Rank 0 reads the input
// and lays the grid; every rank gets the facts it needs and the atoms its planes need from rank 0,
// computes one contiguous block of planes, and writes it into the one HDF5 file collectively
// (io::Hdf5MapWriter with every_rank). Without MPI, or with one rank, every function here leaves
// things as they are.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::app {

// True under mpirun with several ranks in a build with MPI: the main job's work is shared out.
bool sharing_ranks();

// Under mpirun with several ranks, this rank's share of its node: the cores split between the
// node's ranks (when the settings leave the thread count open) and one GPU, by its rank on the
// node (when they name none). Otherwise nothing changes.
void choose_rank_hardware(ComputeSettings& compute);

// The slabs rank `rank` of `ranks` computes, in z order: its contiguous block of about nz/ranks
// planes cut into slabs of at most 64 MiB (1 GiB for a method with run set-up, its description's
// run_setup, which a backend's compute() builds again for each slab). Empty for a rank with no plane.
std::vector<engine::Slab> rank_slabs(const engine::PotentialRequest& request, int rank, int ranks);

// When sharing ranks: `backend` wrapped so that run() computes this rank's slabs (rank_slabs) and
// calls the sink on EVERY rank once a round, in lockstep, with this rank's next slab or, where it
// has none left, an empty one (z_begin == z_end, no data): collective writers take part with an
// empty selection. Progress is reported by rounds. Otherwise `backend` itself.
std::unique_ptr<engine::Backend> share_slabs_over_ranks(std::unique_ptr<engine::Backend> backend);

// Collective when sharing: rank 0's values of these, on every rank.
void share_text(std::string& text);
void share_facts(std::size_t& atoms, double& total_charge, GridSpec& grid);
void share_methods(std::vector<engine::Method>& methods);
void share_cell(std::optional<UnitCell>& cell);

// Collective when sharing: the atoms this rank computes `request` from. Rank 0 (and a run without
// sharing) keeps `root_atoms`, which it read. The other ranks receive into `received` and get it
// back: every atom when `every_atom` (direct, msm, several methods), else (cutoff) the atoms within
// reach of their planes (the cutoff radius; on a rank whose backend is a GPU, `gpu`, widened to
// the GPU engine's bins around each slab) plus the few that fix the CPU engine's column layout, so
// that each point sums the same atoms in the same order as in one process.
const AtomSet& share_atoms(const AtomSet& root_atoms, const engine::PotentialRequest& request,
                           bool every_atom, bool gpu, AtomSet& received);

// Collective when sharing: every rank's slab of this round (maybe empty) copied into rank 0's
// `whole` map (x fastest, allocated there); the other ranks' `whole` is not touched.
void gather_slabs_to_root(const GridSpec& grid, engine::Slab slab, const float* data,
                          std::vector<float>& whole);

}  // namespace dcsgrid::app
