// Multilevel summation's long-range part on the GPU (CUDA builds only): the same plan and
// arithmetic as MsmLongRange (engine/msm.hpp), with the level grids in device memory
// (float64, as on the CPU: the level sums cancel strongly for neutral systems, and FP64 runs at
// half the FP32 rate on the H100).
//
// No step is serialised by atomics: anterpolation gathers, one thread per level-0 node, from the
// atoms binned (on the device, by a stable radix sort) by the first node they reach; restriction and
// prolongation are one kernel per axis (factored, O(p·M)); each level's stencil and the top
// level's all-pairs sum are one thread per point; output interpolation folds the p level-0
// planes of each output plane first (z), then sums p² nodes per output point (y, x).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/msm_plan.hpp"

namespace dcsgrid::engine {

class MsmLongRangeCuda {
 public:
  // Builds the hierarchy on the current device, on stream (which it synchronises before
  // returning, so host staging buffers can go). scale: k_C·unit/ε (PairKernel::scale).
  MsmLongRangeCuda(const AtomSet& atoms, const GridSpec& output, float scale,
                   const MsmOptions& options, cudaStream_t stream);

  // Adds φ_long at planes [slab.z_begin, slab.z_end) of the output grid to out (device memory in
  // layout, slab.planes() planes), on stream. Const and stream-ordered: slabs on different
  // streams may run at once.
  void add_to(Slab slab, float* out, SlabLayout layout, cudaStream_t stream) const;

  const MsmPlan& plan() const { return plan_; }
  // The constructor's stages: plan, binning, anterpolation, restriction, level stencils,
  // prolongation, output weights.
  const std::vector<StageTime>& setup_stages() const { return stages_; }
  // Level 0's potential, copied to the host (synchronous), for tests.
  std::vector<double> finest_potential() const;

 private:
  MsmPlan plan_;
  GridSpec output_;
  float scale_;
  cuda::DeviceBuffer<double> potential_;  // level 0
  cuda::DeviceBuffer<int> first_[3];      // output points' first node, per axis
  cuda::DeviceBuffer<double> weight_[3];  // and their order weights
  // The level-0 nodes the output grid reaches along each axis: footprint_n_ from footprint_lo_.
  std::int64_t footprint_lo_[3] = {}, footprint_n_[3] = {};
  std::vector<StageTime> stages_;
};

// Method::msm on the current device: the short-range cutoff method plus MsmLongRangeCuda.
std::unique_ptr<DeviceMethod> make_msm_device_method(const PotentialRequest& request,
                                                     cudaStream_t stream);

}  // namespace dcsgrid::engine
