// dcsgrid INPUT -o OUT [options]: the main job. Parses the command line into an app::Job, runs it
// (app::run_job) and prints the summary.
#include <algorithm>
#include <cstdio>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "dcsgrid/app/job.hpp"
#include "dcsgrid/app/mpi_context.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/cli/progress.hpp"
#include "shared_options.hpp"

namespace dcsgrid::cli {
namespace {

struct MainOptions {
  std::string input;
  std::vector<std::string> outputs;
  io::ReadOptions read;
  GridOptions grid;
  ComputeOptions compute;
  std::uint64_t max_points = std::uint64_t(1) << 32;
  bool allow_far_atoms = false;
  std::string format;
  bool compress = false;
  MessageOptions messages;
};

const char* kExamples = R"(Examples:
  dcsgrid protein.pqr -o pot.h5                    potential in kT/e, 0.5 Å grid, 10 Å padding
  dcsgrid 1abc.pdb -o pot.dx -o pot.ccp4           charges from AMBER; maps for VMD/PyMOL/Chimera
  dcsgrid lig.pdbqt -o pot.h5 --center 10,2,-4 --size 24,24,24 --spacing 0.375   AutoGrid-style box
  dcsgrid big.pqr -o pot.h5 --method msm          multilevel summation: fast and accurate
  dcsgrid in.pqr -o cmp.h5 --method direct,msm,cutoff   every method, and each one's error
  dcsgrid in.pqr -o pot.h5 --dielectric 78.54 --ionic-strength 0.15   screened (Debye–Hückel)
  dcsgrid info pot.h5                              grid, units, provenance, min/max/mean
  dcsgrid in.pqr -o both.h5 --method direct,cutoff   direct and cutoff maps, and the cutoff's error
  dcsgrid compare direct.h5 cutoff.h5              accuracy of one map against another

Inputs: .pqr .pdb .ent .cif .mmcif .pdbqt .xyz, optionally .gz. PDB/mmCIF get charges from a
pdb2pqr force-field table (missing hydrogens folded onto their heavy atoms).
Outputs: .h5 (HDF5, /potential [nz][ny][nx] + pot.xmf for ParaView, netCDF-4 coordinates for
xarray), .dx/.dx.gz (OpenDX), .ccp4/.mrc/.map, .cube (Gaussian, with the atoms). An existing
pot.xmf is replaced only when it is pot.h5's own sidecar.
Potential: V(p) = k_C Σ q_i / (ε |p − r_i|), k_C = 332.0637 kcal·Å/(mol·e²); distances below
--min-distance count as --min-distance, and charges whose sum could overflow float32 are refused,
so every map written is finite (a value that is not is an error, unless --allow-non-finite).
Other commands: info, compare, batch, merge, sample, similarity, convert, surface (run `dcsgrid COMMAND --help`).)";

void add_options(CLI::App& app, MainOptions& o) {
  app.add_option("input", o.input,
                 "Atoms with charges: PQR, PDB, mmCIF, PDBQT, XYZ or MOL2 (.gz .bz2 .xz too); - "
                 "reads standard input (with --format)")
      ->required()
      ->check(CLI::ExistingFile | CLI::IsMember({"-"}));
  app.add_option("-o,--output", o.outputs,
                 "Output map; the extension picks the format: " + io::map_format_list() +
                     ". Repeat for several (PyMOL rescales .ccp4 values unless its normalize_ccp4_maps "
                     "is off: prefer .dx for PyMOL)")
      ->required();

  add_charge_options(app, o.read,
                     "Residues/atoms missing from the force field: error (list them) or zero "
                     "(warn, charge 0)");
  app.add_option("--model", o.read.model, "Model number of a multi-model PDB/mmCIF")
      ->check(kPositiveCount)
      ->capture_default_str()
      ->group("Input and charges");

  add_grid_options(app, o.grid, "Grid (default: the atoms' box plus --padding)",
                   "Margin around the atoms' bounding box, Å");
  app.add_option("--max-points", o.max_points, "Refuse grids of more points than this")
      ->check(CLI::Range(std::uint64_t(1), kMaxGridPoints, "POSITIVE"))
      ->capture_default_str()
      ->group("Grid (default: the atoms' box plus --padding)");
  app.add_flag("--allow-far-atoms", o.allow_far_atoms,
               "Lay the grid around atoms even when one lies far (>100 Å) from all the others")
      ->group("Grid (default: the atoms' box plus --padding)");
  add_format_option(app, o.format, " (needed for -, standard input)");
  add_compute_options(app, o.compute, method_help(true), true);

  app.add_flag("--compress", o.compress,
               "HDF5: shuffle + deflate (level 1) on every core: files 2/3 to 4/5 the size; "
               "it pays on disks slower than a few hundred MB/s (16 cores deflate ~420 MB/s; "
               "docs/performance.md)")
      ->group(kMessageGroup);
  add_message_options(app, o.messages, "Print the run summary as JSON on stdout");
}

app::Job make_job(const MainOptions& o, const std::string& command_line) {
  app::Job job;
  job.input = o.input;
  job.read = o.read;
  job.grid = o.grid.choice();
  job.compute = o.compute.settings();
  for (const auto& out : o.outputs) job.outputs.push_back(app::output_spec(out));
  job.write.compress = o.compress;
  job.command_line = command_line;
  job.max_points = o.max_points;
  job.allow_far_atoms = o.allow_far_atoms;
  if (!o.format.empty()) job.read.format = io::format_from_name(o.format);
  app::validate(job);
  return job;
}

// A progress bar per pass on the terminal.
class TerminalObserver : public app::Observer {
 public:
  explicit TerminalObserver(bool enabled) : enabled_(enabled) {}
  void pass_started(std::string_view label) override { bar_.emplace(std::string(label), enabled_); }
  void progress(double fraction) override {
    if (bar_) bar_->update(fraction);
  }
  void pass_finished() override {
    if (bar_) bar_->finish();
    bar_.reset();
  }

 private:
  bool enabled_;
  std::optional<ProgressBar> bar_;
};

// An iterative method's solve: its grids, iterations, residual and energies (APBS's kJ/mol and kT).
void print_solver(const engine::SolverReport& s) {
  const auto maps = std::ranges::count_if(s.levels, [](const engine::SolverLevel& l) { return !l.reference; });
  std::fprintf(stderr, "      %s: %s, %d iterations on the output grid to a relative residual of %.3g\n",
               s.method.c_str(), maps > 1 ? fmt::format("{} grids (focusing)", maps).c_str() : "one grid",
               s.iterations, s.residual_history.empty() ? 0.0 : s.residual_history.back());
  std::fprintf(stderr, "      total electrostatic energy %.6g kJ/mol (%.6g kT)\n", s.energy_kj_per_mol, s.energy_kt);
  if (s.solvation_kj_per_mol)
    std::fprintf(stderr, "      electrostatic solvation energy %.6g kJ/mol (%.6g kT)\n", *s.solvation_kj_per_mol,
                 *s.solvation_kt);
}

void print_summary(const app::JobReport& r) {
  const app::PassReport& first = r.passes.front();
  const double pairs = double(r.atoms) * double(r.grid.point_count());
  std::fprintf(stderr,
               "done: %zu atoms, total charge %+.4f e, %s\n"
               "      %s on %s, %.3f s (read %.3f, setup %.3f, compute %.3f, write %.3f; %.3f of "
               "setup, compute and write overlapped)%s\n",
               r.atoms, r.total_charge, r.grid.describe().c_str(),
               engine::method_name(first.method).c_str(), r.device.c_str(), r.total_seconds,
               r.read_seconds, first.stats.setup_seconds, first.compute_seconds(), r.write_seconds,
               first.overlapped_seconds(),
               engine::describe(first.method).all_pairs
                   ? fmt::format(", {:.3g} evaluations/s", pairs / first.compute_seconds()).c_str()
                   : "");
  std::string spans;
  for (const app::StageSpan& s : r.timeline)
    spans += fmt::format("{}{} {:.3f}–{:.3f}", spans.empty() ? "" : ", ", s.stage, s.begin, s.end);
  if (!spans.empty()) std::fprintf(stderr, "      timeline, s from the start: %s\n", spans.c_str());
  for (std::size_t p = 1; p < r.passes.size(); ++p) {
    const app::PassReport& pass = r.passes[p];
    const std::string name = engine::method_name(pass.method);
    const double pass_seconds = pass.stats.setup_seconds + pass.compute_seconds();
    const double first_seconds = first.stats.setup_seconds + first.compute_seconds();
    const std::string compared =
        pass.against_reference ? fmt::format("; compared in {:.3f} s", pass.compare_seconds) : "";
    std::fprintf(stderr, "      %s (/%s), setup %.3f + compute %.3f s: %.1fx faster than %s%s\n",
                 name.c_str(), pass.dataset.c_str(), pass.stats.setup_seconds, pass.compute_seconds(),
                 first_seconds / pass_seconds, engine::method_name(first.method).c_str(), compared.c_str());
    if (pass.against_reference)
      std::fprintf(stderr, "\n%s against %s:\n%s\n", name.c_str(), engine::method_name(first.method).c_str(),
                   pass.against_reference->table().c_str());
  }
  for (const app::PassReport& pass : r.passes)
    if (pass.stats.solver) print_solver(*pass.stats.solver);
  for (const app::PassReport& pass : r.passes)
    for (const engine::DeviceRunStats& d : pass.stats.devices) {
      std::string stages;
      for (const engine::StageTime& t : d.setup_stages)
        stages += fmt::format("{}{} {:.3f}", stages.empty() ? "" : ", ", t.stage, t.seconds);
      spdlog::debug("{} on {}: set-up {:.3f} s ({}), compute {:.3f} s, {} slabs", engine::method_name(pass.method),
                    d.device, d.setup_seconds, stages, d.compute_seconds, d.slabs);
    }
  for (const auto& out : r.outputs) std::fprintf(stderr, "      wrote %s\n", out.c_str());
}

}  // namespace

int main_job(int argc, char** argv) {
  CLI::App app{"dcsgrid: electrostatic potential of a biomolecule on a 3D grid", "dcsgrid"};
  app.set_version_flag("--version", std::string("dcsgrid ") + DCSGRID_VERSION);
  set_help_layout(app, kExamples);
  MainOptions options;
  add_options(app, options);
  if (const auto status = parse_and_set_up_logging(app, argc, argv, options.messages)) return *status;
  const app::Job job = make_job(options, joined_command_line(argc, argv));
  const bool root = app::mpi::rank() == 0;  // under mpirun, rank 0 reports for every rank
  TerminalObserver observer(!options.messages.quiet && root);
  const app::JobReport report = app::run_job(job, observer);
  if (!root) return 0;
  if (options.messages.json)
    std::printf("%s\n", report.to_json().dump(2).c_str());
  else if (!options.messages.quiet)
    print_summary(report);
  return 0;
}

}  // namespace dcsgrid::cli
