// dcsgrid compare REFERENCE TEST: how far one map is from another on the same grid
// (analysis::compare_maps), as a table or JSON, optionally with the difference map.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "shared_options.hpp"

namespace dcsgrid::cli {
namespace {

namespace fs = std::filesystem;

const char* kExamples = R"(Examples:
  dcsgrid compare direct.h5 cutoff.h5                      errors of cutoff.h5 against direct.h5
  dcsgrid compare direct.h5 cutoff.h5 --atoms 1abc.pqr     ... and by distance from the atoms
  dcsgrid compare ref.dx test.h5 --json                    as JSON, for scripts
  dcsgrid compare direct.h5 cutoff.h5 --difference d.h5    also write test − reference
  dcsgrid compare both.h5 both.h5:potential_cutoff         the two maps of --method both

Maps: any map format dcsgrid reads: .h5 written by dcsgrid (its /potential, FILE.h5:DATASET for
another dataset, FILE.h5#FRAME for a frame of a batch file), OpenDX (.dx, .dx.gz, APBS's
included), CCP4/MRC (.ccp4, .mrc, .map) and Gaussian cube (.cube). Both must lie on the same grid
(same point counts, and points within --grid-tolerance of the spacing of each other) and be in
the same units (CCP4/MRC maps from other programs record none and take the other map's). The
error is TEST minus REFERENCE; relative L2 is ‖TEST − REFERENCE‖ / ‖REFERENCE‖. Points where
either map is not finite are counted and left out. With --atoms (any structure file dcsgrid
reads) the errors are also broken down by distance from the nearest atom.)";

io::MapFile read_map(const std::string& arg) {
  const io::MapArgument argument = io::parse_map_argument(arg);
  if (!fs::is_regular_file(argument.path)) throw Error(arg + ": no such file");
  return io::read_map(argument);
}

// The command's arguments and options.
struct CompareArgs {
  std::string reference, test, atoms_file, difference;
  analysis::CompareOptions options;
  io::ReadOptions read;
  MessageOptions messages;
};

void add_compare_options(CLI::App& app, CompareArgs& a) {
  app.add_option("reference", a.reference,
                 "Reference map (any map format, FILE.h5:DATASET, FILE.h5#FRAME), e.g. direct "
                 "summation")
      ->required();
  app.add_option("test", a.test, "Map to judge, on the same grid")->required();
  app.add_option("--atoms", a.atoms_file,
                 "Structure whose atoms define the distance shells (PQR, PDB, mmCIF, PDBQT, XYZ)")
      ->check(CLI::ExistingFile);
  app.add_option("--shells", a.options.shell_edges,
                 "Shell edges by distance from the nearest atom, Å, ascending from 0")
      ->delimiter(',')
      ->check(finite_number())
      ->capture_default_str();
  app.add_option("--bins", a.options.histogram_bins, "Bins of the error histogram")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  app.add_option("--grid-tolerance", a.options.grid_tolerance,
                 "Grids whose points lie within this fraction of the spacing are the same")
      ->check(finite_number(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--difference", a.difference,
                 "Write TEST − REFERENCE as a map (by extension: " + io::map_format_list() + ")");
  app.add_option("--forcefield", a.read.forcefield,
                 "Charges for a PDB/mmCIF --atoms file (only positions matter here)")
      ->check(CLI::IsMember({"amber", "charmm", "parse"}))
      ->capture_default_str();
  add_message_options(app, a.messages, "Print the report as JSON on stdout");
}

// The two maps compared, with the atoms' distance shells when --atoms is given.
analysis::CompareReport compare(CompareArgs& a, const io::MapFile& ref_map, const io::MapFile& test_map) {
  AtomSet atoms;
  if (!a.atoms_file.empty()) {
    // Only positions matter for the shells: residues the force field lacks need not stop us.
    a.read.unknown_zero = true;
    atoms = io::read_structure(a.atoms_file, a.read).atoms;
  }
  a.options.keep_difference = !a.difference.empty();
  try {
    return analysis::compare_maps(ref_map, test_map, a.atoms_file.empty() ? nullptr : &atoms, a.options);
  } catch (const Error& e) {
    throw Error(a.reference + " against " + a.test + ": " + e.what());
  }
}

void write_difference(const CompareArgs& a, io::MapFormat format, const analysis::CompareReport& report,
                      const io::MapFile& test_map, const std::string& command_line) {
  io::MapMetadata meta = test_map.meta;
  meta.method = "difference";
  meta.parameters = {{"reference", a.reference}, {"test", a.test}};
  meta.command_line = command_line;
  const std::string warning = io::write_map(a.difference, format, report.grid, report.difference.data(), meta);
  if (!warning.empty()) std::fprintf(stderr, "warning: %s\n", warning.c_str());
}

void print_report(const CompareArgs& a, const analysis::CompareReport& report) {
  if (a.messages.json) {
    nlohmann::json out = report.to_json();
    out["reference"] = a.reference;
    out["test"] = a.test;
    if (!a.difference.empty()) out["difference_map"] = a.difference;
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("reference %s\ntest      %s\n%s", a.reference.c_str(), a.test.c_str(), report.table().c_str());
  if (!a.difference.empty() && !a.messages.quiet) std::printf("wrote %s\n", a.difference.c_str());
}

}  // namespace

int compare_command(int argc, char** argv) {
  CLI::App app{"dcsgrid compare: the error of one potential map against a reference map",
               "dcsgrid compare"};
  set_help_layout(app, kExamples);
  CompareArgs a;
  add_compare_options(app, a);
  if (const auto status = parse_and_set_up_logging(app, argc, argv, a.messages)) return *status;
  // The difference map's format, parsed once, before any work (a bad name is refused now).
  std::optional<io::MapFormat> difference_format;
  if (!a.difference.empty()) {
    difference_format = io::map_format_from_path(a.difference);
    io::require_not_an_input(a.difference, {io::parse_map_argument(a.reference).path,
                                            io::parse_map_argument(a.test).path, a.atoms_file});
  }
  const io::MapFile ref_map = read_map(a.reference);
  const io::MapFile test_map = read_map(a.test);
  const analysis::CompareReport report = compare(a, ref_map, test_map);
  if (difference_format) write_difference(a, *difference_format, report, test_map, joined_command_line(argc, argv));
  print_report(a, report);
  return 0;
}

}  // namespace dcsgrid::cli
