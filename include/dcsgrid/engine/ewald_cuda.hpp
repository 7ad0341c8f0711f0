// The exact Ewald reciprocal sum on the GPU (CUDA builds only): EwaldReciprocal's mathematics
// (engine/periodic.hpp, ewald.cpp) in float64, the reference --method ewald adds on the device.
// The k vectors are ewald_vectors' (half of k space). set_atoms: the atoms' fractional
// coordinates (made on the host in double, wrapped into [0, 1)) are uploaded, and one thread per
// k vector sums S(k) = Σ q e^{−2πi m·f} over every atom in input order (atoms staged through
// shared memory), so S(k) is the same on every run. add_to: one thread per point sums
// coefficient·Re[S(k) e^{2πi m·f}] over the k vectors in their order (staged likewise); each phase
// is sincospi of the product m·f reduced to [−1/2, 1/2], where the CPU multiplies three tables of
// phases: the two agree to double rounding. Cost: atoms × vectors for S(k), points × vectors for
// the map.
#pragma once
#include <cuda_runtime.h>

#include <memory>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/periodic.hpp"

namespace dcsgrid::engine {

class EwaldReciprocalCuda {
 public:
  // Uploads the k vectors on stream (synchronised before returning). scale and background as
  // EwaldReciprocal; throws what it throws.
  EwaldReciprocalCuda(const UnitCell& cell, const EwaldParameters& parameters, double scale,
                      bool background, cudaStream_t stream);
  ~EwaldReciprocalCuda();
  EwaldReciprocalCuda(const EwaldReciprocalCuda&) = delete;
  EwaldReciprocalCuda& operator=(const EwaldReciprocalCuda&) = delete;

  // S(k) of these atoms, asynchronously on stream (the atoms are copied before it returns).
  void set_atoms(const AtomSet& atoms, cudaStream_t stream);
  // Adds scale·(reciprocal part + background) at planes [slab.z_begin, slab.z_end) of grid into
  // out (device memory in layout, slab.planes() planes), asynchronously on stream.
  void add_to(const GridSpec& grid, Slab slab, float* out, SlabLayout layout, cudaStream_t stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dcsgrid::engine
