// PSF (CHARMM, NAMD, X-PLOR): a "PSF" line with flags (EXT for the wide layout), titles, then
// "N !NATOM" and N atom lines
//   id segid resid resname name type charge mass imove ...
// Fields are read split at blanks, which suits every flavour (CHARMM numeric or X-PLOR named
// types, NAMD's free spacing) and both layouts; the segment name's columns (standard I8,1X,A4;
// EXT I10,1X,A8) tell whether it is blank.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/topology/topology.hpp"
#include "io/text/text.hpp"

namespace dcsgrid::io {
namespace {

struct PsfAtomFields {
  std::string_view resid, resname, name, charge;
};

// The fields of one atom line; false when it has too few. A blank segment name (the columns
// where the layout puts it are empty) shifts the other fields left by one.
bool split_psf_atom(std::string_view line, bool extended, PsfAtomFields& out) {
  const std::size_t seg_begin = extended ? 11 : 9, seg_end = extended ? 19 : 13;
  const bool blank_segment =
      line.size() > seg_end &&
      line.substr(seg_begin, seg_end - seg_begin).find_first_not_of(' ') == std::string_view::npos;
  std::string_view f[10];
  const std::size_t n = detail::split_fields(line, f, 10);
  const std::size_t s = blank_segment ? 1 : 2;  // where resid is
  if (n < s + 6) return false;
  out = {f[s], f[s + 1], f[s + 2], f[s + 4]};
  return true;
}

// The shortest atom line: eight one-character fields, their separators and the line end.
constexpr std::size_t kMinAtomLineBytes = 16;

// Residue number: its leading integer ("12A" with an insertion code gives 12).
bool parse_resid(std::string_view text, std::int32_t& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end != text.data();
}

}  // namespace

Topology read_psf(const std::filesystem::path& path) {
  const detail::TextFile file = detail::load_text(path);
  detail::Lines lines(file.data);
  if (!lines.next() || !detail::trim(lines.line()).starts_with("PSF"))
    throw InputError(file.name, 1, "not a PSF file: the first line does not start with PSF");
  const bool extended = lines.line().find(" EXT") != std::string_view::npos;
  std::int64_t count = -1;
  while (lines.next()) {
    const std::string_view line = lines.line();
    if (line.find("!NATOM") == std::string_view::npos) continue;
    std::string_view f[2];
    detail::split_fields(line, f, 2);
    const auto [end, ec] = std::from_chars(f[0].data(), f[0].data() + f[0].size(), count);
    if (ec != std::errc() || count <= 0)
      throw InputError(file.name, lines.number(), "bad atom count '" + std::string(f[0]) + "'");
    break;
  }
  if (count < 0) throw InputError(file.name, 0, "no !NATOM section");
  Topology top;
  top.source = file.name;
  // The count is the file's word: reserve no more than the rest of the text can hold.
  top.atoms.reserve(std::min(std::size_t(count), file.data.size() / kMinAtomLineBytes));
  for (std::int64_t i = 0; i < count; ++i) {
    if (!lines.next())
      throw InputError(file.name, lines.number(), "the !NATOM section ends after " +
                                                      std::to_string(i) + " of " +
                                                      std::to_string(count) + " atoms");
    const std::string_view line = lines.line();
    PsfAtomFields a;
    if (!split_psf_atom(line, extended, a))
      throw InputError(file.name, lines.number(),
                       "an atom line needs id, segment, resid, resname, name, type, charge, mass");
    double charge = 0;
    const auto status = detail::parse_number(a.charge, charge);
    if (status != detail::NumberStatus::ok)
      throw InputError(file.name, lines.number(),
                       detail::describe_bad_number("charge", a.charge, status));
    std::int32_t resid = 0;
    if (!parse_resid(a.resid, resid))
      throw InputError(file.name, lines.number(),
                       "bad residue number '" + std::string(a.resid) + "'");
    top.atoms.push_back(0, 0, 0, charge);
    top.atom_names.emplace_back(a.name);
    top.residue_names.emplace_back(a.resname);
    top.residue_numbers.push_back(resid);
  }
  return top;
}

}  // namespace dcsgrid::io
