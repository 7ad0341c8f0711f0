// What every computing front end sets (the main job, batch, and the Python module): the grid, the
// physics, the methods and the hardware, parsed once into typed values and checked once.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/io/maps/metadata.hpp"

namespace dcsgrid::app {

// The grid: the user's box when given, else the atoms' box grown by padding; for a periodic
// method without a box, one period of the cell: its bounding box (grid_over_cell) or, with
// on_cell (--grid cell), the cell's own lattice (grid_on_cell, skewed for a triclinic cell).
struct GridChoice {
  std::optional<GridSpec> box;
  double spacing = 0.5;   // Å
  double padding = 10.0;  // Å
  bool on_cell = false;
  GridSpec resolve(const Box& atoms_box) const;
  GridSpec resolve(const UnitCell& cell) const;
};
// Throws Error when --grid cell is asked for without a periodic method, or with a box.
void validate(const GridChoice& grid, const std::vector<engine::Method>& methods);

struct ComputeSettings {
  Physics physics;
  // The maps to compute, in order, each method at most once. With direct among several, direct is
  // the map every other one is compared with.
  std::vector<engine::Method> methods{engine::Method::direct};
  // --method auto: methods holds direct until the run knows its atoms, grid and hardware, then
  // with_chosen_method (method_choice.hpp) keeps direct or puts msm in its place.
  bool auto_method = false;
  engine::CutoffOptions cutoff;
  engine::MsmOptions msm;
  engine::PeriodicOptions periodic;
  engine::PbOptions pb;          // --method pb's solvent, surface, ions and solver
  std::optional<UnitCell> cell;  // --cell; else the input's own, for periodic methods
  std::string device = "auto";  // auto, cpu, gpu
  std::vector<int> gpus;        // device ids; empty: all
  int threads = 0;              // CPU threads; 0: all cores
  // --allow-non-finite: charges beyond the float32 bound are computed and maps with inf/NaN kept
  // (with a warning); otherwise either is an error.
  bool allow_non_finite = false;
};

// "direct", "cutoff", or a comma-separated list of methods ("direct,cutoff"); "both" stands for
// "direct,cutoff". Throws Error naming the bad entry or a repeated method.
std::vector<engine::Method> parse_method_list(const std::string& text);
std::string method_list_name(const std::vector<engine::Method>& methods);  // "direct,cutoff"
// "auto" (auto_method) or a method list (parse_method_list) into the settings.
void set_methods(ComputeSettings& settings, const std::string& text);
// "all" (empty: every GPU) or device ids like "0,1". Throws Error naming the bad entry.
std::vector<int> parse_gpu_list(const std::string& text);

// Checks physics, methods and method options without atoms or a grid (so a bad option fails
// before any input is read). Throws Error.
void validate(const ComputeSettings& settings);
// Throws Error when `backend` has no implementation of `method`.
void require_support(const engine::Backend& backend, engine::Method method);

// `sink` behind a check of each slab: a non-finite value is an Error naming its grid point and
// `what` (the map), unless allow_non_finite, when the values not finite are counted in
// `non_finite` (when given) instead.
engine::SlabSink finite_slabs(bool allow_non_finite, const GridSpec& grid,
                              const std::string& what, engine::SlabSink sink,
                              std::size_t* non_finite = nullptr);
// The Error finite_slabs throws, for a value found elsewhere (a map kept on a GPU).
Error non_finite_error(const std::string& what, const GridSpec& grid, const engine::NonFiniteValue& bad);

// The request for one method of the settings.
engine::PotentialRequest make_request(const ComputeSettings& settings, engine::Method method,
                                      const AtomSet& atoms, const GridSpec& grid);
// Metadata of a map computed with one method of the settings (provenance fields left empty).
io::MapMetadata map_metadata(const ComputeSettings& settings, engine::Method method);

// Where each method's map goes in an HDF5 file: the reference (direct when computed, else the
// first method) in /potential, every other method m in /potential_m.
std::string dataset_name(const std::vector<engine::Method>& methods, engine::Method method);
// True when the methods compute the periodic potential of a unit cell (validate allows no mix).
bool is_periodic(const std::vector<engine::Method>& methods);
// The method every other map is compared with: the first exact one (direct; ewald among periodic
// methods), when there is one among the methods.
std::optional<engine::Method> reference_method(const std::vector<engine::Method>& methods);

}  // namespace dcsgrid::app
