// batch --average: the mean (and standard deviation) map over the frames, without per-frame maps.
#pragma once
#include "app/batch/distribution.hpp"
#include "app/batch/inputs.hpp"

namespace dcsgrid::app {

// Computes every frame and writes the mean map to o.output (any map format), with --std the
// standard deviation as /potential_std beside it (HDF5 only). Throws Error for a periodic frame
// whose cell differs from the first frame's, and for a run on several MPI ranks.
BatchResult run_average(const BatchOptions& o, const BatchInputs& in, BatchDistribution& d);

}  // namespace dcsgrid::app
