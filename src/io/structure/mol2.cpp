// Tripos MOL2 (the Tripos "Mol2 File Format" description): records introduced by
// "@<TRIPOS>NAME" lines. Of a molecule read here:
//   @<TRIPOS>MOLECULE  name / num_atoms [num_bonds ...] / molecule type / charge type / ...
//   @<TRIPOS>ATOM      atom_id name x y z type [subst_id [subst_name [charge [status]]]]
// Every MOLECULE record starts a model (multi-molecule files: docking poses, libraries); the
// other records (BOND, SUBSTRUCTURE, ...) carry no atoms and are skipped.
#include <charconv>
#include <string>

#include "io/structure/formats.hpp"

namespace dcsgrid::io::detail {
namespace {

constexpr const char* kAtomColumns = "atom_id name x y z type subst_id subst_name charge";
constexpr const char* kNumbers[4] = {"x coordinate", "y coordinate", "z coordinate",
                                     "partial charge"};
// An atom line holds at least six one-character fields, charge included: 18 bytes.
constexpr std::size_t kMinAtomLineBytes = 18;

bool is_record(std::string_view line, std::string_view name) {
  return line.starts_with("@<TRIPOS>") && trim(line.substr(9)) == name;
}

bool skippable(std::string_view line) {
  line = trim(line);
  return line.empty() || line.front() == '#';
}

struct Molecule {
  std::size_t header_line = 0;  // the @<TRIPOS>MOLECULE line
  std::size_t declared_atoms = 0;
  bool has_charges = true;
  std::size_t charge_type_line = 0;
};

class Mol2Reader {
 public:
  Mol2Reader(const TextFile& file, int model) : file_(file), model_(model), lines_(file.data) {}

  std::vector<Structure> read() {
    bool more = lines_.next();
    while (more) {
      const std::string_view line = lines_.line();
      if (is_record(line, "MOLECULE")) {
        read_molecule_header();
        more = lines_.next();
      } else if (is_record(line, "ATOM")) {
        more = read_atoms();  // stops on the next record's line
      } else {
        more = lines_.next();
      }
    }
    finish_models(file_, model_, count_, models_);
    return std::move(models_);
  }

 private:
  std::string where_molecule() const { return "molecule " + std::to_string(count_); }

  // The four header lines after @<TRIPOS>MOLECULE: name, counts, type, charge type.
  void read_molecule_header() {
    ++count_;
    molecule_ = Molecule{lines_.number()};
    if (model_ == 0 || count_ == model_) models_.emplace_back();  // empty until its ATOM record
    for (int i = 0; i < 4; ++i) {
      if (!lines_.next())
        throw InputError(file_.name, lines_.number(),
                         "file ends inside the header of " + where_molecule() +
                             " (name, counts, molecule type, charge type)");
      const std::string_view line = trim(lines_.line());
      if (i == 1) read_atom_count(line);
      if (i == 3) {
        molecule_.charge_type_line = lines_.number();
        molecule_.has_charges = line != "NO_CHARGES";
      }
    }
  }

  void read_atom_count(std::string_view line) {
    std::string_view field[1];
    split_fields(line, field, 1);
    const auto [end, ec] = std::from_chars(field[0].data(), field[0].data() + field[0].size(),
                                           molecule_.declared_atoms);
    if (field[0].empty() || ec != std::errc() || end != field[0].data() + field[0].size())
      throw InputError(
          file_.name, lines_.number(),
          "expected the atom count of " + where_molecule() + ", found '" + std::string(line) + "'");
  }

  // The lines of an ATOM record up to the next record; false at the end of the file.
  bool read_atoms() {
    if (count_ == 0)
      throw InputError(file_.name, lines_.number(), "@<TRIPOS>ATOM before any @<TRIPOS>MOLECULE");
    const bool keep = model_ == 0 || count_ == model_;
    if (keep && !molecule_.has_charges)
      throw InputError(file_.name, molecule_.charge_type_line,
                       where_molecule() + " has no partial charges (charge type NO_CHARGES)");
    Structure* kept = keep ? &models_.back() : nullptr;
    if (kept) {
      const std::size_t rest =
          file_.data.size() - std::size_t(lines_.line().data() - file_.data.data());
      kept->atoms.reserve(std::min(molecule_.declared_atoms, rest / kMinAtomLineBytes));
    }
    std::size_t found = 0;
    bool more;
    while ((more = lines_.next()) && !lines_.line().starts_with("@<TRIPOS>")) {
      if (skippable(lines_.line())) continue;
      ++found;
      if (kept) {
        parse_atom(lines_.line(), kept->atoms);
        kept->lines.push_back(lines_.number());
      }
    }
    if (keep && found != molecule_.declared_atoms)
      throw InputError(file_.name, molecule_.header_line,
                       where_molecule() + " declares " + std::to_string(molecule_.declared_atoms) +
                           " atoms but its ATOM record has " + std::to_string(found));
    return more;
  }

  void parse_atom(std::string_view line, AtomSet& atoms) {
    std::string_view fields[10];
    const std::size_t n = split_fields(line, fields, 10);
    if (n < 9)
      throw InputError(file_.name, lines_.number(),
                       "atom line has " + std::to_string(n) +
                           " fields; the partial charge is the 9th (" + kAtomColumns + ")");
    const std::string_view numbers[4] = {fields[2], fields[3], fields[4], fields[8]};
    double v[4];
    parse_fields(file_, lines_.number(), numbers, kNumbers, 4, v);
    atoms.push_back(v[0], v[1], v[2], v[3]);
  }

  const TextFile& file_;
  const int model_;
  Lines lines_;
  int count_ = 0;  // molecules so far
  Molecule molecule_;
  std::vector<Structure> models_;
};

}  // namespace

std::vector<Structure> read_mol2(const TextFile& file, int model) {
  return Mol2Reader(file, model).read();
}

}  // namespace dcsgrid::io::detail
