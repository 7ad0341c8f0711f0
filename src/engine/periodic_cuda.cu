// The periodic methods on a GPU (engine/periodic_cuda.hpp).

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cuda_cell_list_cutoff.hpp"
#include "dcsgrid/engine/cuda_cutoff.hpp"
#include "dcsgrid/engine/ewald_cuda.hpp"
#include "dcsgrid/engine/method_cache.hpp"
#include "dcsgrid/engine/periodic.hpp"
#include "dcsgrid/engine/periodic_cuda.hpp"
#include "dcsgrid/engine/pme_cuda.hpp"

namespace dcsgrid::engine {
namespace {

// The real-space part: the cutoff method with the ewald_real form over the atoms' images within
// the real cutoff of the grid; with no real cutoff (the smooth map), zeroed slabs. The brick
// kernel's bins are laid along an orthogonal grid's bricks: a cell's skewed lattice (--grid cell)
// is summed by the cell-list kernel instead (cuda_cell_list_cutoff.hpp).
class RealSpacePart {
 public:
  RealSpacePart(const PotentialRequest& request, double beta, double real_cutoff, cudaStream_t stream)
      : grid_(request.grid) {
    if (real_cutoff <= 0) return;
    images_ = periodic_images(*request.atoms, *request.cell, grid_box(grid_), real_cutoff);
    PotentialRequest real = request;
    real.method = Method::cutoff;
    real.atoms = &images_;
    real.cutoff = ewald_real_space(beta, real_cutoff);
    real.cutoff.bin_capacity = request.cutoff.bin_capacity;  // the user's bin settings kept
    cutoff_ = grid_.orthogonal() ? make_cutoff_device_method(real, stream) : make_cell_list_cutoff_method(real, stream);
  }
  SlabLayout layout() const {
    return cutoff_ ? cutoff_->layout() : SlabLayout{grid_.nx(), grid_.ny(), 1};
  }
  // Writes the slab's real part into out (device memory in layout()).
  void enqueue(Slab slab, float* out, cudaStream_t stream) {
    if (cutoff_)
      cutoff_->enqueue(slab, out, stream);
    else
      DCSGRID_CUDA_CHECK(cudaMemsetAsync(out, 0, layout().plane_bytes() * std::size_t(slab.planes()), stream));
  }
  // The cutoff method's overflow atoms, added on the host.
  double finish_on_host(Slab slab, float* host) { return cutoff_ ? cutoff_->finish_on_host(slab, host) : 0.0; }
  bool finishes_on_host() const { return cutoff_ && cutoff_->finishes_on_host(); }

 private:
  GridSpec grid_;
  AtomSet images_;  // before cutoff_, which holds a pointer to it
  std::unique_ptr<DeviceMethod> cutoff_;
};

class PmeDeviceMethod final : public DeviceMethod {
 public:
  PmeDeviceMethod(const PotentialRequest& request, const PeriodicSplit<PmeReciprocal>& split,
                  cudaStream_t stream, MethodCache* cache)
      : grid_(request.grid), real_(request, split.beta, split.real_cutoff, stream),
        reciprocal_(cache, reciprocal_key(*request.cell, split, make_pair_kernel(request.physics).scale_d), [&] {
          return std::make_unique<PmeReciprocalCuda>(*request.cell, split.parameters,
                                                     make_pair_kernel(request.physics).scale_d,
                                                     split.background, stream);
        }) {
    reciprocal_->set_atoms(*request.atoms, stream);
  }
  SlabLayout layout() const override { return real_.layout(); }
  void enqueue(Slab slab, float* out, cudaStream_t stream) override {
    real_.enqueue(slab, out, stream);
    reciprocal_->add_to(grid_, slab, out, layout(), stream);
  }
  double finish_on_host(Slab slab, float* host) override { return real_.finish_on_host(slab, host); }
  bool finishes_on_host() const override { return real_.finishes_on_host(); }

 private:
  GridSpec grid_;
  RealSpacePart real_;
  Cached<PmeReciprocalCuda> reciprocal_;
};

// The exact reciprocal sum (the reference) on the device too: EwaldReciprocalCuda.
class EwaldDeviceMethod final : public DeviceMethod {
 public:
  EwaldDeviceMethod(const PotentialRequest& request, const PeriodicSplit<EwaldReciprocal>& split,
                    cudaStream_t stream, MethodCache* cache)
      : grid_(request.grid), real_(request, split.beta, split.real_cutoff, stream),
        reciprocal_(cache, reciprocal_key(*request.cell, split, make_pair_kernel(request.physics).scale_d), [&] {
          return std::make_unique<EwaldReciprocalCuda>(*request.cell, split.parameters,
                                                       make_pair_kernel(request.physics).scale_d, split.background,
                                                       stream);
        }) {
    reciprocal_->set_atoms(*request.atoms, stream);
  }
  SlabLayout layout() const override { return real_.layout(); }
  void enqueue(Slab slab, float* out, cudaStream_t stream) override {
    real_.enqueue(slab, out, stream);
    reciprocal_->add_to(grid_, slab, out, layout(), stream);
  }
  double finish_on_host(Slab slab, float* host) override { return real_.finish_on_host(slab, host); }
  bool finishes_on_host() const override { return real_.finishes_on_host(); }

 private:
  GridSpec grid_;
  RealSpacePart real_;
  Cached<EwaldReciprocalCuda> reciprocal_;
};

}  // namespace

std::unique_ptr<DeviceMethod> make_ewald_device_method(const PotentialRequest& request,
                                                       cudaStream_t stream, MethodCache* cache) {
  validate(request);
  return std::make_unique<EwaldDeviceMethod>(
      request, periodic_split<EwaldReciprocal>(*request.cell, request.periodic), stream, cache);
}

std::unique_ptr<DeviceMethod> make_pme_device_method(const PotentialRequest& request,
                                                     cudaStream_t stream, MethodCache* cache) {
  validate(request);
  return std::make_unique<PmeDeviceMethod>(
      request, periodic_split<PmeReciprocal>(*request.cell, request.periodic), stream, cache);
}

}  // namespace dcsgrid::engine
