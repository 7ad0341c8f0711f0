// The CPU backend: the reference implementation and the fallback without a GPU. Both methods
// take OpenMP threads over (z, y) rows and AVX2 lanes along x, and fold float partial sums into
// one double per point, so they match a float64 sum to about 1e-7 (relative L2).
//
// Every kernel here works on planes [slab.z_begin, slab.z_end) of grid and writes plane_size() ·
// slab.planes() floats, x fastest, to out. Distances below the physics' minimum are clamped:
// the pair term, and the cutoff factor, are taken at r = max(r, r_min).
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "dcsgrid/engine/engine.hpp"

namespace dcsgrid::engine {

// Every method with a CpuMethod (cpu_backend.cpp's kCpuMethods).
std::unique_ptr<Backend> make_cpu_backend();

// Direct summation over all atoms.
void direct_sum_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel, Slab slab,
                    float* out);
// The same sum at arbitrary points (Å), out[i] at points[i]: threads take 8 points at a time, in
// the order given (points near each other in a group share the work best and round least).
void direct_sum_points_cpu(const AtomSet& atoms, const std::vector<std::array<double, 3>>& points,
                           const PairKernel& kernel, float* out);

// Cutoff summation: each point sees the atoms closer than options.radius, each weighted by the
// physics' pair term times the cutoff form's factor (engine/cutoff_form.hpp). Atoms may lie
// anywhere, inside the grid or not; the work grows with the atoms near the slab, not with the
// grid, so a small scattered set (the GPU engine's overflow atoms) is cheap. Throws Error for a
// slab outside the grid or bad options.
void cutoff_sum_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel,
                    const CutoffOptions& options, Slab slab, float* out);
// The same, added to what out holds already (out must be initialised).
void cutoff_accumulate_cpu(const AtomSet& atoms, const GridSpec& grid, const PairKernel& kernel,
                           const CutoffOptions& options, Slab slab, float* out);

// Independent cutoff sums, such as the GPU engine's scattered overflow atoms bucketed by place:
// part i adds the potential of *parts[i].atoms on every plane of parts[i].grid into parts[i].out.
// With at least as many parts as threads the parts run side by side, one thread each (each is
// too small to share out: a parallel region per part cost more than its sum); fewer parts run
// one after another, each on every thread.
struct CutoffPart {
  const AtomSet* atoms = nullptr;
  GridSpec grid;
  float* out = nullptr;
};
void cutoff_accumulate_parts_cpu(const std::vector<CutoffPart>& parts, const PairKernel& kernel,
                                 const CutoffOptions& options);

}  // namespace dcsgrid::engine
