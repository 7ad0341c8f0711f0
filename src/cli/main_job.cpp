// dcsgrid INPUT -o OUT [options]: read atoms, compute the potential on a grid, write the maps.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/cli/progress.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/engine/metadata.hpp"
#include "dcsgrid/io/map_io.hpp"
#include "dcsgrid/io/read.hpp"
#include "shared_options.hpp"

namespace dcsgrid::cli {
namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

struct MainOptions {
  std::string input;
  std::vector<std::string> outputs;
  io::ReadOptions read;
  std::string unknown = "error";
  GridOptions grid;
  Physics physics;
  std::string units = "kT/e";
  MethodOptions method;
  std::string device = "auto";
  std::string gpus = "all";
  int threads = 0;
  bool compress = false;
  bool json = false;
  int verbose = 0;
  bool quiet = false;
};

const char* kExamples = R"(Examples:
  dcsgrid protein.pqr -o pot.h5                    potential in kT/e, 0.5 Å grid, 10 Å padding
  dcsgrid 1abc.pdb -o pot.dx -o pot.ccp4           charges from AMBER; maps for VMD/PyMOL/Chimera
  dcsgrid lig.pdbqt -o pot.h5 --center 10,2,-4 --size 24,24,24 --spacing 0.375   AutoGrid-style box
  dcsgrid big.pqr -o pot.h5 --method cutoff --cutoff 12      fast cutoff summation
  dcsgrid in.pqr -o pot.h5 --dielectric 78.54 --ionic-strength 0.15   screened (Debye–Hückel)
  dcsgrid info pot.h5                              grid, units, provenance, min/max/mean
  dcsgrid in.pqr -o both.h5 --method both         direct and cutoff maps, and the cutoff's error
  dcsgrid compare direct.h5 cutoff.h5              accuracy of one map against another

Inputs: .pqr .pdb .ent .cif .mmcif .pdbqt .xyz, optionally .gz. PDB/mmCIF get charges from a
pdb2pqr force-field table (missing hydrogens folded onto their heavy atoms).
Outputs: .h5 (HDF5, /potential [nz][ny][nx] + pot.xmf for ParaView), .dx (OpenDX), .ccp4/.mrc/.map.
Potential: V(p) = k_C Σ q_i / (ε |p − r_i|), k_C = 332.0637 kcal·Å/(mol·e²); distances below
--min-distance count as --min-distance, so no point yields inf/NaN.
Other commands: info, compare, batch, sample, similarity (run `dcsgrid COMMAND --help`).)";

void add_options(CLI::App& app, MainOptions& o) {
  app.add_option("input", o.input, "Atoms with charges: PQR, PDB, mmCIF, PDBQT or XYZ (.gz too)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", o.outputs,
                 "Output map; the extension picks the format (.h5, .dx, .ccp4/.mrc/.map). Repeat "
                 "for several")
      ->required();

  add_charge_options(app, o.read, o.unknown,
                     "Residues/atoms missing from the force field: error (list them) or zero "
                     "(warn, charge 0)");
  app.add_option("--model", o.read.model, "Model number of a multi-model PDB/mmCIF")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Input and charges");

  add_grid_options(app, o.grid, "Grid (default: the atoms' box plus --padding)",
                   "Margin around the atoms' bounding box, Å");
  add_physics_options(app, o.physics, o.units);
  add_method_options(app, o.method, {"direct", "cutoff", "both"},
                     "direct (exact sum over all atoms), cutoff, or both (direct in /potential, "
                     "cutoff in /potential_cutoff, and their comparison)");
  app.add_option("--bin-capacity", o.method.cutoff.bin_capacity,
                 "Atoms per bin for the GPU cutoff (0: chosen so ~95% of atoms fit)")
      ->capture_default_str()
      ->group(kMethodGroup);
  app.add_flag("--dynamic-bins", o.method.cutoff.dynamic_bins,
               "Prefix-sum bins instead of fixed capacity (very uneven atom densities)")
      ->group(kMethodGroup);

  const std::string dev = kHardwareGroup;
  add_device_option(app, o.device, dev);
  app.add_option("--gpus", o.gpus, "GPUs to use: all or a list like 0,1")
      ->capture_default_str()
      ->group(dev);
  app.add_option("--threads", o.threads, "CPU threads (0: all cores)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group(dev);

  const std::string out = "Output and messages";
  app.add_flag("--compress", o.compress, "HDF5: shuffle + deflate compression")->group(out);
  app.add_flag("--json", o.json, "Print the run summary as JSON on stdout")->group(out);
  app.add_flag("-v,--verbose", o.verbose, "More messages (-vv for all)")->group(out);
  app.add_flag("-q,--quiet", o.quiet, "Only warnings and errors")->group(out);
}

std::vector<int> parse_gpu_list(const std::string& text) {
  std::vector<int> ids;
  if (text == "all") return ids;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    try {
      std::size_t used = 0;
      const int id = std::stoi(item, &used);
      if (used != item.size() || id < 0) throw std::invalid_argument(item);
      ids.push_back(id);
    } catch (const std::exception&) {
      throw Error("--gpus: '" + text + "' is not 'all' or a list of device numbers like 0,1");
    }
    pos = comma + 1;
  }
  return ids;
}

// Refuses, before any work, outputs whose format is unknown or whose folder cannot take a file.
void check_outputs(const std::vector<std::string>& outputs) {
  for (const auto& out : outputs) {
    io::map_format_from_path(out);
    const fs::path dir = fs::path(out).parent_path().empty() ? fs::path(".") : fs::path(out).parent_path();
    if (!fs::is_directory(dir)) throw Error("output folder " + dir.string() + " does not exist");
    if (fs::is_directory(out)) throw Error("output " + out + " is a folder");
  }
}

io::MapMetadata make_metadata(const MainOptions& o, const engine::PotentialRequest& request,
                              const io::Structure& structure, const std::string& input_sha256,
                              const std::string& command_line) {
  io::MapMetadata meta = engine::method_metadata(request.physics, request.method, request.cutoff);
  meta.atom_count = structure.atoms.size();
  meta.total_charge = structure.atoms.total_charge();
  meta.input_file = o.input;
  meta.input_sha256 = input_sha256;
  meta.command_line = command_line;
  return meta;
}

// One method's pass over the grid: streamed into the HDF5 writers, and into `whole` when that is
// sized to the grid.
struct PassTimes {
  engine::RunStats stats;
  double seconds = 0;  // wall time of backend->run
  double compute_seconds() const { return stats.compute_seconds > 0 ? stats.compute_seconds : seconds; }
};

PassTimes compute_pass(engine::Backend& backend, const engine::PotentialRequest& request,
                       std::vector<std::unique_ptr<io::Hdf5MapWriter>>& streams,
                       std::vector<float>& whole, const std::string& label, bool show_progress) {
  const std::size_t plane = request.grid.plane_size();
  ProgressBar bar(label, show_progress);
  const auto t0 = clock_type::now();
  PassTimes pass;
  pass.stats = backend.run(
      request,
      [&](engine::Slab slab, const float* data) {
        for (auto& s : streams) s->write_planes(slab.z_begin, slab.planes(), data);
        if (!whole.empty())
          std::copy(data, data + plane * slab.planes(), whole.begin() + plane * slab.z_begin);
      },
      [&](double fraction) { bar.update(fraction); });
  pass.seconds = seconds_since(t0);
  bar.finish();
  return pass;
}

int run(MainOptions& o, const std::string& command_line) {
  const auto t_start = clock_type::now();
  if (o.threads > 0) omp_set_num_threads(o.threads);
  check_outputs(o.outputs);
  // The input's SHA-256 (provenance) on another thread while it is read: hashing a large file
  // took as long as reading it.
  std::future<std::string> input_hash =
      std::async(std::launch::async, [path = o.input] { return io::sha256_file(path); });
  const bool both = o.method.method == "both";
  if (both)
    for (const auto& out : o.outputs)
      if (io::map_format_from_path(out) != io::MapFormat::hdf5)
        throw Error("--method both stores two maps and their comparison in one file: " + out +
                    " is not .h5 (run direct and cutoff separately for other formats)");

  // Read.
  o.read.unknown_zero = o.unknown == "zero";
  const auto t_read = clock_type::now();
  const io::Structure structure = io::read_structure(o.input, o.read);
  const double read_seconds = seconds_since(t_read);
  for (const auto& w : structure.warnings) spdlog::warn("{}", w);
  const double total_charge = structure.atoms.total_charge();
  spdlog::info("{}: {} atoms, total charge {:+.4f} e (charges from {})", o.input,
               structure.atoms.size(), total_charge, structure.charge_source);

  // Set up. With --method both the direct map is /potential and the cutoff map comes second.
  engine::PotentialRequest request;
  request.atoms = &structure.atoms;
  o.physics.unit = parse_unit(o.units);
  request.physics = o.physics;
  request.method = both ? engine::Method::direct : engine::parse_method(o.method.method);
  request.cutoff = o.method.parsed_cutoff();
  request.grid = o.grid.explicit_grid().value_or(
      grid_around(bounding_box(structure.atoms), o.grid.spacing, o.grid.padding));
  engine::validate(request);
  engine::PotentialRequest cutoff_request = request;
  cutoff_request.method = engine::Method::cutoff;
  if (both) engine::validate(cutoff_request);

  // HDF5 outputs are streamed slab by slab; the others (and both maps of --method both, for the
  // comparison) need the whole grid in memory.
  std::vector<std::string> whole_grid_outputs;
  for (const auto& out : o.outputs)
    if (io::map_format_from_path(out) != io::MapFormat::hdf5) whole_grid_outputs.push_back(out);
  const int whole_grids = both ? 3 : whole_grid_outputs.empty() ? 0 : 1;  // both: + distances
  if (whole_grids) require_host_memory(request.grid, whole_grids);

  auto backend = engine::make_backend(o.device, parse_gpu_list(o.gpus));
  for (const auto method : {request.method, both ? engine::Method::cutoff : request.method})
    if (!backend->supports(method))
      throw Error("the " + backend->name() + " backend does not support --method " +
                  engine::method_name(method));
  spdlog::info("grid {}", request.grid.describe());
  spdlog::info("{} summation on {}: {}", o.method.method, backend->name(),
               describe(request.physics));

  const std::string input_sha256 = input_hash.get();
  const io::MapMetadata meta = make_metadata(o, request, structure, input_sha256, command_line);
  io::WriteOptions write_options;
  write_options.compress = o.compress;
  std::vector<std::unique_ptr<io::Hdf5MapWriter>> streams;
  for (const auto& out : o.outputs)
    if (io::map_format_from_path(out) == io::MapFormat::hdf5)
      streams.push_back(std::make_unique<io::Hdf5MapWriter>(out, request.grid, meta, write_options));
  std::vector<float> whole;
  if (whole_grids) whole.resize(request.grid.point_count());

  // Compute, handing each slab to the writers.
  const PassTimes pass = compute_pass(*backend, request, streams, whole,
                                      both ? "direct" : "computing", !o.quiet);
  std::optional<PassTimes> cutoff_pass;
  std::optional<analysis::CompareReport> comparison;
  if (both) {
    std::vector<float> cutoff_map(request.grid.point_count());
    std::vector<std::unique_ptr<io::Hdf5MapWriter>> no_streams;
    cutoff_pass = compute_pass(*backend, cutoff_request, no_streams, cutoff_map, "cutoff", !o.quiet);
    comparison = analysis::compare_maps(request.grid, whole, cutoff_map, &structure.atoms);
    comparison->units = meta.units;
    io::MapMetadata cutoff_meta =
        make_metadata(o, cutoff_request, structure, input_sha256, command_line);
    const std::string report = comparison->to_json().dump();
    for (auto& s : streams) {
      s->add_map("potential_cutoff", cutoff_map.data(), cutoff_meta);
      s->add_root_attribute("comparison_cutoff_vs_direct", report);
    }
  }

  const auto t_write = clock_type::now();
  for (auto& s : streams) s->finish();
  for (const auto& out : whole_grid_outputs) io::write_map(out, request.grid, whole.data(), meta);
  const double write_seconds = seconds_since(t_write) + pass.stats.sink_seconds;
  const double total_seconds = seconds_since(t_start);

  const double pairs = double(structure.atoms.size()) * double(request.grid.point_count());
  const double compute_seconds = pass.compute_seconds();
  const std::string device = pass.stats.device.empty() ? backend->name() : pass.stats.device;
  nlohmann::json summary = {
      {"input", o.input},
      {"atoms", structure.atoms.size()},
      {"total_charge", total_charge},
      {"grid", {{"dims", request.grid.dims}, {"origin", request.grid.origin},
                {"spacing", request.grid.spacing}}},
      {"method", o.method.method},
      {"units", o.units},
      {"device", device},
      {"outputs", o.outputs},
      {"seconds", {{"read", read_seconds}, {"setup", pass.stats.setup_seconds},
                   {"compute", compute_seconds}, {"overflow_cpu", pass.stats.overflow_seconds},
                   {"write", write_seconds}, {"total", total_seconds}}},
  };
  if (request.method == engine::Method::direct)
    summary["evaluations_per_second"] = pairs / compute_seconds;
  if (cutoff_pass) {
    summary["seconds"]["cutoff_compute"] = cutoff_pass->compute_seconds();
    summary["seconds"]["cutoff_setup"] = cutoff_pass->stats.setup_seconds;
    summary["seconds"]["cutoff_overflow_cpu"] = cutoff_pass->stats.overflow_seconds;
    summary["comparison"] = comparison->to_json();
  }
  if (o.json) {
    std::printf("%s\n", summary.dump(2).c_str());
  } else if (!o.quiet) {
    std::fprintf(stderr,
                 "done: %zu atoms, total charge %+.4f e, %s\n"
                 "      %s on %s, %.3f s (read %.3f, setup %.3f, compute %.3f, write %.3f)%s\n",
                 structure.atoms.size(), total_charge, request.grid.describe().c_str(),
                 both ? "direct" : o.method.method.c_str(), device.c_str(), total_seconds, read_seconds,
                 pass.stats.setup_seconds, compute_seconds, write_seconds,
                 request.method == engine::Method::direct
                     ? fmt::format(", {:.3g} evaluations/s", pairs / compute_seconds).c_str()
                     : "");
    if (cutoff_pass) {
      std::fprintf(stderr, "      cutoff %g Å (%s), compute %.3f s: %.1fx faster than direct\n",
                   request.cutoff.radius, o.method.cutoff_form.c_str(), cutoff_pass->compute_seconds(),
                   compute_seconds / cutoff_pass->compute_seconds());
      std::fprintf(stderr, "\nCutoff against direct summation:\n%s\n", comparison->table().c_str());
    }
    for (const auto& out : o.outputs) std::fprintf(stderr, "      wrote %s\n", out.c_str());
  }
  return 0;
}

}  // namespace

int main_job(int argc, char** argv) {
  CLI::App app{"dcsgrid: electrostatic potential of a biomolecule on a 3D grid", "dcsgrid"};
  app.set_version_flag("--version", std::string("dcsgrid ") + DCSGRID_VERSION);
  app.footer(kExamples);
  app.get_formatter()->column_width(34);
  MainOptions options;
  add_options(app, options);
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  setup_logging(options.verbose, options.quiet);
  return run(options, joined_command_line(argc, argv));
}

}  // namespace dcsgrid::cli
