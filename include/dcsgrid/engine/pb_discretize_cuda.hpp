// The Poisson–Boltzmann coefficient maps of pb_discretize.hpp computed on the current CUDA device
// (CUDA builds only), into device arrays of grid.point_count() doubles, x fastest, as the CPU
// functions lay them out. Each call enqueues its work on `stream` and returns once it is done (its
// temporary device memory is freed by then). The numbers are the CPU's: the mol/smol dielectric and
// the accessibility bit for bit, the spline surfaces to 1e-12 (the same operations, in the same
// order), sdh to double rounding; mdh is summed in float64, so it differs from the CPU's (float32
// terms summed in double) by the CPU's own rounding, ~6e-7 relative L2 on a protein's faces.
// The atoms need radii; an empty set or one without radii is refused with an Error.
#pragma once
#include <cuda_runtime.h>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/engine/pb.hpp"

namespace dcsgrid::engine {

// pb_dielectric's eps_x, eps_y, eps_z.
void pb_dielectric_cuda(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double* eps_x,
                        double* eps_y, double* eps_z, cudaStream_t stream);

// pb_ion_accessibility.
void pb_ion_accessibility_cuda(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options,
                               double* access, cudaStream_t stream);

// pb_boundary: the outer faces of phi (the interior untouched); mdh summed on the device, sdh's
// multipole taken on the host and evaluated on the device, zero leaves phi as it is.
void pb_boundary_cuda(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options, double scale,
                      double* phi, cudaStream_t stream);

}  // namespace dcsgrid::engine
