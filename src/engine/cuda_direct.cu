// The CUDA direct-summation engine: local frame, atom upload, launch dispatch, the DeviceMethod.
// The kernel itself is in include/dcsgrid/engine/cuda_direct_kernel.cuh.
#include <algorithm>
#include <climits>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_direct.cuh"
#include "dcsgrid/engine/method_cache.hpp"

namespace dcsgrid::engine {

namespace {

constexpr float kFarAway = 1.0e6f;  // Å: where padding atoms (q = 0) sit

std::int64_t round_up(std::int64_t n, std::int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

}  // namespace

LocalFrame local_frame(const GridSpec& grid) {
  LocalFrame f;
  float* start[3] = {&f.x0, &f.y0, &f.z0};
  float* step[3] = {&f.hx, &f.hy, &f.hz};
  for (int a = 0; a < 3; ++a) {
    // The centre is a grid point, so point coordinates (i − m)·h are exact for spacings like 0.5 Å.
    const std::int64_t m = (grid.dims[a] - 1) / 2;
    f.centre[a] = grid.origin[a] + double(m) * grid.spacing[a];
    *start[a] = float(-double(m) * grid.spacing[a]);
    *step[a] = float(grid.spacing[a]);
  }
  return f;
}

void atoms_in_frame(const AtomSet& atoms, const LocalFrame& frame, std::span<float4> out) {
  if (out.size() < atoms.size()) throw Error("atoms_in_frame: the output holds fewer entries than the atoms");
  for (std::size_t i = 0; i < atoms.size(); ++i)
    out[i] = make_float4(float(double(atoms.x[i]) - frame.centre[0]),
                         float(double(atoms.y[i]) - frame.centre[1]),
                         float(double(atoms.z[i]) - frame.centre[2]), atoms.q[i]);
  std::fill(out.begin() + std::ptrdiff_t(atoms.size()), out.end(),
            make_float4(kFarAway, kFarAway, kFarAway, 0.0f));
}

std::vector<float4> atoms_in_frame(const AtomSet& atoms, const LocalFrame& frame,
                                   std::size_t count) {
  std::vector<float4> out(std::max(count, atoms.size()));
  atoms_in_frame(atoms, frame, out);
  return out;
}

namespace {

// The atoms padded to whole tiles; throws Error when there are none or too many.
std::size_t padded_atom_count(const AtomSet& atoms) {
  if (atoms.empty()) throw Error("no atoms to upload");
  if (atoms.size() > std::size_t(INT_MAX) - kDirectTileAtoms)
    throw Error("too many atoms for the CUDA direct engine: " + std::to_string(atoms.size()));
  return std::size_t(round_up(std::int64_t(atoms.size()), kDirectTileAtoms));
}

}  // namespace

DeviceAtoms upload_atoms(const AtomSet& atoms, const GridSpec& grid, cudaStream_t stream) {
  const std::size_t padded = padded_atom_count(atoms);
  const std::vector<float4> host = atoms_in_frame(atoms, local_frame(grid), padded);
  DeviceAtoms d;
  d.count = atoms.size();
  d.padded = padded;
  d.data.resize(padded);
  DCSGRID_CUDA_CHECK(
      cudaMemcpyAsync(d.data.data(), host.data(), d.data.bytes(), cudaMemcpyHostToDevice, stream));
  DCSGRID_CUDA_CHECK(cudaStreamSynchronize(stream));
  return d;
}

void upload_atoms(const AtomSet& atoms, const GridSpec& grid, cudaStream_t stream, AtomUpload& upload) {
  const std::size_t padded = padded_atom_count(atoms);
  upload.copied.synchronize();
  if (upload.staging.size() < padded) upload.staging = cuda::PinnedBuffer<float4>(padded);
  if (upload.atoms.data.size() < padded) upload.atoms.data.resize(padded);
  atoms_in_frame(atoms, local_frame(grid), std::span<float4>(upload.staging.data(), padded));
  DCSGRID_CUDA_CHECK(cudaMemcpyAsync(upload.atoms.data.data(), upload.staging.data(), padded * sizeof(float4),
                                     cudaMemcpyHostToDevice, stream));
  upload.copied.record(stream);
  upload.atoms.count = atoms.size();
  upload.atoms.padded = padded;
}

SlabLayout direct_layout(const DirectConfig& config, const GridSpec& grid) {
  return {round_up(grid.nx(), config.tile_x()), round_up(grid.ny(), config.tile_y())};
}

DirectConfig direct_config_for(const GridSpec& grid) {
  DirectConfig best = kDefaultDirectConfig;
  std::size_t best_bytes = direct_layout(best, grid).plane_bytes();
  for (const int lanes_x : {16, 8}) {
    const DirectConfig narrower = with_lanes_x(kDefaultDirectConfig, lanes_x);
    const std::size_t bytes = direct_layout(narrower, grid).plane_bytes();
    if (bytes < best_bytes) best = narrower, best_bytes = bytes;
  }
  return best;
}

DirectLaunchPlan plan_direct_launch(const DirectConfig& config, const PairKernel& kernel,
                                    const DeviceAtoms& atoms, const GridSpec& grid, Slab slab,
                                    float* out) {
  if (atoms.tiles() == 0) throw Error("launch_direct: no atoms on the device");
  if (slab.z_begin < 0 || slab.z_end > grid.nz() || slab.planes() <= 0 || slab.planes() > 65535)
    throw Error("launch_direct: planes [" + std::to_string(slab.z_begin) + ", " +
                std::to_string(slab.z_end) + ") do not fit one launch on a grid of " +
                std::to_string(grid.nz()) + " planes");
  const SlabLayout layout = direct_layout(config, grid);
  const std::int64_t blocks_y = layout.rows_per_plane / config.tile_y();
  if (blocks_y > 65535 || layout.pitch_x > INT_MAX || grid.nz() > INT_MAX)
    throw Error("launch_direct: grid " + grid.describe() + " is too large for one launch");
  const LocalFrame f = local_frame(grid);
  DirectLaunch a;
  a.atoms = atoms.data.data();
  a.tiles = atoms.tiles();
  a.x0 = f.x0, a.y0 = f.y0, a.z0 = f.z0;
  a.hx = f.hx, a.hy = f.hy, a.hz = f.hz;
  a.z_begin = int(slab.z_begin);
  a.pitch_x = int(layout.pitch_x);
  a.rows_per_plane = int(layout.rows_per_plane);
  a.scale = kernel.scale;
  a.min_r2 = kernel.min_r2;
  a.exp2_kappa = kernel.exp2_kappa;
  a.out = out;
  return {a, dim3(unsigned(layout.pitch_x / config.tile_x()), unsigned(blocks_y),
                  unsigned(slab.planes()))};
}

void launch_direct(const DirectConfig& config, const PairKernel& kernel, const DeviceAtoms& atoms,
                   const GridSpec& grid, Slab slab, float* out, cudaStream_t stream) {
  launch_direct_from<LibraryDirectConfigs>(config, kernel, atoms, grid, slab, out, stream);
}

namespace {

class DirectMethod final : public DeviceMethod {
 public:
  // With a cache (a batch's frames), the atoms go through the AtomUpload it keeps; without, a run
  // uploads once from pageable memory (pinning a large structure's copy would cost more).
  DirectMethod(const PotentialRequest& request, cudaStream_t stream, MethodCache* cache)
      : grid_(request.grid),
        kernel_(make_pair_kernel(request.physics)),
        config_(direct_config_for(request.grid)),
        upload_(cache, "atoms", [] { return std::make_unique<AtomUpload>(); }) {
    direct_config_index<LibraryDirectConfigs>(config_);  // fail now, not at the first slab
    if (cache) upload_atoms(*request.atoms, request.grid, stream, *upload_);
    else upload_->atoms = upload_atoms(*request.atoms, request.grid, stream);
  }
  SlabLayout layout() const override { return direct_layout(config_, grid_); }
  void enqueue(Slab slab, float* out, cudaStream_t stream) override {
    launch_direct(config_, kernel_, upload_->atoms, grid_, slab, out, stream);
  }

 private:
  GridSpec grid_;
  PairKernel kernel_;
  DirectConfig config_;
  Cached<AtomUpload> upload_;
};

}  // namespace

std::unique_ptr<DeviceMethod> make_direct_method(const PotentialRequest& request,
                                                 cudaStream_t stream, MethodCache* cache) {
  return std::make_unique<DirectMethod>(request, stream, cache);
}

}  // namespace dcsgrid::engine
