// dcsgrid sample MAP.h5 POINTS: the potential at points, interpolated from one map or from every
// complete frame of a batch file, and the interaction energy of charged points
// (analysis::sample).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/analysis/sample.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "shared_options.hpp"

namespace dcsgrid::cli {
namespace {

const char* kExamples = R"(Examples:
  dcsgrid sample pot.h5 sites.txt                   φ at each "x y z" line of sites.txt
  dcsgrid sample pot.h5 ligand.pqr                  φ at the ligand's atoms and its energy
  dcsgrid sample frames.h5 ligand.pqr -o phi.csv    every frame of a batch: one column each
  dcsgrid sample pot.h5 probes.csv --json           values and energies as JSON
  dcsgrid sample apbs.dx sites.txt                  any map format (.dx .dx.gz .ccp4 .mrc .cube)

Points: a list of "x y z" or "x y z q" lines (whitespace or commas; # comments) in any file whose
extension is not a structure format (.txt .dat .csv ...), or a structure file (PQR, PDB, mmCIF,
PDBQT, XYZ) whose atoms and charges are the points. Values are trilinear interpolations; a point
outside the grid gets no value (never extrapolated) and is reported. With charges q, the
interaction energy E = Σ q·φ(r) is given in kcal/mol over the points inside the grid.)";

// Outside points listed by number in the summary; the rest are counted.
constexpr std::size_t kOutsideListed = 20;

// One row per point, one column per map (headed by its frame number in a batch file, else by
// the unit), on stdout.
void print_values(const analysis::SampleResult& r, bool batch) {
  const std::size_t maps = r.labels.size();
  std::printf("%8s", "point");
  for (std::size_t i = 0; i < maps; ++i) {
    const std::string heading = batch ? fmt::format("frame {}", r.frames[i]) : r.units;
    std::printf(" %14s", heading.c_str());
  }
  std::printf("\n");
  for (std::size_t p = 0; p < r.points; ++p) {
    std::printf("%8zu", p);
    for (std::size_t i = 0; i < maps; ++i) {
      const float v = r.values[i * r.points + p];
      std::printf(" %14s", std::isfinite(v) ? fmt::format("{:.7g}", v).c_str() : "outside");
    }
    std::printf("\n");
  }
}

void print_summary(const analysis::SampleResult& r) {
  std::printf("%zu points of %s on %zu map(s) of %s (%s)\n", r.points, r.points_file.c_str(),
              r.labels.size(), r.map_file.c_str(), r.units.c_str());
  if (!r.outside.empty()) {
    std::string list;
    for (std::size_t k = 0; k < std::min(r.outside.size(), kOutsideListed); ++k)
      list += fmt::format(" {}", r.outside[k]);
    if (r.outside.size() > kOutsideListed)
      list += fmt::format(" and {} more", r.outside.size() - kOutsideListed);
    std::printf("%zu of %zu points lie outside the grid (no value, not in the energy):%s\n",
                r.outside.size(), r.points, list.c_str());
  }
  for (std::size_t i = 0; i < r.energy_kcal_mol.size(); ++i)
    std::printf("interaction energy %s: %.6g kcal/mol\n", r.labels[i].c_str(),
                r.energy_kcal_mol[i]);
}

}  // namespace

int sample_command(int argc, char** argv) {
  CLI::App app{"dcsgrid sample: the potential at points, from a map or every frame of a batch "
               "file, and the interaction energy of charged points",
               "dcsgrid sample"};
  set_help_layout(app, kExamples);
  analysis::SampleOptions options;
  std::string unknown = "error";
  MessageOptions messages;
  app.add_option("map", options.map,
                 "Map (" + io::map_format_list() + "), or a batch file (every complete frame)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("points", options.points, "Points: x y z [q] lines, or a structure file")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", options.output_csv,
                 "Write the values as CSV (x,y,z[,q], then a column per map) instead of printing "
                 "them");

  const std::string pts = "Points from structure files";
  app.add_option("--model", options.read.model, "Model number of a multi-model file")
      ->check(kPositiveCount)
      ->capture_default_str()
      ->group(pts);
  app.add_option("--forcefield", options.read.forcefield,
                 "Charges for PDB/mmCIF: amber, charmm, parse")
      ->check(CLI::IsMember({"amber", "charmm", "parse"}))
      ->capture_default_str()
      ->group(pts);
  app.add_option("--forcefield-dir", options.read.forcefield_dir,
                 "Folder with pdb2pqr's <FF>.DAT and .names (default: $DCSGRID_FORCEFIELD_DIR, "
                 "then " DCSGRID_DEFAULT_FORCEFIELD_DIR ")")
      ->group(pts);
  app.add_option("--unknown", unknown,
                 "Residues/atoms missing from the force field: error or zero (warn, charge 0)")
      ->check(CLI::IsMember({"error", "zero"}))
      ->capture_default_str()
      ->group(pts);

  const std::string dev = kHardwareGroup;
  add_device_option(app, options.device, dev);
  app.add_option("--maps-per-pass", options.maps_per_pass,
                 "Maps interpolated together (memory: this many maps at once)")
      ->check(kPositiveCount)
      ->capture_default_str()
      ->group(dev);

  add_message_options(app, messages,
                      "Print the result as JSON on stdout (with the values unless -o writes them)");
  if (const auto status = parse_and_set_up_logging(app, argc, argv, messages)) return *status;
  options.read.unknown_zero = unknown == "zero";
  if (!options.output_csv.empty())
    io::require_not_an_input(options.output_csv, {options.map, options.points});

  const analysis::SampleResult result = analysis::sample(options);
  if (messages.json) {
    std::printf("%s\n", result.to_json(options.output_csv.empty()).dump(2).c_str());
    return 0;
  }
  if (options.output_csv.empty())
    print_values(result, analysis::is_batch_file(options.map));
  else if (!messages.quiet)
    std::fprintf(stderr, "wrote %s\n", options.output_csv.c_str());
  print_summary(result);
  return 0;
}

}  // namespace dcsgrid::cli
