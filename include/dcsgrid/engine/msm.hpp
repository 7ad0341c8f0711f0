// Multilevel summation (MSM), the long-range half: with 1/r = [1/r − γ(r/a)/a] + γ(r/a)/a
// (core/softening.hpp), the smooth part φ_long(p) = scale · Σ_i q_i γ(|p − r_i|/a)/a carried on
// a hierarchy of grids (Hardy, Stone & Schulten, Parallel Computing 35 (2009) 164–177). The
// short-range part is the cutoff engines' job; Method::msm adds the two.
//
// Charges are anterpolated onto the finest grid (spacing h), restricted onto grids of spacing
// 2h, 4h, ...; level l is convolved with g_l(r) = γ(r/2^l a)/2^l a − γ(r/2^(l+1) a)/2^(l+1) a
// (zero beyond 2^(l+1) a: a stencil of radius 2a/h points on every level), the top level is
// summed all pairs with γ(r/2^L a)/2^L a (no periodicity), and the potentials are prolongated
// back down and interpolated onto the output grid. Every transfer is factored into 1-D passes,
// so the cost is linear in atoms plus grid points.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/engine/msm_plan.hpp"

namespace dcsgrid::engine {

// How a level's convolution is summed: dense loops (the stencil's rows; all pairs at the top), or
// real FFTs of the level padded so that nothing wraps around (the same sums up to rounding, at
// about 10^-16 of the largest terms); automatic takes the one with less work.
enum class MsmConvolution { automatic, dense, fft };

// Seconds of each stage of MsmLongRange's set-up (logged at debug level, read by bench_cpu_msm_setup).
struct MsmSetupTimes {
  double plan = 0;           // basis, stencil, level shapes, top kernel (make_msm_plan)
  double anterpolation = 0;  // charges onto level 0
  double restriction = 0;    // every level onto the next
  double stencils = 0;       // the levels below the top: their cutoff convolutions
  double top = 0;            // the top level, all pairs
  double prolongation = 0;   // back down, added level by level
  double weights = 0;        // the output grid's interpolation weights
  double total() const { return plan + anterpolation + restriction + stencils + top + prolongation + weights; }
};

// Builds the hierarchy on the CPU (OpenMP) when constructed; add_to then only interpolates, so
// threads may call it at once for disjoint slabs.
class MsmLongRange {
 public:
  // scale: k_C·unit/ε (PairKernel::scale). Atoms may lie inside or outside the output grid.
  // Throws Error for bad options or a hierarchy too large for memory.
  // how: the levels' convolutions (msm_level_potential); dense sums reproduce the maps made
  // before the FFTs (benchmarks' baseline).
  MsmLongRange(const AtomSet& atoms, const GridSpec& output, float scale, const MsmOptions& options,
               MsmConvolution how = MsmConvolution::automatic);

  // Adds φ_long at the points of planes [slab.z_begin, slab.z_end) of the output grid to out
  // (plane_size · planes floats, x fastest).
  void add_to(Slab slab, float* out) const;

  const MsmPlan& plan() const { return plan_; }
  const MsmSetupTimes& setup_times() const { return times_; }
  // The finest level's potential (without scale), for tests.
  const std::vector<double>& finest_potential() const { return potential_; }

 private:
  MsmPlan plan_;
  GridSpec output_;
  double scale_;
  std::vector<double> potential_;  // level 0, plan_.levels[0] layout
  std::array<MsmAxisWeights, 3> weights_;  // output points along x, y, z
  MsmSetupTimes times_;
};

// True when the physics has a multilevel form: a constant dielectric. Distance-dependent ε (1/r²)
// and Debye–Hückel screening have no splitting into γ here.
bool has_multilevel_form(const Physics& physics);

// The level operations, one after another, on the CPU (also the reference for the GPU engine).
// Level arrays are x fastest in the level's shape.
std::vector<double> msm_anterpolate(const MsmPlan& plan, const AtomSet& atoms);
std::vector<double> msm_restrict(const MsmPlan& plan, int level, const std::vector<double>& fine);
// Adds the prolongation of the coarse level's potential (level + 1) to fine (level).
void msm_prolongate_add(const MsmPlan& plan, int level, const std::vector<double>& coarse,
                        std::vector<double>& fine);
// Level l < top: the cutoff stencil; level top: all pairs.
std::vector<double> msm_level_potential(const MsmPlan& plan, int level, const std::vector<double>& charge,
                                        MsmConvolution how = MsmConvolution::automatic);

}  // namespace dcsgrid::engine
