// run_job: read, lay the grid, compute each method's map slab by slab into the outputs (job.hpp).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "dcsgrid/app/job.hpp"
#include "app/atom_checks.hpp"
#include "app/clock.hpp"
#include "dcsgrid/app/mpi_context.hpp"
#include "app/mpi_ranks.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/metadata.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/structure/element_radii.hpp"
#include "dcsgrid/io/files/output_checks.hpp"
#include "dcsgrid/io/files/sha256.hpp"

namespace dcsgrid::app {

namespace fs = std::filesystem;

namespace {

// Host memory for reading maps back, per buffer.
constexpr std::size_t kReadBackBytes = std::size_t(32) << 20;

// The outputs of one run. HDF5 outputs stream every map into its own dataset; the other formats
// hold one map, gathered whole in host memory and written at the end. When MPI ranks share the run,
// every rank writes its planes of the HDF5 outputs (collectively, empty where it has none in a
// round) and sends them to rank 0 for the other formats, which rank 0 alone writes.
class MapOutputs {
 public:
  MapOutputs(const Job& job, const GridSpec& grid, const std::vector<io::MapMetadata>& metas,
             const std::vector<std::string>& datasets, const AtomSet& atoms)
      : job_(job), grid_(grid), meta_(metas.front()), maps_(metas.size()), atoms_(atoms), root_(mpi::rank() == 0) {
    for (const auto& out : job.outputs) {
      if (!out.format->open_stream) {
        gathers_ = true;
        if (root_) whole_.resize(grid.point_count());
        continue;
      }
      auto writer = out.format->open_stream(out.path, grid, metas.front(), job.write, sharing_ranks());
      for (std::size_t m = 1; m < metas.size(); ++m) writer->add_stream(datasets[m], metas[m]);
      hdf5_.push_back(std::move(writer));
    }
  }

  void write(std::size_t map, engine::Slab slab, const float* data) {
    for (auto& w : hdf5_) w->write_planes(map, slab.z_begin, slab.planes(), data);
    if (gathers_) gather_slabs_to_root(grid_, slab, data, whole_);
  }

  // Collective when sharing ranks: afterwards rank 0 can read back what every rank wrote.
  void share_written_planes() {
    if (!hdf5_.empty()) hdf5_.front()->share_written_planes();
  }

  // Planes of a map already written (several maps are written only into HDF5 outputs).
  void read_back(std::size_t map, engine::Slab slab, float* out) {
    if (hdf5_.empty()) throw Error("internal: no HDF5 output to read a map back from");
    hdf5_.front()->read_planes(map, slab.z_begin, slab.planes(), out);
  }

  void add_root_attribute(const std::string& name, const std::string& value) {
    for (auto& w : hdf5_) w->add_root_attribute(name, value);
  }

  // The input's hash, known after the outputs were opened, into every map's metadata.
  void record_input_sha256(const std::string& sha256) {
    meta_.input_sha256 = sha256;
    for (auto& w : hdf5_)
      for (std::size_t m = 0; m < maps_; ++m) w->replace_map_attribute(m, "input_sha256", sha256);
  }

  // Every output is completed under a temporary name first and only then are they all renamed
  // into place: a failure or a signal before the renames leaves every old file as it was.
  void finish() {
    for (auto& w : hdf5_) w->finish_unpublished();
    if (!root_) {  // rank 0 writes the other formats and renames the files every rank wrote
      for (auto& w : hdf5_) w->publish();
      return;
    }
    io::WriteOptions options = job_.write;
    options.atoms = &atoms_;  // formats that store the atoms beside the map (cube)
    std::vector<std::unique_ptr<io::AtomicFile>> staged;
    for (const auto& out : job_.outputs) {
      if (out.format->open_stream) continue;
      staged.push_back(std::make_unique<io::AtomicFile>(out.path));
      const std::string warning =
          io::write_map(staged.back()->temp_path(), out.format, grid_, whole_.data(), meta_, options);
      if (!warning.empty()) spdlog::warn("{}", warning);
    }
    for (auto& w : hdf5_) w->publish();
    for (auto& f : staged) f->commit();
  }

 private:
  const Job& job_;
  GridSpec grid_;
  io::MapMetadata meta_;
  std::size_t maps_;
  const AtomSet& atoms_;
  bool root_;
  bool gathers_ = false;  // some output is not streamed (rank 0 holds the whole map)
  std::vector<std::unique_ptr<io::MapStreamWriter>> hdf5_;
  std::vector<float> whole_;
};

// Both maps read back in z order, slab by slab: visit(slab, reference, test).
template <class Visit>
void read_back_sweep(MapOutputs& outputs, const GridSpec& grid, std::size_t reference_map,
                     std::size_t test_map, const Visit& visit) {
  const std::int64_t planes = std::clamp<std::int64_t>(
      std::int64_t(kReadBackBytes / (grid.plane_size() * sizeof(float))), 1, grid.nz());
  std::vector<float> reference(grid.plane_size() * planes), test(reference.size());
  for (std::int64_t z = 0; z < grid.nz(); z += planes) {
    const engine::Slab slab{z, std::min(grid.nz(), z + planes)};
    outputs.read_back(reference_map, slab, reference.data());
    outputs.read_back(test_map, slab, test.data());
    visit(slab, reference.data(), test.data());
  }
}

// Methods in the order they run: the reference first, so the others compare as they stream.
std::vector<engine::Method> run_order(const std::vector<engine::Method>& methods) {
  std::vector<engine::Method> order = methods;
  if (const auto ref = reference_method(methods)) {
    std::erase(order, *ref);
    order.insert(order.begin(), *ref);
  }
  return order;
}

// The input file's SHA-256 (provenance) and when it was done.
struct InputHash {
  std::string sha256;
  clock_type::time_point end;
};

struct Inputs {
  io::Structure structure;
  std::future<InputHash> hash;  // computed on a thread of its own until joined
  std::string sha256;           // once joined
  clock_type::time_point parse_begin, parse_end, grid_laid, hash_end;
  double read_seconds() const { return std::chrono::duration<double>(parse_end - parse_begin).count(); }
  // Waits for the hash, the first time.
  const std::string& input_sha256() {
    if (hash.valid()) {
      InputHash done = hash.get();
      sha256 = std::move(done.sha256);
      hash_end = done.end;
    }
    return sha256;
  }
};

// Reads the structure while its SHA-256 is computed on another thread. The hash goes on beside
// the passes: only the outputs' metadata needs it (hashing 300 MB took longer than parsing it).
Inputs read_inputs(const Job& job) {
  Inputs in;
  in.parse_begin = clock_type::now();  // before the hash starts: a small file's hash ends at once
  in.hash = std::async(std::launch::async, [path = job.input] {
    // Standard input, a named pipe (the reader's alone) or a device (refused by the reader):
    // no file to hash.
    std::error_code ec;
    const bool regular = path != "-" && std::filesystem::is_regular_file(path, ec);
    std::string sha256 = regular ? io::sha256_file(path) : std::string();
    return InputHash{std::move(sha256), clock_type::now()};
  });
  in.structure = io::read_structure(job.input, job.read);
  in.parse_end = clock_type::now();
  for (const auto& w : in.structure.warnings) spdlog::warn("{}", w);
  if (std::ranges::any_of(job.compute.methods, [](engine::Method m) { return engine::describe(m).needs_radii; })) {
    io::fill_missing_radii(in.structure, job.input, job.read.format);
    spdlog::info("{}: radii from {}", in.structure.source, in.structure.radius_source);
  }
  return in;
}

// Every output's least size against the free space of its file system, before any compute.
void require_output_space(const Job& job, const GridSpec& grid, std::size_t maps) {
  std::vector<io::PlannedOutput> planned;
  for (const auto& out : job.outputs)
    planned.push_back({out.path, io::least_map_bytes(out.format, grid, maps, job.write)});
  io::require_free_space(planned);
}

// --method auto keeps direct summation when it costs at most this much more than msm: in one run a
// quarter of a second is a fair price for the exact map.
constexpr double kAutoSlackSeconds = 0.25;

Hardware hardware_of(const engine::Backend& backend) {
  return {backend.name() == "cuda", team_size()};
}

// Small systems: the fast methods' set-up costs more than the sum they save.
void note_when_exact_is_cheaper(const PassReport& pass, const JobReport& report, const Hardware& hw) {
  // Only the approximations of the exact Coulomb sum (not periodic maps, not PB) have direct's
  // map as their target.
  const engine::MethodDescription& method = engine::describe(pass.method);
  if (method.exact || method.periodic || method.needs_radii) return;
  const double taken = pass.stats.setup_seconds + pass.compute_seconds();
  const MethodEstimate exact = exact_reference(hw, report.atoms, report.grid);
  if (exact.seconds < taken)
    spdlog::warn("{} took {:.3f} s; --method {}, which is exact, would take about {:.3f} s for a system "
                 "this size",
                 engine::method_name(pass.method), taken, engine::method_name(exact.method), exact.seconds);
}

// What the passes that compare share: when memory spares them, the reference map held as its pass
// streams (so that no comparison reads it back from the file) and one buffer for each pass's
// differences; and the atoms' distance shells. When a GPU computes, the host touches the
// differences' pages and makes the shells on another thread while the reference's pass runs;
// otherwise the buffer comes first and the first pass that compares makes the shells.
struct SharedComparison {
  std::unique_ptr<float[]> reference;  // not zeroed: its pass writes every point (null unless held)
  std::vector<float> differences;      // empty unless held
  std::shared_future<void> buffers;    // `differences` is ready
  // Last, so that it is destroyed first: its destructor waits for the thread that fills the rest.
  std::shared_future<std::shared_ptr<const analysis::AtomShells>> shells;
};

std::shared_ptr<const analysis::AtomShells> distance_shells(const engine::PotentialRequest& request) {
  if (!request.atoms || request.atoms->empty()) return nullptr;
  return std::make_shared<const analysis::AtomShells>(
      analysis::atom_shells(*request.atoms, request.grid, analysis::CompareOptions{}.shell_edges));
}

void prepare_comparisons(SharedComparison& shared, const engine::PotentialRequest& first, bool hold, bool gpu) {
  const std::size_t points = hold ? first.grid.point_count() : 0;
  if (hold) shared.reference.reset(new float[points]);
  auto ready = std::make_shared<std::promise<void>>();
  shared.buffers = ready->get_future().share();
  if (!gpu) {
    shared.differences.resize(points);
    ready->set_value();
    shared.shells = std::async(std::launch::deferred, [&first] { return distance_shells(first); }).share();
    return;
  }
  shared.shells = std::async(std::launch::async, [&shared, &first, points, ready] {
                    try {
                      shared.differences.resize(points);
                      ready->set_value();
                    } catch (...) {
                      ready->set_exception(std::current_exception());
                      throw;
                    }
                    return distance_shells(first);
                  }).share();
}

// One method's pass: its slabs go to the outputs as map number `map`; with `compare`, each slab is
// compared with map 0's (the reference: held, or read back) as it arrives, then the histogram sweep
// runs (over the differences held, or over both maps read back).
// When MPI ranks share the pass, the ranks' planes reach rank 0 only through the file: rank 0
// compares once the pass is written (both sweeps read back, in z order as in one process).
PassReport run_pass(engine::Backend& backend, const engine::PotentialRequest& request, std::size_t map,
                    bool compare, MapOutputs& outputs, Observer& observer, SharedComparison& shared) {
  const GridSpec& grid = request.grid;
  const bool after_the_pass = sharing_ranks();
  PassReport pass;
  pass.method = request.method;
  std::optional<analysis::MapComparison> comparison;
  bool holds_differences = false;
  if (compare && mpi::rank() == 0) {
    const auto tc = clock_type::now();
    comparison.emplace(grid, shared.shells.get());
    pass.compare_seconds += seconds_since(tc);
    spdlog::debug("distance shells from the atoms ready after {:.3f} s", pass.compare_seconds);
    shared.buffers.get();
    holds_differences = !shared.differences.empty() || (!after_the_pass && held_maps_fit(grid));
    if (holds_differences) comparison->hold_differences(shared.differences);
  }
  const bool holds_reference = map == 0 && shared.reference;
  const bool compares_held = comparison && shared.reference;
  // The slab is written on another thread meanwhile: leave it a core.
  if (compares_held) comparison->set_threads(std::max(1, team_size() - 1));
  std::vector<float> reference;
  observer.pass_started(engine::method_name(request.method));
  const auto t0 = clock_type::now();
  std::size_t non_finite = 0;
  const std::string what = engine::method_name(request.method) + " map";
  pass.stats = backend.run(
      request,
      finite_slabs(request.allow_non_finite, grid, what, [&](engine::Slab slab, const float* data) {
        const std::size_t offset = std::size_t(slab.z_begin) * grid.plane_size();
        const std::size_t points = grid.plane_size() * std::size_t(slab.planes());
        if (!holds_reference && !compares_held) {
          outputs.write(map, slab, data);
          if (!comparison || after_the_pass) return;
          const auto tc = clock_type::now();
          reference.resize(points);
          outputs.read_back(0, slab, reference.data());
          comparison->add(slab.z_begin, slab.planes(), reference.data(), data);
          pass.compare_seconds += seconds_since(tc);
          pass.sink_compare_seconds += seconds_since(tc);
          return;
        }
        // The reference is held, so nothing but this write touches the files: the slab is written
        // on another thread while this one (whose OpenMP team persists) keeps or compares it.
        const auto tc = clock_type::now();
        std::future<double> written = std::async(std::launch::async, [&] {
          outputs.write(map, slab, data);
          return seconds_since(tc);
        });
        if (holds_reference) std::copy_n(data, points, shared.reference.get() + offset);
        else comparison->add(slab.z_begin, slab.planes(), shared.reference.get() + offset, data);
        if (compares_held) pass.compare_seconds += seconds_since(tc);
        const double writing = written.get();
        pass.sink_compare_seconds += std::max(0.0, seconds_since(tc) - writing);
      }, &non_finite),
      [&](double fraction) { observer.progress(fraction); });
  pass.wall_seconds = seconds_since(t0);
  observer.pass_finished();
  if (non_finite > 0)
    spdlog::warn("{}: {} of {} values are not finite (kept: --allow-non-finite)", what, non_finite,
                 grid.point_count());
  if (compare && after_the_pass) outputs.share_written_planes();
  if (comparison) {
    const auto tc = clock_type::now();
    if (after_the_pass)
      read_back_sweep(outputs, grid, 0, map, [&](engine::Slab slab, const float* r, const float* t) {
        comparison->add(slab.z_begin, slab.planes(), r, t);
      });
    if (holds_differences)
      comparison->histogram_of_held_differences();
    else
      read_back_sweep(outputs, grid, 0, map, [&](engine::Slab slab, const float* r, const float* t) {
        comparison->add_to_histogram(slab.z_begin, slab.planes(), r, t);
      });
    pass.against_reference = comparison->report();
    pass.histogram_seconds = seconds_since(tc);
    pass.compare_seconds += pass.histogram_seconds;
  }
  return pass;
}

// The cell of a periodic run: --cell, else the input's own. Throws Error saying where one comes from.
UnitCell periodic_cell(const ComputeSettings& compute, const io::Structure& structure) {
  if (compute.cell) return *compute.cell;
  if (structure.cell) return *structure.cell;
  throw Error("--method " + method_list_name(compute.methods) + " computes a periodic potential, and " +
              structure.source +
              " records no unit cell (no CRYST1 record or mmCIF _cell, or only the 1 × 1 × 1 Å placeholder): "
              "give one with --cell A,B,C[,ALPHA,BETA,GAMMA] (Å, degrees)");
}

// Reads the input, checks it and lays the grid around it, filling the report's input facts. Under
// mpirun only rank 0 reads (`in` stays empty on the others) and the other ranks get the facts and
// the grid from it.
GridSpec read_and_lay_grid(const Job& job, Inputs& in, JobReport& report) {
  report.input = job.input.string();
  report.units = unit_name(job.compute.physics.unit);
  GridSpec grid;
  if (mpi::rank() == 0) {
    in = read_inputs(job);
    const AtomSet& atoms = in.structure.atoms;
    report.atoms = atoms.size();
    report.total_charge = atoms.total_charge();
    report.charge_source = in.structure.charge_source;
    report.read_seconds = in.read_seconds();
    spdlog::info("{}: {} atoms, total charge {:+.4f} e (charges from {})", report.input, atoms.size(),
                 report.total_charge, report.charge_source);
    // A periodic map wraps far atoms into the cell: only a non-periodic one refuses them.
    const bool periodic = is_periodic(job.compute.methods);
    check_atoms(atoms, {in.structure.source, -1, &in.structure.lines},
                !job.grid.box && !job.allow_far_atoms && !periodic);
    if (periodic) {
      report.cell = periodic_cell(job.compute, in.structure);
      spdlog::info("unit cell {}{}", report.cell->describe(), job.compute.cell ? " (--cell)" : " (from the input)");
    }
    grid = periodic ? job.grid.resolve(*report.cell) : job.grid.resolve(bounding_box(atoms));
    if (!job.grid.box) grid = engine::grid_for_methods(grid, job.compute.methods);
    if (grid.point_count() > job.max_points)
      throw Error(fmt::format("the grid would have {} points ({}, {:.3g} GiB of float32): more than "
                              "--max-points {} (raise it if you mean it, or give a box with --center "
                              "and --size)",
                              grid.point_count(), grid.describe(), double(grid_bytes(grid)) / double(1 << 30),
                              job.max_points));
  }
  share_facts(report.atoms, report.total_charge, grid);
  share_cell(report.cell);
  share_text(report.charge_source);
  // Ranks that share the outputs write their metadata together, from the start.
  if (sharing_ranks()) {
    in.input_sha256();
    share_text(in.sha256);
  }
  report.grid = grid;
  return grid;
}

// Seconds since the job started, for its timeline.
struct JobClock {
  clock_type::time_point start = clock_type::now();
  double at(clock_type::time_point t) const { return std::chrono::duration<double>(t - start).count(); }
  double now() const { return at(clock_type::now()); }
};

// Under mpirun, this rank's cores and GPU; OpenMP's team sized to the cores.
ComputeSettings rank_hardware(const ComputeSettings& compute) {
  ComputeSettings hardware = compute;
  choose_rank_hardware(hardware);
  set_openmp_threads(hardware.threads);
  return hardware;
}

// The backend starting on a thread of its own (a GPU's context takes about 0.1 s) while the input
// is read; under mpirun it computes this rank's slabs. `hardware` and `clock` outlive it.
class BackendStart {
 public:
  BackendStart(const ComputeSettings& hardware, const JobClock& clock)
      : backend_(std::async(std::launch::async, [this, &hardware, &clock] {
          span_.begin = clock.now();
          auto backend = share_slabs_over_ranks(engine::make_backend(hardware.device, hardware.gpus, hardware.methods));
          backend->warm_up();
          span_.end = clock.now();
          return backend;
        })) {}
  BackendStart(const BackendStart&) = delete;
  BackendStart& operator=(const BackendStart&) = delete;

  // Waits for the backend; its start-up goes into the report's timeline.
  std::unique_ptr<engine::Backend> get(JobReport& report) {
    std::unique_ptr<engine::Backend> backend = backend_.get();
    report.timeline.push_back(span_);
    return backend;
  }

 private:
  StageSpan span_{"backend start-up", 0, 0};  // before backend_: the thread writes it
  std::future<std::unique_ptr<engine::Backend>> backend_;
};

// The reading and hashing of the input in the timeline (rank 0's, which read it).
void record_reading(const Inputs& in, const JobClock& clock, JobReport& report) {
  if (mpi::rank() != 0) return;
  report.timeline.push_back({"parse", clock.at(in.parse_begin), clock.at(in.parse_end)});
  report.timeline.push_back({"atom checks and grid", clock.at(in.parse_end), clock.at(in.grid_laid)});
}

// The input's hash into the outputs' metadata, where the passes went on without it (one
// process), and its stage into the timeline.
void record_input_hash(Inputs& in, MapOutputs& outputs, const JobClock& clock, JobReport& report) {
  if (!sharing_ranks()) outputs.record_input_sha256(in.input_sha256());
  if (mpi::rank() == 0) report.timeline.push_back({"input hash", clock.at(in.parse_begin), clock.at(in.hash_end)});
}

// The methods to run: --method auto's choice on this backend (rank 0's under mpirun, should the
// ranks' hardware differ), with the run's unit cell.
ComputeSettings choose_methods(const Job& job, const Hardware& hw, const GridSpec& grid, JobReport& report) {
  MethodChoice choice;
  ComputeSettings compute = with_chosen_method(job.compute, hw, report.atoms, grid, kAutoSlackSeconds, &choice);
  compute.cell = report.cell;
  share_methods(compute.methods);
  if (job.compute.auto_method) {
    spdlog::info("{}", choice.reason);
    report.method_choice = choice;
  }
  return compute;
}

// The atoms this process computes from: the input's, or under mpirun on ranks other than 0 those
// rank 0 sends into `received` (every atom, or for a lone local method the atoms its planes need).
const AtomSet& atoms_of_rank(const Inputs& in, const ComputeSettings& compute,
                             const std::vector<engine::Method>& order, const GridSpec& grid, const Hardware& hw,
                             AtomSet& received) {
  const bool every_atom = order.size() > 1 || !engine::describe(order.front()).local;
  const AtomSet& read = in.structure.atoms;
  return share_atoms(read, make_request(compute, order.front(), read, grid), every_atom, hw.gpu, received);
}

// One pass a method, in run order: its request (validated), its map's metadata and its dataset.
struct PassPlan {
  std::vector<engine::Method> order;
  std::vector<engine::PotentialRequest> requests;
  std::vector<io::MapMetadata> metas;
  std::vector<std::string> datasets;
};

PassPlan plan_passes(const Job& job, const ComputeSettings& compute, const std::vector<engine::Method>& order,
                     const AtomSet& atoms, const GridSpec& grid, const std::string& sha256,
                     const JobReport& report) {
  PassPlan plan;
  plan.order = order;
  for (const auto m : order) {
    plan.requests.push_back(make_request(compute, m, atoms, grid));
    engine::validate(plan.requests.back());
    // From the request itself, so that pb records the grids it will solve on.
    io::MapMetadata meta = engine::method_metadata(plan.requests.back());
    meta.atom_count = report.atoms;
    meta.total_charge = report.total_charge;
    meta.input_file = report.input;
    meta.input_sha256 = sha256;
    meta.command_line = job.command_line;
    plan.metas.push_back(std::move(meta));
    plan.datasets.push_back(dataset_name(order, m));
  }
  return plan;
}

// Before any compute: host memory for a whole map where an output is not streamed, the outputs'
// room on disk, and every method on this backend. Then the plan is logged.
void check_resources(const Job& job, const engine::Backend& backend, const PassPlan& plan, const GridSpec& grid) {
  if (std::ranges::any_of(job.outputs, [](const OutputSpec& o) { return !o.format->open_stream; })) {
    try {
      require_host_memory(grid);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + ", or write only HDF5 (streamed in slabs)");
    }
  }
  require_output_space(job, grid, plan.order.size());
  for (const auto m : plan.order) require_support(backend, m);
  spdlog::info("grid {}", grid.describe());
  for (const auto& r : plan.requests)
    spdlog::info("{} on {}: {}", engine::method_name(r.method), backend.name(), engine::describe_medium(r));
}

// The pass's comparison with the reference, rank 0's, as a root attribute of the HDF5 outputs
// (written by every rank into the file they share).
void store_comparison(PassReport& pass, bool compared, const PassPlan& plan, std::size_t map,
                      MapOutputs& outputs) {
  std::string comparison;
  if (pass.against_reference) {
    pass.against_reference->units = plan.metas[map].units;
    comparison = pass.against_reference->to_json().dump();
  }
  if (compared) share_text(comparison);
  if (comparison.empty()) return;
  outputs.add_root_attribute("comparison_" + engine::method_name(plan.order[map]) + "_vs_" +
                                 engine::method_name(*reference_method(plan.order)),
                             comparison);
}

// Every method's pass in order, each after the first compared with the reference when there is one.
void run_passes(engine::Backend& backend, const PassPlan& plan, MapOutputs& outputs, Observer& observer,
                const JobClock& clock, const Hardware& hw, JobReport& report) {
  const bool has_reference = reference_method(plan.order).has_value();
  SharedComparison shared;
  if (has_reference && plan.order.size() > 1 && mpi::rank() == 0) {
    const engine::PotentialRequest& first = plan.requests.front();
    // The reference and the differences of one pass at a time.
    const bool hold = !sharing_ranks() && held_maps_fit(first.grid, 2);
    prepare_comparisons(shared, first, hold, hw.gpu);
  }
  for (std::size_t m = 0; m < plan.order.size(); ++m) {
    const bool compare = m > 0 && has_reference;
    const double pass_begin = clock.now();
    PassReport pass = run_pass(backend, plan.requests[m], m, compare, outputs, observer, shared);
    report.timeline.push_back(
        {engine::method_name(plan.order[m]) + " (compute and write)", pass_begin, clock.now()});
    pass.dataset = plan.datasets[m];
    store_comparison(pass, compare, plan, m, outputs);
    report.device = pass.stats.device.empty() ? backend.name() : pass.stats.device;
    note_when_exact_is_cheaper(pass, report, hw);
    report.write_seconds += pass.write_seconds();
    report.passes.push_back(std::move(pass));
  }
}

// The outputs completed and renamed into place; the report's closing figures.
void finish_outputs(const Job& job, MapOutputs& outputs, const JobClock& clock, JobReport& report) {
  const auto t_write = clock_type::now();
  outputs.finish();
  report.write_seconds += seconds_since(t_write);
  report.timeline.push_back({"outputs' completion", clock.at(t_write), clock.now()});
  for (const auto& out : job.outputs) report.outputs.push_back(out.path.string());
  report.total_seconds = seconds_since(clock.start);
}

}  // namespace

double PassReport::write_seconds() const {
  return std::max(0.0, stats.sink_seconds - sink_compare_seconds);
}

double PassReport::overlapped_seconds() const {
  return std::max(0.0, stats.setup_seconds + compute_seconds() + write_seconds() - wall_seconds);
}

OutputSpec output_spec(const fs::path& path) { return {path, io::map_format_from_path(path)}; }

void validate(const Job& job) {
  validate(job.compute);
  validate(job.grid, job.compute.methods);
  if (job.outputs.empty()) throw Error("no output given (-o FILE)");
  io::require_outputs_apart(job.outputs, {job.input});
  for (const auto& out : job.outputs) {
    io::require_writable_output(out.path);
    if (job.compute.methods.size() > 1 && !out.format->several_maps)
      throw Error("--method " + method_list_name(job.compute.methods) +
                  " stores several maps and their comparison in one file: " + out.path.string() +
                  " is not .h5 (run the methods separately for other formats)");
  }
}

JobReport run_job(const Job& job, Observer& observer) {
  const JobClock clock;
  validate(job);
  const ComputeSettings hardware = rank_hardware(job.compute);
  BackendStart starting(hardware, clock);
  Inputs in;  // under mpirun, on rank 0 only
  JobReport report;
  const GridSpec grid = read_and_lay_grid(job, in, report);
  in.grid_laid = clock_type::now();
  const std::unique_ptr<engine::Backend> backend = starting.get(report);
  record_reading(in, clock, report);
  const double planning = clock.now();
  const Hardware hw = hardware_of(*backend);
  const ComputeSettings compute = choose_methods(job, hw, grid, report);
  const std::vector<engine::Method> order = run_order(compute.methods);
  AtomSet received;  // under mpirun, ranks other than 0: the atoms rank 0 sends
  const AtomSet& atoms = atoms_of_rank(in, compute, order, grid, hw, received);
  const PassPlan plan = plan_passes(job, compute, order, atoms, grid, in.sha256, report);
  check_resources(job, *backend, plan, grid);
  MapOutputs outputs(job, grid, plan.metas, plan.datasets, in.structure.atoms);
  if (mpi::rank() == 0) report.timeline.push_back({"plan and outputs opened", planning, clock.now()});
  run_passes(*backend, plan, outputs, observer, clock, hw, report);
  record_input_hash(in, outputs, clock, report);
  finish_outputs(job, outputs, clock, report);
  return report;
}

namespace {

nlohmann::json energy_json(double kt, double kj_per_mol) { return {{"kT", kt}, {"kJ_per_mol", kj_per_mol}}; }

// An iterative method's solve: the output grid's residual history, every grid solved (focusing,
// the solvation's reference medium) and the energies.
nlohmann::json solver_json(const engine::SolverReport& r) {
  nlohmann::json grids = nlohmann::json::array();
  for (const engine::SolverLevel& level : r.levels)
    grids.push_back({{"dims", level.grid.dims},
                     {"origin", level.grid.origin},
                     {"spacing", level.grid.spacing},
                     {"boundary", level.boundary},
                     {"reference_medium", level.reference},
                     {"iterations", level.iterations},
                     {"residual_history", level.residual_history}});
  nlohmann::json j = {{"method", r.method},
                      {"iterations", r.iterations},
                      {"residual_history", r.residual_history},
                      {"grids", grids},
                      {"energy", energy_json(r.energy_kt, r.energy_kj_per_mol)}};
  if (r.solvation_kt) j["solvation_energy"] = energy_json(*r.solvation_kt, *r.solvation_kj_per_mol);
  return j;
}

}  // namespace

nlohmann::json JobReport::to_json() const {
  nlohmann::json pass_list = nlohmann::json::array();
  double setup = 0, compute = 0, overflow = 0;
  std::vector<engine::Method> methods;
  for (const PassReport& p : passes) {
    const double pairs = double(atoms) * double(grid.point_count());
    nlohmann::json j = {{"method", engine::method_name(p.method)},
                        {"dataset", p.dataset},
                        {"seconds", {{"setup", p.stats.setup_seconds},
                                     {"compute", p.compute_seconds()},
                                     {"overflow_cpu", p.stats.overflow_seconds},
                                     {"write", p.write_seconds()},
                                     {"overlapped", p.overlapped_seconds()},
                                     {"compare", p.compare_seconds},
                                     {"wall", p.wall_seconds}}}};
    if (engine::describe(p.method).all_pairs) j["evaluations_per_second"] = pairs / p.compute_seconds();
    if (p.against_reference) j["comparison"] = p.against_reference->to_json();
    if (p.stats.solver) j["solver"] = solver_json(*p.stats.solver);
    for (const engine::DeviceRunStats& d : p.stats.devices) {
      nlohmann::json stages = nlohmann::json::array();
      for (const engine::StageTime& t : d.setup_stages) stages.push_back({{"stage", t.stage}, {"seconds", t.seconds}});
      j["devices"].push_back({{"device", d.device},
                              {"setup_seconds", d.setup_seconds},
                              {"setup_stages", stages},
                              {"compute_seconds", d.compute_seconds},
                              {"slabs", d.slabs}});
    }
    pass_list.push_back(j);
    setup += p.stats.setup_seconds;
    compute += p.compute_seconds();
    overflow += p.stats.overflow_seconds;
    methods.push_back(p.method);
  }
  nlohmann::json j = {
      {"input", input},
      {"atoms", atoms},
      {"total_charge", total_charge},
      {"charge_source", charge_source},
      {"grid", {{"dims", grid.dims}, {"origin", grid.origin}, {"spacing", grid.spacing}}},
      {"method", method_list_name(methods)},
      {"units", units},
      {"device", device},
      {"outputs", outputs},
      {"passes", pass_list},
      {"seconds", {{"read", read_seconds}, {"setup", setup}, {"compute", compute},
                   {"overflow_cpu", overflow}, {"write", write_seconds}, {"total", total_seconds}}},
  };
  if (passes.size() == 1 && pass_list[0].contains("evaluations_per_second"))
    j["evaluations_per_second"] = pass_list[0]["evaluations_per_second"];
  if (method_choice) j["method_choice"] = method_choice->to_json();
  nlohmann::json spans = nlohmann::json::array();
  for (const StageSpan& s : timeline) spans.push_back({{"stage", s.stage}, {"begin", s.begin}, {"end", s.end}});
  j["timeline"] = spans;
  return j;
}

}  // namespace dcsgrid::app
