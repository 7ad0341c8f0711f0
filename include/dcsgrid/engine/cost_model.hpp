// The cost models behind --method auto: estimated seconds (set-up and compute) of a method for a
// run's size, fitted to whole runs measured on each backend (docs/msm.md, "Choosing a method"), and
// the error a method is expected to make against the exact sum. A method's description points to
// its model (MethodDescription::seconds_estimate); methods without one are never chosen by auto.
#pragma once
#include <string>

#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/engine/msm_plan.hpp"

namespace dcsgrid::engine {

// Where a run computes: a GPU (the CUDA backend) or this many CPU threads.
struct Hardware {
  bool gpu = false;
  int cpu_threads = 1;
};

// What a cost model reads: the hardware, the atom count, the grid, and the options of the methods
// that have a model.
struct RunSize {
  Hardware hardware;
  double atoms = 0;
  GridSpec grid;
  MsmOptions msm;
};

double direct_seconds_estimate(const RunSize& run);
double msm_seconds_estimate(const RunSize& run);

// The relative L2 error against direct summation measured for these MSM settings on proteins and
// water boxes, as a phrase ("about 1e-4 to 4e-4"), or a pointer to docs/msm.md for settings not
// measured.
std::string expected_msm_error(const RunSize& run);

}  // namespace dcsgrid::engine
