// dcsgrid batch INPUTS... -o FRAMES.h5: the potential of many structures on one shared grid, one
// frame each, in one resumable batch file (app::run_batch).
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "dcsgrid/app/batch.hpp"
#include "dcsgrid/app/mpi_context.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/cli/progress.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "shared_options.hpp"

namespace dcsgrid::cli {
namespace {

// Exit status when the batch file is written but some frames failed: they are recorded in it
// with their messages, and --resume retries them.
constexpr int kSomeFramesFailed = 3;

// What the command line sets: BatchOptions itself, plus the text forms and explicit-grid values
// that become BatchOptions fields once parsed.
struct BatchCommandOptions {
  app::BatchOptions batch;
  std::string models = "one";
  std::string frames;  // --frames, parsed into batch.frames
  std::string shard;   // --shard I/N, parsed into batch.shard
  GridOptions grid;
  ComputeOptions compute;
  std::vector<double> histogram_range;
  bool no_stats = false;
  MessageOptions messages;
};

const char* kExamples = R"(Examples:
  dcsgrid batch md/frame_*.pqr -o frames.h5              every snapshot on one shared grid
  dcsgrid batch top.psf traj.dcd -o frames.h5 --spacing 1   an MD trajectory, charges from the PSF
  dcsgrid batch sys.prmtop md1.nc md2.nc -o f.h5 --frames ::10   every 10th frame of two NetCDF files
  dcsgrid batch conf.pqr run.xtc -o f.h5 --frames 100:   GROMACS XTC from frame 100, charges from PQR
  dcsgrid batch @frames.txt -o frames.h5 --spacing 1     inputs listed in a file, one a line
  dcsgrid batch traj.pdb --models all -o frames.h5       every MODEL of a multi-model file
  dcsgrid batch @frames.txt -o frames.h5 --resume        continue after a crash or a kill
  dcsgrid batch @frames.txt -o part_3.h5 --shard 3/8     one task of a job array (8 parts)
  dcsgrid merge part_*.h5 -o frames.h5                   then: the parts as one batch file
  dcsgrid batch a.pqr b.pqr -o ab.h5 --center 0,0,0 --size 40,40,40 --ensemble   + mean/std maps
  dcsgrid batch box.psf md.dcd -o mean.dx --method pme --smooth 0.25 --average   PMEpot's map
  dcsgrid sample frames.h5 ligand.pqr                    then: potential and energy per frame
  dcsgrid similarity frames.h5 -o sim.h5                 then: Hodgkin similarity of the frames

Every frame shares one grid: --center/--size or --origin/--dims, else the union of all the inputs'
boxes grown by --padding. A frame whose input cannot be read or computed is recorded as failed,
with its message, and the batch goes on (--fail-fast stops at the first). --resume computes only
the frames not complete, after checking that the options and the inputs are unchanged.
Exit status: 0 every frame complete; 1 error (the message says what, and how many frames are
complete); 2 usage error; 3 the file is written but some frames failed (listed; --resume
retries them).)";

// The inputs, which models and frames of them make the frames, and their charges.
void add_input_options(CLI::App& app, BatchCommandOptions& o) {
  app::BatchOptions& b = o.batch;
  app.add_option("inputs", b.inputs,
                 "Structures (PQR, PDB, mmCIF, PDBQT, XYZ, .gz too), or @LIST: a file naming one "
                 "input a line; or a topology (PSF, PRMTOP, PQR, PDB, ...) followed by trajectories "
                 "(.dcd .xtc .trr .nc .ncdf, read in order as one stream)")
      ->required();
  app.add_option("-o,--output", b.output, "Batch file to write (.h5); with --average the mean map, any map format")->required();

  const std::string in = "Inputs and charges";
  auto* models = app.add_option("--models", o.models,
                                "one: model --model of each input; all: every model, a frame each")
                     ->check(CLI::IsMember({"one", "all"}))
                     ->capture_default_str()
                     ->group(in);
  app.add_option("--model", b.read.model, "Model number read from multi-model inputs")
      ->check(kPositiveCount)
      ->capture_default_str()
      ->excludes(models)
      ->group(in);
  app.add_option("--frames", o.frames,
                 "Trajectory frames START:STOP:STEP of the stream (from 0, STOP excluded): 100:, "
                 ":500, ::10, 3:90:2")
      ->check(parses_with([](const std::string& v) { io::parse_frame_selection(v); }, "START:STOP:STEP"))
      ->group(in);
  app.add_flag("--grid-from-first", b.grid_from_first,
               "Trajectories: the grid around the first selected frame (plus --padding) instead of "
               "the union of every frame's box; atoms outside it still count")
      ->group(in);
  app.add_flag("--allow-truncated", b.allow_truncated,
               "Trajectories: use the frames before the cut in a file that ends mid-frame (with a "
               "warning) instead of refusing the batch")
      ->group(in);
  app.add_flag("--allow-far-atoms", b.allow_far_atoms,
               "Keep frames with an atom far from all the others (by default such a frame fails: a "
               "mistyped coordinate would stretch the grid)")
      ->group(in);
  add_charge_options(app, b.read,
                     "Residues/atoms missing from the force field: error (the frame fails) or "
                     "zero (warn, charge 0)");
}

// What the batch file holds and how a run treats an existing one.
void add_file_options(CLI::App& app, BatchCommandOptions& o) {
  app::BatchOptions& b = o.batch;
  const std::string file = "Batch file";
  auto* resume = app.add_flag("--resume", b.resume,
                              "Continue an existing file: compute the frames not complete "
                              "(failed ones are retried); with --average, continue from the sums a "
                              "stopped run kept in OUTPUT.sums.h5")
                     ->group(file);
  app.add_flag("--overwrite", b.overwrite, "Replace an existing file")
      ->excludes(resume)
      ->group(file);
  app.add_option("--shard", o.shard,
                 "Compute only part I of N (from 0) of the frames, a contiguous block, into a file "
                 "of its own (job arrays); 'dcsgrid merge' joins the parts")
      ->check(parses_with([](const std::string& v) { app::parse_shard(v); }, "I/N"))
      ->group(file);
  app.add_flag("--fail-fast", b.fail_fast, "Stop at the first frame that fails (exit status 1)")
      ->group(file);
  app.add_flag("--ensemble", b.ensemble,
               "Also the mean and standard deviation maps over the complete frames "
               "(/analysis/mean, /analysis/std)")
      ->group(file);
  auto* average = app.add_flag("--average", b.average,
                               "No batch file: write the mean map over the frames (float64 sums) to -o, in "
                               "any map format (PMEpot's averaged potential with --method pme --smooth). On "
                               "GPUs the frames stay on the device and are summed there. "
                               "Periodic frames whose boxes change (NPT) are each taken at the grid's "
                               "fractional coordinates in their own cell, and the mean is placed in the "
                               "mean cell; cells must differ only by a scaling along x, y and z. The "
                               "running sums are saved to OUTPUT.sums.h5 every minute (less often where a "
                               "save takes over 6 s) and when the run "
                               "stops on an error or the mean cannot be written (--resume continues; an "
                               "interrupt, Ctrl-C, keeps only the last save), and removed once "
                               "the mean of every frame is written (kept while frames failed: --resume "
                               "retries them)")
                      ->group(file);
  app.add_flag("--std", b.average_std,
               "With --average: the standard deviation too, as /potential_std (HDF5 output)")
      ->needs(average)
      ->group(file);
  auto* no_stats = app.add_flag("--no-stats", o.no_stats,
                                "Skip the per-frame min/max/mean/std and histogram (/analysis)")
                       ->group(file);
  app.add_option("--histogram-bins", b.histogram.bins, "Bins of each frame's histogram")
      ->check(kPositiveCount)
      ->capture_default_str()
      ->excludes(no_stats)
      ->group(file);
  app.add_option("--histogram-range", o.histogram_range,
                 "Histogram range LO,HI in the output unit (default: each frame's min to max)")
      ->delimiter(',')
      ->expected(2)
      ->check(finite_number())
      ->excludes(no_stats)
      ->group(file);
}

void add_options(CLI::App& app, BatchCommandOptions& o) {
  add_input_options(app, o);
  add_grid_options(app, o.grid, "Grid, shared by every frame (default: all inputs' box plus --padding)",
                   "Margin around the union of the inputs' boxes, Å");
  add_compute_options(app, o.compute, method_help(false), false);
  app.add_option("--frame-workers", o.batch.frame_workers,
                 "Frames computed at once, a backend each (0: on each GPU of --gpus 4 for grids of "
                 "up to 64 MiB, whose frames are short, else 1, and 1 for pb; one on the CPU). Several per GPU "
                 "overlap one frame's copies and host work with another's kernels. The file is the "
                 "same whatever the count, and so is the --average mean (frames are summed in frame "
                 "order, on one GPU whatever the number of GPUs)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str()
      ->group(kHardwareGroup);
  add_file_options(app, o);
  add_message_options(app, o.messages, "Print the run summary as JSON on stdout");
}

// Turns the parsed text options into BatchOptions fields (bad physics or cutoff settings fail here,
// once, before any frame).
void complete_batch_options(BatchCommandOptions& o, const std::string& command_line) {
  app::BatchOptions& b = o.batch;
  b.models_all = o.models == "all";
  if (!o.frames.empty()) b.frames = io::parse_frame_selection(o.frames);
  if (!o.shard.empty()) b.shard = app::parse_shard(o.shard);
  b.grid = o.grid.choice();
  b.compute = o.compute.settings();
  b.stats = !o.no_stats;
  if (!o.histogram_range.empty()) {
    b.histogram.lo = o.histogram_range[0];
    b.histogram.hi = o.histogram_range[1];
  }
  b.command_line = command_line;
}

void print_summary(const app::BatchResult& r, bool models_all) {
  std::fprintf(stderr, "batch: %zu frames in %s\n       grid %s\n", r.frames, r.output.c_str(),
               r.grid.describe().c_str());
  std::fprintf(stderr, "       computed %zu, failed %zu, already complete %zu, pending %zu\n",
               r.computed, r.failed, r.skipped, r.pending);
  if (r.missing > 0)
    std::fprintf(stderr, "       missing %zu (frames cut off in truncated trajectories: rows of status "
                 "\"missing\" in the table)\n", r.missing);
  if (r.pipeline_seconds > 0) {
    // Busy shares of the four concurrent stages; their sum above 100% is the overlap.
    auto percent = [&](double busy) { return 100 * busy / r.pipeline_seconds; };
    std::fprintf(stderr,
                 "       %.3g frames/s on %s (pipeline %.3f s, after a %.3f s scan of the inputs)\n"
                 "       stages busy: read %.0f%%, compute %.0f%%, stats %.0f%%, write %.0f%%; "
                 "engine set-up %.3f s, kernels %.3f s\n",
                 r.frames_per_second, r.device.c_str(), r.pipeline_seconds, r.scan_seconds,
                 percent(r.read_busy), percent(r.compute_busy), percent(r.stats_busy),
                 percent(r.write_busy),
                 r.engine_setup, r.engine_kernels);
  }
  if (r.ensemble_seconds > 0)
    std::fprintf(stderr, "       ensemble mean and std maps: %.3f s\n", r.ensemble_seconds);
  if (!r.failures.empty()) {
    std::fprintf(stderr, "failed frames (--resume retries them):\n");
    for (const auto& f : r.failures) {
      const std::string model = f.frame_index >= 0 ? fmt::format(" frame {}", f.frame_index)
                                : models_all       ? fmt::format(" model {}", f.model)
                                                   : "";
      std::fprintf(stderr, "  %s%s: %s\n", f.source.c_str(), model.c_str(), f.message.c_str());
    }
    if (r.failed > r.failures.size())
      std::fprintf(stderr, "  ... %zu more (dcsgrid info --json lists every frame)\n",
                   r.failed - r.failures.size());
  }
}

}  // namespace

int batch_command(int argc, char** argv) {
  CLI::App app{"dcsgrid batch: the potential of many structures on one shared grid, one frame "
               "each, in one resumable batch file",
               "dcsgrid batch"};
  set_help_layout(app, kExamples);
  BatchCommandOptions options;
  add_options(app, options);
  if (const auto status = parse_and_set_up_logging(app, argc, argv, options.messages)) return *status;
  complete_batch_options(options, "dcsgrid " + joined_command_line(argc, argv));

  const bool root = app::mpi::rank() == 0;  // under mpirun, rank 0 reports for every rank
  ProgressBar bar("batch", !options.messages.quiet && root);
  options.batch.progress = [&](std::size_t done, std::size_t total) {
    bar.update(double(done) / double(total));
  };
  const app::BatchResult result = app::run_batch(options.batch);
  bar.finish();
  if (!root) return 0;

  if (options.messages.json)
    std::printf("%s\n", result.to_json().dump(2).c_str());
  else if (!options.messages.quiet)
    print_summary(result, options.batch.models_all);
  return result.failed > 0 ? kSomeFramesFailed : 0;
}

}  // namespace dcsgrid::cli
