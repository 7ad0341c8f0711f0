// dcsgrid convert STRUCTURE -o atoms.pqr: the atoms as the main job reads them (io::read_structure
// with the same charge options), written as PQR (io::write_pqr).
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/text.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/structure/element_radii.hpp"
#include "dcsgrid/io/structure/write_pqr.hpp"
#include "shared_options.hpp"

namespace dcsgrid::cli {
namespace {

const char* kAbout = R"(Examples:
  dcsgrid convert 1hpv.pdb -o 1hpv.pqr        AMBER charges, absent hydrogens folded on their atoms
  dcsgrid convert 1hpv.cif.gz -o 1hpv.pqr --forcefield charmm
  dcsgrid convert in.pqr -o checked.pqr       the atoms dcsgrid read, renumbered

What it writes is what every other dcsgrid command computes from: the same positions, the charges
the force field gave (a hydrogen the file lacks has its charge on the heavy atom it bonds to, so
each residue keeps its net charge; pdb2pqr adds the hydrogen instead), and the radii below.
Residue and atom names and chains are the input's (PDB, PQR, PDBQT, mmCIF); XYZ and MOL2 atoms
are named X in residue UNK. Each number is the shortest text that reads back as the float32 dcsgrid
holds, so APBS, FreeSASA or PyMOL reading the file see exactly dcsgrid's atoms.
Radii: PQR's own; PDB/mmCIF: the force field's table (as pdb2pqr writes them), the element's van der
Waals radius (Bondi) where the table gives none or 0 (waters, ions, some hydrogens; a folded
hydrogen leaves its heavy atom's radius as it is); PDBQT, XYZ and MOL2: the element's radius. Atoms
that name no element (plain "x y z charge" XYZ) get radius 0, with a warning.)";

struct Options {
  std::string input, output, format;
  io::ReadOptions read;
  bool overwrite = false;
  MessageOptions messages;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("input", o.input, "Atoms: PQR, PDB, mmCIF, PDBQT, XYZ or MOL2 (.gz .bz2 .xz too)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", o.output, "The PQR file to write (.pqr)")->required();
  add_charge_options(app, o.read, "Residues/atoms missing from the force field: error (list them) or zero (warn, charge 0)");
  app.add_option("--model", o.read.model, "Model number of a multi-model file")
      ->check(kPositiveCount)
      ->capture_default_str()
      ->group("Input and charges");
  add_format_option(app, o.format);
  app.add_flag("--overwrite", o.overwrite, "Replace an existing output");
  add_message_options(app, o.messages, "Print the summary as JSON on stdout");
}

void check_output(const Options& o) {
  const std::filesystem::path out = o.output;
  if (ascii_lower(out.extension().string()) != ".pqr")
    throw Error(printable(o.output) + ": convert writes PQR; name the output .pqr");
  if (std::filesystem::exists(out) && !o.overwrite)
    throw Error(printable(o.output) + " exists; --overwrite replaces it");
  io::require_not_an_input(out, {o.input});
}

}  // namespace

int convert_command(int argc, char** argv) {
  CLI::App app{"dcsgrid convert: the atoms as dcsgrid uses them (positions, charges, radii), as PQR",
               "dcsgrid convert"};
  app.footer(kAbout);
  Options o;
  add_options(app, o);
  if (const auto status = parse_and_set_up_logging(app, argc, argv, o.messages)) return *status;
  if (!o.format.empty()) o.read.format = io::format_from_name(o.format);
  check_output(o);

  const io::Format format = o.read.format ? *o.read.format : io::format_from_path(o.input);
  io::Structure s = io::read_structure(o.input, o.read);
  for (const auto& w : s.warnings) spdlog::warn("{}", w);
  const io::TextBuffer text = io::read_text_input(o.input);
  try {
    io::fill_missing_radii(s, format, text);
    spdlog::info("{}: radii from {}", printable(o.input), s.radius_source);
  } catch (const InputError& e) {  // a PQR without radii is still a PQR of the charges
    spdlog::warn("{}; the radius column is 0", e.what());
  }
  io::write_pqr(o.output, s.atoms, io::atom_labels(s, format, text));

  if (o.messages.json)
    std::printf("%s\n", nlohmann::json{{"input", o.input},
                                       {"output", o.output},
                                       {"atoms", s.atoms.size()},
                                       {"total_charge", s.atoms.total_charge()},
                                       {"charges", s.charge_source},
                                       {"radii", s.atoms.has_radii()},
                                       {"model", s.model}}
                            .dump(2)
                            .c_str());
  else if (!o.messages.quiet)
    std::fprintf(stderr, "convert: %zu atoms, total charge %.4f e (%s charges), written to %s\n", s.atoms.size(),
                 s.atoms.total_charge(), s.charge_source.c_str(), printable(o.output).c_str());
  return 0;
}

}  // namespace dcsgrid::cli
