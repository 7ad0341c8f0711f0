// PDBQT (AutoDock): PDB fixed columns, x y z in columns 31-54 and the partial charge in 71-76.
// ROOT/ENDROOT, BRANCH/ENDBRANCH, TORSDOF, REMARK and the like describe the torsion tree and
// carry no atoms; MODEL records separate docked poses.
#include <string>

#include "io/structure/formats.hpp"

namespace dcsgrid::io::detail {
namespace {

constexpr const char* kWhat[4] = {"x coordinate (columns 31-38)", "y coordinate (columns 39-46)",
                                  "z coordinate (columns 47-54)", "partial charge (columns 71-76)"};
constexpr std::size_t kBegin[4] = {30, 38, 46, 70}, kEnd[4] = {38, 46, 54, 76};  // 0-based

void parse_pdbqt_atom(const TextFile& file, std::string_view line, std::size_t line_number,
                      AtomSet& atoms) {
  if (line.size() < kEnd[3])
    throw InputError(file.name, line_number,
                     "truncated PDBQT atom record: " + std::to_string(line.size()) +
                         " characters, the partial charge needs columns 71-76");
  std::string_view fields[4];
  for (int c = 0; c < 4; ++c) fields[c] = line.substr(kBegin[c], kEnd[c] - kBegin[c]);
  double v[4];
  parse_fields(file, line_number, fields, kWhat, 4, v);
  atoms.push_back(v[0], v[1], v[2], v[3]);
}

}  // namespace

std::vector<Structure> read_pdbqt(const TextFile& file, int model, int threads) {
  constexpr std::size_t kBytesPerAtom = 70;  // sizes the arrays: a little under a typical record
  return read_atom_records(file, model, threads, kBytesPerAtom, parse_pdbqt_atom);
}

}  // namespace dcsgrid::io::detail
