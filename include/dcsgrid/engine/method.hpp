// The methods, one description each: what the front ends, batch, MPI and the metadata need to know
// about a method without naming it. Each backend adds one implementation class per method (the CPU
// backend's CpuMethod, the CUDA backend's DeviceMethod), in the manner of OpenMM's kernel factory.
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace dcsgrid::engine {

// direct: exact sum over all atoms; cutoff: atoms within a radius; msm: multilevel summation;
// ewald: the exact periodic (Ewald) potential; pme: smooth particle-mesh Ewald.
// pb: the Poisson–Boltzmann potential of a low-dielectric molecule in salt water (engine/pb.hpp).
enum class Method { direct, cutoff, msm, ewald, pme, pb };

// slab: any z-slab of the grid computes on its own once the method is prepared for the run
// (its atoms uploaded, msm's long-range grids built). whole_grid: no value is final before the
// whole grid (or a padded mesh around it) is solved, such as a multigrid solve: the method holds
// the solved grid (its memory checked before the solve) and hands it out slab by slab through the
// same sinks. Several GPUs and MPI ranks divide slab methods by slabs; a whole-grid method runs on
// one device a grid (batch spreads frames over devices instead).
enum class MethodShape { slab, whole_grid };

// The group of the request's options a method reads besides the physics (PotentialRequest's
// cutoff, msm, periodic or pb; none for direct): what a run's record of its settings keeps.
enum class MethodOptions { none, cutoff, msm, periodic, pb };

struct RunSize;  // engine/cost_model.hpp
// A method's estimated seconds for a run (--method auto weighs the methods that have one), and
// the error it is expected to make against the exact sum, as a phrase.
using SecondsEstimate = double (*)(const RunSize&);
using ErrorPhrase = std::string (*)(const RunSize&);

struct MethodDescription {
  Method id;
  std::string_view name;     // on the command line, in Python and in the metadata
  std::string_view summary;  // one line for --help
  MethodShape shape;
  bool exact;                // the reference other methods are compared with (no approximation)
  bool periodic;             // needs a unit cell (PotentialRequest::cell)
  bool needs_radii;          // needs per-atom radii (AtomSet::r)
  bool constant_dielectric;  // refuses --ddd and Debye–Hückel screening
  bool all_pairs;            // sums every atom at every point: its speed is pairs a second
  // Sums only the atoms within a radius of each point, so a part of the grid needs only the atoms
  // near it (atoms_for_slabs).
  bool local;
  // Builds state once a run (long-range grids, a mesh, a solve) that compute() of a lone slab
  // builds again: callers that compute slab by slab (MPI ranks) take few, large slabs.
  bool run_setup;
  // The grid's point counts are grown to ones the method's multigrid coarsens well
  // (engine::grid_for_methods).
  bool multigrid_dims;
  MethodOptions options;
  // --method auto: the methods with a cost model compute direct's potential (the exact one among
  // them is the reference auto prefers); nullptr for the others.
  SecondsEstimate seconds_estimate;
  ErrorPhrase expected_error;  // nullptr for an exact method
};

// Every method, in the order of the enum.
std::span<const MethodDescription> methods();
const MethodDescription& describe(Method m);
std::string method_name(Method m);
// Throws Error naming the known methods.
Method parse_method(const std::string& name);
// "direct, cutoff, msm, ewald or pme", for messages.
std::string method_names_for_help();

}  // namespace dcsgrid::engine
