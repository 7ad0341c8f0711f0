// Internal to the analysis layer: which device an analysis step runs on.
#pragma once
#include <string>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::analysis {

// "cpu": false; "gpu": true, or Error when this build or machine has no usable GPU; "auto": true
// when a GPU is usable.
inline bool use_gpu(const std::string& device) {
  if (device == "cpu") return false;
  if (device == "auto") return engine::gpu_available();
  if (device == "gpu") {
    if (!engine::gpu_available())
      throw Error("--device gpu: no usable CUDA device (or this build has no CUDA support)");
    return true;
  }
  throw Error("unknown device '" + device + "': use auto, cpu or gpu");
}

}  // namespace dcsgrid::analysis
