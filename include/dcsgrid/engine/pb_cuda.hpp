// Poisson–Boltzmann on the current CUDA device: one grid's solve for solve_pb (engine/pb.hpp), and
// the CUDA backend's pb method. The multigrid runs on the device in float64
// (engine/pb_multigrid_cuda.hpp); the potential comes back to the host for the energy.
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/pb.hpp"

namespace dcsgrid::engine {

// Device bytes one grid's solve needs at its peak: the operator, right-hand side and potential,
// and the solver's levels and vectors.
std::size_t pb_device_bytes(const GridSpec& grid, const PbOptions& options);

// A PbGridSolver on the current device (checks the device's free memory first; the error names
// the largest cubic grid that fits).
PbGridSolution pb_solve_grid_cuda(const AtomSet& atoms, const GridSpec& grid, const PbOptions& options,
                                  double scale, const std::vector<double>* boundary);

std::unique_ptr<DeviceMethod> make_pb_device_method(const PotentialRequest& request, cudaStream_t stream);

}  // namespace dcsgrid::engine
