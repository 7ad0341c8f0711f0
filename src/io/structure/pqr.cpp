// PQR as APBS and pdb2pqr write it: whitespace-separated
//   ATOM/HETATM serial name resName [chain] resSeq x y z charge radius
// The chain is optional, so a record has 10 or 11 fields (one fewer where a long serial runs
// into the record name); the field before the coordinates must then be the residue number, which
// tells a record with a chain from one with a stray column (whose numbers would shift by one).
#include <string>

#include "io/structure/formats.hpp"

namespace dcsgrid::io::detail {
namespace {

constexpr std::size_t kMaxFields = 11;
constexpr const char* kColumns[5] = {"x coordinate", "y coordinate", "z coordinate", "charge",
                                     "radius"};
constexpr const char* kLayout = "'ATOM serial name resName [chain] resSeq x y z charge radius'";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A residue number as pdb2pqr writes it: an integer with an optional insertion code after it
// ("52A"), and, where a 4-digit number meets the chain in fixed columns, the chain before it
// ("A1000").
bool is_residue_number(std::string_view field) {
  if (!field.empty() && !is_digit(field.front()) && field.front() != '-' && field.size() > 1 &&
      is_digit(field[1]))
    field.remove_prefix(1);  // the chain run into the number
  if (!field.empty() && field.front() == '-') field.remove_prefix(1);
  if (!field.empty() && !is_digit(field.back()) && (unsigned char)field.back() > ' ' &&
      field.back() != '.')
    field.remove_suffix(1);  // the insertion code
  if (field.empty()) return false;
  for (const char c : field)
    if (!is_digit(c)) return false;
  return true;
}

void parse_pqr_atom(const TextFile& file, std::string_view line, std::size_t line_number,
                    AtomSet& atoms) {
  std::string_view fields[kMaxFields];
  const std::size_t n = split_fields(line, fields, kMaxFields);
  // A long serial may run into the record name ("HETATM123456"), leaving one field fewer.
  const std::size_t run_together = fields[0] != "ATOM" && fields[0] != "HETATM" ? 1 : 0;
  const std::size_t layout_fields = n + run_together;  // as if the serial stood apart
  if (layout_fields < 10)
    throw InputError(file.name, line_number,
                     "truncated PQR atom record: " + std::to_string(n) + " fields, expected " +
                         kLayout);
  if (layout_fields > 11)
    throw InputError(file.name, line_number,
                     "PQR atom record has " + std::to_string(n) + " fields, expected " + kLayout);
  const std::string_view residue = fields[n - 6];
  if (!is_residue_number(residue))
    throw InputError(file.name, line_number,
                     "the residue number (field " + std::to_string(n - 5) + " of " +
                         std::to_string(n) + ") is '" + printable(residue) +
                         "', not an integer: expected " + kLayout);
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
