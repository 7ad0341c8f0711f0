// dcsgrid compare REFERENCE TEST: how far one map is from another on the same grid
// (analysis::compare_maps), as a table or JSON, optionally with the difference map.
#include <cstdio>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/map_io.hpp"
#include "dcsgrid/io/read.hpp"

namespace dcsgrid::cli {
namespace {

namespace fs = std::filesystem;

const char* kExamples = R"(Examples:
  dcsgrid compare direct.h5 cutoff.h5                      errors of cutoff.h5 against direct.h5
  dcsgrid compare direct.h5 cutoff.h5 --atoms 1abc.pqr     ... and by distance from the atoms
  dcsgrid compare ref.dx test.h5 --json                    as JSON, for scripts
  dcsgrid compare direct.h5 cutoff.h5 --difference d.h5    also write test − reference
  dcsgrid compare both.h5 both.h5:potential_cutoff         the two maps of --method both

Maps: .h5 written by dcsgrid (its /potential, or FILE.h5:DATASET for another dataset), or OpenDX
(.dx). Both must lie on the same grid (same point counts,
origin and spacing within --grid-tolerance) and be in the same units. The error is TEST minus
REFERENCE; relative L2 is ‖TEST − REFERENCE‖ / ‖REFERENCE‖. Points where either map is not finite
are counted and left out. With --atoms (any structure file dcsgrid reads) the errors are also
broken down by distance from the nearest atom.)";

// A map argument: a .h5 or .dx file, or FILE.h5:DATASET for another dataset of an HDF5 map file
// (potential_cutoff of --method both).
io::MapFile read_map(const std::string& arg) {
  std::string path = arg, dataset = "potential";
  const std::size_t colon = arg.rfind(':');
  if (!fs::exists(arg) && colon != std::string::npos && fs::exists(arg.substr(0, colon))) {
    path = arg.substr(0, colon);
    dataset = arg.substr(colon + 1);
  }
  if (!fs::is_regular_file(path)) throw Error(arg + ": no such file");
  const io::MapFormat format = io::map_format_from_path(path);
  if (format == io::MapFormat::hdf5) return io::read_hdf5(path, dataset);
  if (dataset != "potential") throw Error(arg + ": only HDF5 maps hold named datasets");
  if (format == io::MapFormat::dx) return io::read_dx(path);
  throw Error(path + ": compare reads .h5 and .dx maps (CCP4/MRC maps carry no units)");
}

}  // namespace

int compare_command(int argc, char** argv) {
  CLI::App app{"dcsgrid compare: the error of one potential map against a reference map",
               "dcsgrid compare"};
  app.footer(kExamples);
  app.get_formatter()->column_width(34);
  std::string reference, test, atoms_file, difference;
  analysis::CompareOptions options;
  io::ReadOptions read;
  bool json = false;
  app.add_option("reference", reference,
                 "Reference map (.h5, FILE.h5:DATASET or .dx), e.g. direct summation")
      ->required();
  app.add_option("test", test, "Map to judge (.h5, FILE.h5:DATASET or .dx) on the same grid")
      ->required();
  app.add_option("--atoms", atoms_file,
                 "Structure whose atoms define the distance shells (PQR, PDB, mmCIF, PDBQT, XYZ)")
      ->check(CLI::ExistingFile);
  app.add_option("--shells", options.shell_edges,
                 "Shell edges by distance from the nearest atom, Å, ascending from 0")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--bins", options.histogram_bins, "Bins of the error histogram")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  app.add_option("--grid-tolerance", options.grid_tolerance,
                 "Origins and spacings closer than this are the same grid, Å")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--difference", difference,
                 "Write TEST − REFERENCE as a map (.h5, .dx or .ccp4, by extension)");
  app.add_option("--forcefield", read.forcefield,
                 "Charges for a PDB/mmCIF --atoms file (only positions matter here)")
      ->check(CLI::IsMember({"amber", "charmm", "parse"}))
      ->capture_default_str();
  app.add_flag("--json", json, "Print the report as JSON on stdout");
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  if (!difference.empty()) io::map_format_from_path(difference);  // refuse a bad name before work

  const io::MapFile ref_map = read_map(reference);
  const io::MapFile test_map = read_map(test);
  AtomSet atoms;
  if (!atoms_file.empty()) {
    // Only positions matter for the shells: residues the force field lacks need not stop us.
    read.unknown_zero = true;
    atoms = io::read_structure(atoms_file, read).atoms;
  }
  options.keep_difference = !difference.empty();
  const analysis::CompareReport report = [&] {
    try {
      return analysis::compare_maps(ref_map, test_map, atoms_file.empty() ? nullptr : &atoms,
                                    options);
    } catch (const Error& e) {
      throw Error(reference + " against " + test + ": " + e.what());
    }
  }();

  if (!difference.empty()) {
    io::MapMetadata meta = test_map.meta;
    meta.method = "difference";
    meta.parameters = {{"reference", reference}, {"test", test}};
    meta.command_line = joined_command_line(argc, argv);
    io::write_map(difference, report.grid, report.difference.data(), meta);
  }
  if (json) {
    nlohmann::json out = report.to_json();
    out["reference"] = reference;
    out["test"] = test;
    if (!difference.empty()) out["difference_map"] = difference;
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("reference %s\ntest      %s\n%s", reference.c_str(), test.c_str(),
                report.table().c_str());
    if (!difference.empty()) std::printf("wrote %s\n", difference.c_str());
  }
  return 0;
}

}  // namespace dcsgrid::cli
