// PDBQT (AutoDock): PDB fixed columns, x y z in columns 31-54 and the partial charge in 71-76.
// ROOT/ENDROOT, BRANCH/ENDBRANCH, TORSDOF, REMARK and the like describe the torsion tree and
// carry no atoms; MODEL records separate docked poses.
#include <string>

#include "read_formats.hpp"

namespace dcsgrid::io::detail {
namespace {

struct Column {
  const char* what;
  std::size_t begin, end;  // 0-based, end exclusive
};
constexpr Column kColumns[4] = {{"x coordinate (columns 31-38)", 30, 38},
                                {"y coordinate (columns 39-46)", 38, 46},
                                {"z coordinate (columns 47-54)", 46, 54},
                                {"partial charge (columns 71-76)", 70, 76}};

void parse_pdbqt_atom(const TextFile& file, std::string_view line, std::size_t line_number,
                      AtomSet& atoms) {
  if (line.size() < kColumns[3].end)
    throw InputError(file.name, line_number,
                     "truncated PDBQT atom record: " + std::to_string(line.size()) +
                         " characters, the partial charge needs columns 71-76");
  double v[4];
  for (int c = 0; c < 4; ++c) {
    const std::string_view field =
        line.substr(kColumns[c].begin, kColumns[c].end - kColumns[c].begin);
    const NumberStatus status = parse_number(field, v[c]);
    if (status != NumberStatus::ok)
      throw InputError(file.name, line_number,
                       describe_bad_number(kColumns[c].what, field, status));
  }
  atoms.push_back(v[0], v[1], v[2], v[3]);
}

}  // namespace

std::vector<Structure> read_pdbqt(const TextFile& file, int model, int threads) {
  // Sizes each piece's arrays (typical records are 70-80 bytes; over-reserving costs little).
  constexpr std::size_t kBytesPerAtom = 70;
  return read_atom_records(file, model, threads, kBytesPerAtom,
                           [&](std::string_view line, std::size_t number, AtomSet& atoms) {
                             parse_pdbqt_atom(file, line, number, atoms);
                           });
}

}  // namespace dcsgrid::io::detail
