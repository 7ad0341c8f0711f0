// The CUDA backend (built when DCSGRID_HAVE_CUDA). Declared for every build so callers need no
// #ifdef beyond the factory.
#pragma once
#include <memory>
#include <vector>

#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::engine {

// Number of CUDA devices usable now (0 without a driver or device, never throws).
int cuda_device_count();
// gpus: device ids, empty for all. Throws Error for ids that do not exist.
std::unique_ptr<Backend> make_cuda_backend(const std::vector<int>& gpus);

}  // namespace dcsgrid::engine
