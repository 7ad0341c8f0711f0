// The cutoff method on the GPU (CUDA builds only): atoms binned on the device (binning.hpp), one
// block per 8×8×8 brick of grid points at a time (persistent blocks taking bricks from an atomic
// counter), neighbour bins staged through shared memory. By default the bins come from a prefix
// sum and hold every atom; with a fixed capacity (--bin-capacity N) the atoms that do not fit are
// summed on the CPU while the kernel runs.
//
// Kernel. 64 threads per block; each owns the 8 points of one (x, y) column of the brick, so a
// warp's stores run along x. For each staged atom a thread first tests the distance in the x–y
// plane (the cylinder around its column) and only then the 8 points; padding atoms (q = 0) sit
// far away, so the whole warp skips them at the first test. The neighbour rows travel in the
// kernel's parameters (the constant bank): concurrent launches with different geometries share
// no global state. Pair term: q·V(r) for r² < rc², V the cutoff form's cutoff_pair_term
// (cutoff_form.hpp: truncated, shifted, switched, msm_short, over the physics' pair term) — the
// same template the CPU engine instantiates, so the two backends agree.
//
// Overflow. With fixed capacity, the atoms beyond it are fetched while the kernel runs and
// summed by the CPU engine (cutoff_accumulate_parts_cpu): bucketed by place into cubes of rc/4,
// each bucket on the sub-grid it reaches, the buckets side by side (one sub-grid around all of
// them when that holds fewer points); the parts are added to the slab on the host once it has
// been copied back (finish_on_host).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>

#include "dcsgrid/engine/binning.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/engine.hpp"

#include <nlohmann/json.hpp>

namespace dcsgrid::engine {

// What the GPU cutoff did, summed over the slabs computed so far (seconds).
struct CutoffRunStats {
  double upload_seconds = 0;    // atoms to the device (once per request)
  double binning_seconds = 0;   // keys, counts, scatter (device time, CUDA events)
  double kernel_seconds = 0;    // the cutoff kernel (device time, CUDA events)
  double overflow_seconds = 0;  // CPU sum of the overflow atoms (wall time)
  double overflow_hidden_seconds = 0;  // of which ran while the kernel ran
  double add_seconds = 0;       // adding the CPU result into the slab (host)
  std::size_t slabs = 0;
  std::size_t atoms = 0;            // atoms in the request
  std::size_t atoms_binned = 0;     // summed over slabs: atoms in bins (fixed: in slots)
  std::size_t atoms_overflow = 0;   // summed over slabs: atoms summed on the CPU
  int bin_capacity = 0;             // 0: dynamic bins
  std::string geometry;             // BinGeometry::describe() of the first slab

  // Fraction of the CPU overflow time hidden behind the kernel (1 when there was none).
  double overlap() const {
    return overflow_seconds > 0 ? overflow_hidden_seconds / overflow_seconds : 1.0;
  }
  nlohmann::json to_json() const;
};

// The cutoff method prepared on the current device for one request (DeviceMethod, so the CUDA
// backend's slab pipeline runs it). The constructor uploads the atoms on `stream` (synchronising
// that stream).
// enqueue may be called with any stream: each slab waits for the previous slab's kernel before it
// reuses the bin buffers. finish_on_host(slab, host) must follow each enqueue(slab), in order.
class CudaCutoffMethod final : public DeviceMethod {
 public:
  CudaCutoffMethod(const PotentialRequest& request, cudaStream_t stream);
  ~CudaCutoffMethod() override;
  CudaCutoffMethod(const CudaCutoffMethod&) = delete;
  CudaCutoffMethod& operator=(const CudaCutoffMethod&) = delete;

  SlabLayout layout() const override;
  void enqueue(Slab slab, float* out, cudaStream_t stream) override;
  double finish_on_host(Slab slab, float* host) override;
  // Fixed bin capacity: the atoms bins cannot hold are summed on the host.
  bool finishes_on_host() const override;

  const CutoffRunStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::unique_ptr<DeviceMethod> make_cutoff_device_method(const PotentialRequest& request,
                                                        cudaStream_t stream);

// The layout the kernel writes: x and y padded to whole bricks, so stores need no bounds test.
SlabLayout cutoff_slab_layout(const GridSpec& grid);

// The kernel alone, asynchronous on stream: the slab g describes into out (device memory in
// cutoff_slab_layout, g.points[2] planes), from bins that scatter_fixed or scatter_dynamic filled
// for g. brick_counter: one device word for this launch (zeroed on stream first). Throws Error
// when the neighbour list holds too many slots to index (fixed capacity far too large).
void launch_cutoff_kernel(const BinGeometry& g, const DeviceBins& bins, const PairKernel& pair,
                          const CutoffOptions& cutoff, float* out, unsigned* brick_counter,
                          cudaStream_t stream);

// The whole path for one slab on the current device, for tests and benchmarks: upload, binning,
// kernel, copy into out (host, plane_size·planes floats, x fastest) and the CPU overflow added.
// stats (optional) receives the run's timings; copy_seconds the device-to-host copy.
struct CutoffSlabTimes {
  CutoffRunStats run;
  double copy_seconds = 0;   // device to host, wall
  double total_seconds = 0;  // the whole call, wall (no CUDA context start-up)
};
void cutoff_sum_cuda(const PotentialRequest& request, Slab slab, float* out,
                     CutoffSlabTimes* times = nullptr);

}  // namespace dcsgrid::engine
