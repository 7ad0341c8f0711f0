// The periodic methods on the GPU (CUDA builds only), composed as on the CPU (PeriodicCpu): the
// real-space part is the CUDA cutoff method with the ewald_real form over the atoms' images near
// the grid (periodic_images, ewald_real_space), and the reciprocal part is added on the same
// stream (pme: PmeReciprocalCuda; ewald: the exact EwaldReciprocalCuda, the reference). The
// smooth map (--smooth) is the reciprocal part alone,
// without background: the slab is zeroed instead of computing a real part.
#pragma once
#include <cuda_runtime.h>

#include <memory>

#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::engine {

class MethodCache;

// Method::ewald and Method::pme on the current device (the request holds the cell). The reciprocal
// part's set-up (pme: the FFT plans and influence function on the device) is taken from cache when
// the last run kept one for the same cell and parameters, and kept there after this run; the cache
// must belong to the device and stream of this method (nullptr: none).
std::unique_ptr<DeviceMethod> make_ewald_device_method(const PotentialRequest& request,
                                                       cudaStream_t stream, MethodCache* cache);
std::unique_ptr<DeviceMethod> make_pme_device_method(const PotentialRequest& request,
                                                     cudaStream_t stream, MethodCache* cache);

}  // namespace dcsgrid::engine
