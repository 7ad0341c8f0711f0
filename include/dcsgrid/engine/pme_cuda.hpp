// Smooth particle-mesh Ewald's reciprocal part on the GPU (CUDA builds only): the mathematics of
// PmeReciprocal (engine/periodic.hpp, pme.cpp) with the mesh in device memory, in float64 as on
// the CPU, and the per-point arithmetic of pme_math.hpp shared with it.
//
// set_atoms (per frame, asynchronous on one stream): the atoms are uploaded; each atom's mesh
// coordinates give its key, the mesh cell of its splines' first points, and its fractional offsets;
// the atoms are ordered by key (in-house histogram and scan for each cell's first atom, CUB's
// stable radix sort for the order, as the cutoff binning does) and their spline weights written in
// that order. Spreading then gathers: one thread per mesh point sums the atoms of the p³ cells
// whose splines reach it, so no two threads write one point (no atomics) and every point sums in a
// fixed order (reproducible maps). cuFFT real-to-complex, the influence function applied in place
// (its Ewald factor computed per frequency, the B-spline moduli uploaded once), complex-to-real:
// the mesh potential.
//
// add_to: as the CPU, each output plane first folds the p mesh planes its u3 needs (K1·K2 values),
// each output row then the p rows of that its u2 needs (K1 values), each point p values; the
// output grid is any grid (points outside the cell take their periodic value). The folds are held
// for at most kPmeFoldBytes at a time (the slab is done in runs of planes).
//
// The mesh, spectrum, plans and fold buffers persist: a batch of frames with the same cell calls
// set_atoms and add_to again without new allocations (the atom buffers grow when a frame has more
// atoms).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/engine/cuda_device.hpp"
#include "dcsgrid/engine/periodic.hpp"

namespace dcsgrid::engine {

// Device memory the interpolation's folds may take at once.
inline constexpr std::size_t kPmeFoldBytes = std::size_t(64) << 20;

class PmeReciprocalCuda {
 public:
  // Plans the FFTs and uploads the B-spline moduli on the current device, on stream (synchronised
  // before returning). scale and background as PmeReciprocal. Throws Error for parameters that
  // PmeReciprocal refuses, or when the mesh, spectrum and FFT work area do not fit the device's
  // free memory.
  PmeReciprocalCuda(const UnitCell& cell, const PmeParameters& parameters, double scale,
                    bool background, cudaStream_t stream);
  ~PmeReciprocalCuda();
  PmeReciprocalCuda(const PmeReciprocalCuda&) = delete;
  PmeReciprocalCuda& operator=(const PmeReciprocalCuda&) = delete;

  // Spreads the atoms' charges and solves for the mesh potential, asynchronously on stream (the
  // atoms are copied before it returns). Throws Error when the atoms' buffers do not fit the
  // device's free memory.
  void set_atoms(const AtomSet& atoms, cudaStream_t stream);
  // Adds scale·(interpolated mesh potential + background) at planes [slab.z_begin, slab.z_end) of
  // grid into out (device memory in layout, slab.planes() planes), asynchronously on stream.
  void add_to(const GridSpec& grid, Slab slab, float* out, SlabLayout layout, cudaStream_t stream);

  const PmeParameters& parameters() const;
  // The mesh potential without scale or background (K1·K2·K3, x fastest), copied to the host
  // after stream finishes; for tests.
  std::vector<double> mesh_potential(cudaStream_t stream) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dcsgrid::engine
