// The CPU backend: the reference implementation and the fallback without a GPU.
#pragma once
#include <memory>

#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::engine {

std::unique_ptr<Backend> make_cpu_backend();

// Direct Coulomb summation of planes [slab.z_begin, slab.z_end) into out, OpenMP threads and SIMD
// lanes along x. out holds plane_size*planes floats.
void direct_sum_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel, Slab slab,
                    float* out);

}  // namespace dcsgrid::engine
