// PQR as APBS and pdb2pqr write it: whitespace-separated
//   ATOM/HETATM serial name resName [chain] resSeq x y z charge radius
// The chain is optional, so the numbers are taken from the end of the line.
#include <string>

#include "read_formats.hpp"

namespace dcsgrid::io::detail {
namespace {

constexpr std::size_t kMaxFields = 16;
constexpr const char* kColumns[5] = {"x coordinate", "y coordinate", "z coordinate", "charge",
                                     "radius"};

void parse_pqr_atom(const TextFile& file, std::string_view line, std::size_t line_number,
                    AtomSet& atoms) {
  std::string_view fields[kMaxFields];
  const std::size_t n = split_fields(line, fields, kMaxFields);
  // A long serial may run into the record name ("HETATM123456"), leaving one field fewer.
  const bool run_together = fields[0] != "ATOM" && fields[0] != "HETATM";
  const std::size_t needed = run_together ? 9 : 10;
  if (n < needed)
    throw InputError(file.name, line_number,
                     "truncated PQR atom record: " + std::to_string(n) +
                         " fields, expected 'ATOM serial name resName [chain] resSeq x y z "
                         "charge radius'");
  if (n > kMaxFields)
    throw InputError(file.name, line_number,
                     "PQR atom record has " + std::to_string(n) + " fields, expected at most 11");
  double v[5];
  parse_fields(file, line_number, fields + (n - 5), kColumns, 5, v);
  atoms.push_back(v[0], v[1], v[2], v[3], v[4]);
}

}  // namespace

std::vector<Structure> read_pqr(const TextFile& file, int model, int threads) {
  constexpr std::size_t kBytesPerAtom = 60;  // sizes the arrays: a little under a typical record
  return read_atom_records(file, model, threads, kBytesPerAtom, parse_pqr_atom);
}

}  // namespace dcsgrid::io::detail
