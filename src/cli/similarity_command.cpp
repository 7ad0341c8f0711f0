// dcsgrid similarity MAPS...: Hodgkin and Carbó similarity of every pair of maps (single maps on
// one grid, or the frames of a batch file), optionally outside the molecules only, and the maps'
// clustered order (analysis::compute_similarity).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/analysis/similarity.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "shared_options.hpp"

namespace dcsgrid::cli {
namespace {

namespace fs = std::filesystem;

// Wider matrices are left to the output files and --json, where they stay readable.
constexpr std::size_t kWidestPrintedMatrix = 32;

// Å; CLI11's NonNegativeNumber would name DBL_MAX in full in its message, and a mask beyond
// a few tens of Å leaves no grid point anyway.
const char* kExamples = R"(Examples:
  dcsgrid similarity wt.h5 mut1.h5 mut2.h5            every pair of maps on one grid
  dcsgrid similarity frames.h5 -o sim.h5 -o sim.csv   the frames of a batch file
  dcsgrid similarity frames.h5 --mask-distance 3 --mask-batch-inputs   outside the proteins only
  dcsgrid similarity a.h5 b.h5 --mask-distance 3 --mask-structure a.pqr --mask-structure b.pqr
  python3 tools/plot_map.py similarity sim.h5 -o sim.png               picture, clustered order

Hodgkin SI = 2<a,b>/(<a,a>+<b,b>): 1 for equal maps, −1 for opposite ones, and it sees
magnitudes; Carbó <a,b>/√(<a,a><b,b>) sees shapes only (both in -o .h5 and --json). With
--mask-distance D only grid points farther than D Å from every atom of the mask structures count,
as PIPSA compares potentials outside the proteins. The order is the leaf order of average-linkage
clustering on 1 − SI, so similar maps sit together.)";

// -o FILE: an HDF5 file for .h5/.hdf5, a CSV file of the Hodgkin matrix for .csv.
bool is_csv(const std::string& path) { return fs::path(path).extension() == ".csv"; }

const CLI::Validator kOutputFormat(
    [](std::string& path) {
      const std::string ext = fs::path(path).extension().string();
      return ext == ".h5" || ext == ".hdf5" || ext == ".csv"
                 ? std::string()
                 : "'" + path + "': the extension must be .h5, .hdf5 or .csv";
    },
    "FILE.h5|FILE.csv");

// Sorts the -o files into the two outputs; a second file of one kind is a usage error.
void assign_outputs(const std::vector<std::string>& outputs, analysis::SimilarityOptions& o) {
  for (const auto& path : outputs) {
    fs::path& target = is_csv(path) ? o.output_csv : o.output_h5;
    if (!target.empty())
      throw CLI::ValidationError("--output", "give at most one .h5 and one .csv file, not both " +
                                                 target.string() + " and " + path);
    target = path;
  }
}

std::string format_index(double value) {
  return std::isfinite(value) ? fmt::format("{:.4f}", value) : std::string("nan");
}

// The Hodgkin matrix in clustered order, maps numbered by their place in the input order.
void print_result(const analysis::SimilarityResult& r, const analysis::SimilarityOptions& o) {
  std::printf("Hodgkin similarity of %zu maps over %zu grid points", r.n, r.points_used);
  if (o.mask_distance > 0) std::printf(" (farther than %g Å from every atom)", o.mask_distance);
  std::printf("\nclustered order (average linkage on 1 − SI):\n");
  for (std::size_t a : r.order) std::printf("  %4zu  %s\n", a, r.labels[a].c_str());
  if (r.n > kWidestPrintedMatrix) {
    std::printf("the %zu × %zu matrix is in the -o files and --json\n", r.n, r.n);
    if (o.output_h5.empty() && o.output_csv.empty())
      spdlog::warn("{} maps: the matrix is not printed; use -o sim.h5 or -o sim.csv to keep it",
                   r.n);
    return;
  }
  std::printf("\n%6s", "");
  for (std::size_t b : r.order) std::printf(" %7zu", b);
  std::printf("\n");
  for (std::size_t a : r.order) {
    std::printf("%6zu", a);
    for (std::size_t b : r.order) std::printf(" %7s", format_index(r.hodgkin[a * r.n + b]).c_str());
    std::printf("\n");
  }
}

}  // namespace

int similarity_command(int argc, char** argv) {
  CLI::App app{"dcsgrid similarity: Hodgkin/Carbó similarity of potential maps (PIPSA-style) and "
               "their clustered order",
               "dcsgrid similarity"};
  set_help_layout(app, kExamples);
  analysis::SimilarityOptions options;
  std::vector<std::string> outputs;
  MessageOptions messages;
  app.add_option("maps", options.maps,
                 "Maps on one grid (" + io::map_format_list() +
                     "), or batch files (their complete frames)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", outputs,
                 "Write the result: .h5 (gram, hodgkin, carbo, order, labels) and/or .csv (the "
                 "Hodgkin matrix)")
      ->check(kOutputFormat);

  const std::string mask = "Mask: compare the potential outside the molecules only";
  app.add_option("--mask-distance", options.mask_distance,
                 "Keep grid points farther than this from every atom, Å (0: every point)")
      ->check(finite_number(0.0, 1000.0))
      ->capture_default_str()
      ->group(mask);
  app.add_option("--mask-structure", options.mask_structures,
                 "Structure whose atoms the mask avoids (repeat for several)")
      ->check(CLI::ExistingFile)
      ->group(mask);
  app.add_flag("--mask-batch-inputs", options.mask_batch_inputs,
               "Also avoid the atoms of every complete frame's input (batch files)")
      ->group(mask);
  app.add_option("--forcefield-dir", options.read_options.forcefield_dir,
                 "Folder with pdb2pqr's tables, for PDB/mmCIF mask structures")
      ->group(mask);

  const std::string dev = kHardwareGroup;
  add_device_option(app, options.device, dev);

  add_message_options(app, messages, "Print labels, Hodgkin and Carbó matrices and order as JSON");
  if (const auto status =
          parse_and_set_up_logging(app, argc, argv, messages, [&] { assign_outputs(outputs, options); }))
    return *status;

  // compute_similarity writes the -o files itself, each under a temporary name renamed when done.
  for (const auto& out : {options.output_h5, options.output_csv})
    if (!out.empty()) io::require_not_an_input(out, options.maps);
  const analysis::SimilarityResult result = analysis::compute_similarity(options);
  if (messages.json) {
    std::printf("%s\n", result.to_json().dump(2).c_str());
    return 0;
  }
  print_result(result, options);
  if (!messages.quiet)
    for (const auto& path : outputs) std::fprintf(stderr, "wrote %s\n", path.c_str());
  return 0;
}

}  // namespace dcsgrid::cli
