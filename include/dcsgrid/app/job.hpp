// The main job as one call: read a structure, lay the grid, compute each method's map and write
// every output, streaming slab by slab. The CLI and the Python module parse and present; the run
// itself is here, once.
//
// Data path: io::read_structure → GridChoice::resolve → engine::make_backend → for each method,
// Backend::run hands z-slabs in order to the outputs: HDF5 outputs stream each map into its own
// dataset; DX/CCP4 outputs (one map, whole) fill one host grid written at the end. With direct and
// a fast method, the fast map's slabs are compared with the direct map's (read back from the first
// HDF5 output) as they arrive, so no whole grid is held; the comparison is stored and reported.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/app/method_choice.hpp"
#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/files/output_checks.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::app {

// One output file, its format resolved from the extension once.
using OutputSpec = io::MapOutputPath;
// Throws Error for an unknown extension.
OutputSpec output_spec(const std::filesystem::path& path);

struct Job {
  std::filesystem::path input;
  io::ReadOptions read;
  GridChoice grid;
  ComputeSettings compute;
  std::vector<OutputSpec> outputs;
  io::WriteOptions write;
  std::string command_line;  // provenance, stored with the maps
  // Limits that catch a mistyped input before it becomes a huge grid: at most this many points,
  // and, for a grid laid around the atoms, no atom far from all the others (io::find_outlier).
  std::uint64_t max_points = std::uint64_t(1) << 32;
  bool allow_far_atoms = false;
};

// Checks the job before any work: compute settings, at least one output, each output's folder
// exists and the path is not a folder, several methods only into HDF5 outputs. Throws Error.
void validate(const Job& job);

// What a front end sees of a run while it goes: progress per pass (label: the method's name).
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void pass_started(std::string_view /*label*/) {}
  virtual void progress(double /*fraction*/) {}
  virtual void pass_finished() {}
};

// One method's pass over the grid.
struct PassReport {
  engine::Method method = engine::Method::direct;
  std::string dataset;        // where it is stored in HDF5 outputs
  engine::RunStats stats;
  double wall_seconds = 0;    // Backend::run, sink included
  double compare_seconds = 0; // comparing with the reference, before, in and after the sink
  double histogram_seconds = 0;  // of which after the pass: the error histogram's sweep
  // The sink's time beyond writing: comparing, less what ran while the slab was being written.
  double sink_compare_seconds = 0;
  std::optional<analysis::CompareReport> against_reference;  // fast map vs direct
  double compute_seconds() const { return stats.compute_seconds > 0 ? stats.compute_seconds : wall_seconds; }
  // The sink's time less sink_compare_seconds.
  double write_seconds() const;
  // Seconds of set-up, compute and write that ran at the same time as another of them (the slab
  // pipeline writes one slab while the device computes the next): their sum less the wall time.
  double overlapped_seconds() const;
};

// One stage of the run on its clock: seconds since the job started.
struct StageSpan {
  std::string stage;
  double begin = 0, end = 0;
};

struct JobReport {
  std::string input;
  std::size_t atoms = 0;
  double total_charge = 0;
  std::string charge_source;
  GridSpec grid;
  std::string units;
  std::optional<UnitCell> cell;  // periodic methods: the cell they ran with
  std::string device;
  std::vector<PassReport> passes;
  std::optional<MethodChoice> method_choice;  // --method auto
  std::vector<std::string> outputs;
  double read_seconds = 0;
  double write_seconds = 0;  // finishing the outputs plus time spent in the sinks
  double total_seconds = 0;
  // When each stage ran, so that their overlap shows: the backend's start-up, the parse, the
  // input's hash, each pass (its compute and writes), the outputs' completion. On rank 0.
  std::vector<StageSpan> timeline;
  nlohmann::json to_json() const;
};

// Runs the job. Throws Error/InputError; on failure no output is left (each is written under a
// temporary name and renamed once complete).
JobReport run_job(const Job& job, Observer& observer);

}  // namespace dcsgrid::app
