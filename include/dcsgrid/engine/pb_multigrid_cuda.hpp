// The multigrid solver of engine/pb_multigrid.hpp on the current CUDA device, float64 throughout:
// the same operator, smoother, grid transfers and coarse operators (engine/pb_stencil.hpp), the
// same preconditioned CG and Newton iterations and the same stopping rule, so a device solve
// agrees with the CPU's to the solver's tolerance. Each V-cycle is one CUDA graph, replayed.
#pragma once
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "dcsgrid/engine/pb_multigrid.hpp"

namespace dcsgrid::engine {

// The operator in device memory, one value per grid point each (x fastest). The solver scales the
// face arrays by 1/h² in place and overwrites c when it solves Newton's method: they are its own
// until it returns.
struct DevicePbOperator {
  std::array<std::int64_t, 3> dims{};
  std::array<double, 3> spacing{1, 1, 1};
  double* eps_x = nullptr;
  double* eps_y = nullptr;
  double* eps_z = nullptr;
  double* c = nullptr;
};

// Device bytes solve_multigrid_cuda allocates beyond the operator, f and u.
std::size_t multigrid_cuda_bytes(const std::array<std::int64_t, 3>& dims, bool newton);

// Solves A u = f (ions == nullptr) or −∇·ε∇u + c·g(u) = f (Newton's method, ions given) on the
// interior, as solve_multigrid and solve_newton do; f and u are device arrays, u holding the
// boundary values on its faces and the initial guess inside. Runs on stream; returns once done.
MultigridReport solve_multigrid_cuda(const DevicePbOperator& op, const double* f, double* u,
                                     const IonTerm* ions, const MultigridOptions& options,
                                     cudaStream_t stream);

}  // namespace dcsgrid::engine
