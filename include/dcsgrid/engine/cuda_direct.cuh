// The CUDA direct-summation engine (CUDA builds only): atoms on a device, kernel launches for any
// compiled configuration, and the DeviceMethod the CUDA backend runs.
#pragma once
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/cuda_support.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/cuda_direct_config.hpp"
#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::engine {

// The kernels work in float in a frame centred on the grid, so that coordinates, and the rounding
// of point–atom differences, are as small as the grid allows.
struct LocalFrame {
  std::array<double, 3> centre{};  // Å, in the input frame
  float x0 = 0, y0 = 0, z0 = 0;    // point (0,0,0) in the local frame
  float hx = 1, hy = 1, hz = 1;    // spacing
};
LocalFrame local_frame(const GridSpec& grid);

// Atoms as (x, y, z, q) in the frame, padded up to count with q = 0 far away (so that padding adds
// exactly zero whatever the pair form).
std::vector<float4> atoms_in_frame(const AtomSet& atoms, const LocalFrame& frame,
                                   std::size_t count);
// The same into out (at least atoms.size() entries), padded to its end.
void atoms_in_frame(const AtomSet& atoms, const LocalFrame& frame, std::span<float4> out);

// Atoms on one device, in the grid's local frame, padded to whole tiles of kDirectTileAtoms.
struct DeviceAtoms {
  cuda::DeviceBuffer<float4> data;  // at least `padded` entries
  std::size_t count = 0;            // real atoms
  std::size_t padded = 0;           // count rounded up to whole tiles: what the kernels read
  int tiles() const { return int(padded / kDirectTileAtoms); }
};
// Copies on stream and waits for the copy. Throws Error beyond 2^31 atoms.
DeviceAtoms upload_atoms(const AtomSet& atoms, const GridSpec& grid, cudaStream_t stream);

// What the runs of one device keep between frames (MethodCache): the atoms' device buffer, grown
// when a frame has more atoms, and the pinned host copy they are uploaded from. A frame then
// neither allocates nor frees device memory (cudaFree waits for the whole device, the work of
// every frame worker on it) and its upload does not wait.
struct AtomUpload {
  DeviceAtoms atoms;
  cuda::PinnedBuffer<float4> staging;
  cuda::Event copied{cudaEventDisableTiming | cudaEventBlockingSync};  // the staging's last copy
};
// Enqueues the atoms' copy into upload.atoms on stream, without waiting for it (the next upload
// into the same AtomUpload waits before it writes the staging again). Throws as upload_atoms.
void upload_atoms(const AtomSet& atoms, const GridSpec& grid, cudaStream_t stream, AtomUpload& upload);

// Padded device layout of a slab for config: x to whole tiles of tile_x(), y to tile_y().
SlabLayout direct_layout(const DirectConfig& config, const GridSpec& grid);

// The configuration the backend runs on grid: kDefaultDirectConfig's per-thread shape with the
// warp width along x (32, 16 or 8 points) that pads the plane least; on a tie the wider warp.
DirectConfig direct_config_for(const GridSpec& grid);

// Enqueues one launch for planes [slab.z_begin, slab.z_end) (at most 65535) into out, laid out as
// direct_layout(config, grid), on stream. config must be one of LibraryDirectConfigs (else Error).
void launch_direct(const DirectConfig& config, const PairKernel& kernel, const DeviceAtoms& atoms,
                   const GridSpec& grid, Slab slab, float* out, cudaStream_t stream);

// The direct method of the CUDA backend on the current device, running
// direct_config_for(request.grid): uploads the atoms once, through the AtomUpload that `cache`
// keeps when it is given.
class MethodCache;
std::unique_ptr<DeviceMethod> make_direct_method(const PotentialRequest& request,
                                                 cudaStream_t stream, MethodCache* cache = nullptr);

// What one kernel launch reads (internal to the engine's .cu files).
struct DirectLaunch {
  const float4* atoms = nullptr;  // tiles·kDirectTileAtoms
  int tiles = 0;
  float x0 = 0, y0 = 0, z0 = 0, hx = 1, hy = 1, hz = 1;  // LocalFrame
  int z_begin = 0;                                       // grid index of the first plane
  int pitch_x = 0, rows_per_plane = 0;                   // SlabLayout
  float scale = 1, min_r2 = 0.25f;
  float exp2_kappa = 0;  // −κ·log2(e): exp(−κr) = exp2(exp2_kappa·r)
  float* out = nullptr;
};
// The arguments and block grid of one launch of config (checks the slab and the grid's size).
struct DirectLaunchPlan {
  DirectLaunch args;
  dim3 blocks;
};
DirectLaunchPlan plan_direct_launch(const DirectConfig& config, const PairKernel& kernel,
                                    const DeviceAtoms& atoms, const GridSpec& grid, Slab slab,
                                    float* out);

// Launches Table::configs[config] for one pair form (cuda_direct_kernel.cuh). The library
// instantiates it for LibraryDirectConfigs in cuda_direct_<form>.cu; bench_cuda_direct for its
// sweep.
template <PairForm Form, typename Table>
void launch_direct_form(std::size_t config, const DirectLaunch& launch, dim3 blocks,
                        cudaStream_t stream);

// Position of config in Table::configs; Error naming it when the table lacks it.
template <typename Table>
std::size_t direct_config_index(const DirectConfig& config) {
  for (std::size_t i = 0; i < Table::configs.size(); ++i)
    if (Table::configs[i] == config) return i;
  throw Error("direct kernel configuration '" + config.name() + "' is not compiled in");
}

// One launch of config, one of Table's configurations, for the kernel's pair form.
template <typename Table>
void launch_direct_from(const DirectConfig& config, const PairKernel& kernel,
                        const DeviceAtoms& atoms, const GridSpec& grid, Slab slab, float* out,
                        cudaStream_t stream) {
  const std::size_t index = direct_config_index<Table>(config);
  const DirectLaunchPlan plan = plan_direct_launch(config, kernel, atoms, grid, slab, out);
  with_pair_form(kernel.form, [&](auto form) {
    launch_direct_form<decltype(form)::value, Table>(index, plan.args, plan.blocks, stream);
  });
}

}  // namespace dcsgrid::engine
