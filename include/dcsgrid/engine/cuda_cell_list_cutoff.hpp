// The cutoff sum at the points of a skewed grid (a unit cell's own lattice, --grid cell) on the
// GPU, for the periodic methods' real-space part (CUDA builds only). The brick kernel's bins
// (cuda_cutoff.hpp) are laid along an orthogonal grid's bricks; here the atoms are sorted into a
// cell list of cubes of edge rc/2 over the grid's box grown by rc (the binning's stable key order),
// and one thread per grid point sums the atoms of the 5 × 5 × 5 cubes around its own (each row
// of 5 cubes along x one run of memory), testing r < rc. Pair term: the cutoff form's
// cutoff_pair_term in float, summed in double per point. Only the ewald_real form is built (the
// one periodic methods ask for); distances in the frame of the grid origin rounded to float, as
// the brick kernel's, each point's coordinate a float and the float of its remainder.
#pragma once
#include <cuda_runtime.h>

#include <memory>

#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::engine {

// request.cutoff.form must be ewald_real; request.atoms (the images) must stay alive and
// unchanged while the method is used. Throws Error for another form or a cell list beyond 2^26 cubes.
std::unique_ptr<DeviceMethod> make_cell_list_cutoff_method(const PotentialRequest& request, cudaStream_t stream);

}  // namespace dcsgrid::engine
