// Van der Waals radii by element (sources in the header), and radii for structures read without
// any from the elements their records name.
#include "dcsgrid/io/structure/element_radii.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/charges/forcefield.hpp"
#include "io/text/text.hpp"

namespace dcsgrid::io {
namespace {

struct ElementRadius {
  const char* symbol;
  double radius;
};

constexpr ElementRadius kRadii[] = {
    // Bondi 1964, Table I.
    {"H", 1.20},  {"D", 1.20},  {"He", 1.40}, {"C", 1.70},  {"N", 1.55},  {"O", 1.52},
    {"F", 1.47},  {"Ne", 1.54}, {"Si", 2.10}, {"P", 1.80},  {"S", 1.80},  {"Cl", 1.75},
    {"Ar", 1.88}, {"As", 1.85}, {"Se", 1.90}, {"Br", 1.85}, {"Kr", 2.02}, {"Te", 2.06},
    {"I", 1.98},  {"Xe", 2.16}, {"Li", 1.82}, {"Na", 2.27}, {"K", 2.75},  {"Mg", 1.73},
    {"Ni", 1.63}, {"Cu", 1.40}, {"Zn", 1.39}, {"Ga", 1.87}, {"Pd", 1.63}, {"Ag", 1.72},
    {"Cd", 1.58}, {"In", 1.93}, {"Sn", 2.17}, {"Pt", 1.75}, {"Au", 1.66}, {"Hg", 1.55},
    {"Tl", 1.96}, {"Pb", 2.02}, {"U", 1.86},
    // Mantina et al. 2009, Table 12: main-group elements Bondi gives none.
    {"Be", 1.53}, {"B", 1.92},  {"Al", 1.84}, {"Ca", 2.31}, {"Ge", 2.11}, {"Rb", 3.03},
    {"Sr", 2.49}, {"Sb", 2.06}, {"Cs", 3.43}, {"Ba", 2.68}, {"Bi", 2.07}, {"Po", 1.97},
    {"At", 2.02}, {"Rn", 2.20}, {"Fr", 3.48}, {"Ra", 2.83},
};

bool same_symbol(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper((unsigned char)x) == std::toupper((unsigned char)y);
         });
}

// AutoDock 4 / Vina atom types that are not element symbols: aromatic carbon, acceptor and
// donor flavours, Vina's macrocycle closure carbons.
std::string autodock_element(std::string_view type) {
  static constexpr std::pair<const char*, const char*> kTypes[] = {
      {"A", "C"},  {"NA", "N"}, {"NS", "N"},  {"OA", "O"},  {"OS", "O"},  {"SA", "S"},
      {"HD", "H"}, {"HS", "H"}, {"G0", "C"},  {"G1", "C"},  {"G2", "C"},  {"G3", "C"},
      {"CG0", "C"}, {"CG1", "C"}, {"CG2", "C"}, {"CG3", "C"}};
  for (const auto& [name, element] : kTypes)
    if (same_symbol(type, name)) return element;
  return std::string(type);
}

std::string_view columns(std::string_view line, std::size_t begin, std::size_t end) {
  return begin < line.size() ? line.substr(begin, std::min(end, line.size()) - begin) : std::string_view();
}

// The element an atom's record names; empty where it names none.
std::string record_element(Format format, std::string_view line) {
  std::string_view fields[10];
  switch (format) {
    case Format::pdbqt: {
      const std::string_view type = detail::trim(columns(line, 77, 80));
      return type.empty() ? element_from_atom_name(detail::trim(columns(line, 12, 16))) : autodock_element(type);
    }
    case Format::xyz:  // "element x y z charge"; plain "x y z charge" names none
      return detail::split_fields(line, fields, 6) == 5 ? std::string(fields[0]) : std::string();
    case Format::mol2: {  // atom_id name x y z type ...: "C.ar" is carbon
      if (detail::split_fields(line, fields, 10) < 6) return {};
      return std::string(fields[5].substr(0, fields[5].find('.')));
    }
    case Format::pqr:  // has radii; PDB and mmCIF have the force field's
    case Format::pdb:
    case Format::mmcif:
      return {};
  }
  return {};
}

}  // namespace

std::optional<double> element_radius(std::string_view element) {
  for (const ElementRadius& e : kRadii)
    if (same_symbol(element, e.symbol)) return e.radius;
  return std::nullopt;
}

std::string element_from_atom_name(std::string_view name) {
  if (is_hydrogen_name(name)) return "H";
  const auto letter = std::find_if(name.begin(), name.end(), [](char c) { return std::isalpha((unsigned char)c); });
  return letter == name.end() ? std::string() : std::string(1, char(std::toupper((unsigned char)*letter)));
}

void fill_missing_radii(Structure& s, Format format, std::string_view text) {
  if (s.atoms.has_radii()) return;
  const std::size_t last = s.lines.empty() ? 0 : *std::max_element(s.lines.begin(), s.lines.end());
  const std::vector<std::string_view> line_of = detail::numbered_lines(text, last);
  std::vector<float> radii(s.atoms.size());
  for (std::size_t i = 0; i < radii.size(); ++i) {
    const std::size_t n = i < s.lines.size() ? s.lines[i] : 0;
    const std::string element = n == 0 ? std::string() : record_element(format, line_of[n]);
    if (element.empty())
      throw InputError(s.source, n,
                       "atom " + std::to_string(i + 1) +
                           " names no element, and radii (which this command needs) come from the "
                           "elements where the input gives none: give elements or a PQR file");
    const std::optional<double> radius = element_radius(element);
    if (!radius)
      throw InputError(s.source, n,
                       "atom " + std::to_string(i + 1) + ": element '" + element +
                           "' has no van der Waals radius in dcsgrid's table (Bondi 1964; Mantina et "
                           "al. 2009): give the radii in a PQR file");
    radii[i] = float(*radius);
  }
  s.atoms.r = std::move(radii);
  s.radius_source = kElementRadiiSource;
}

void fill_missing_radii(Structure& s, const std::filesystem::path& path, std::optional<Format> format) {
  if (s.atoms.has_radii()) return;
  if (path == "-")
    throw InputError(detail::input_name(path), 0,
                     "radii from the atoms' elements need the input read again, which standard "
                     "input cannot be: give the file's name, or a PQR file with radii");
  fill_missing_radii(s, format ? *format : format_from_path(path), read_text_input(path));
}

}  // namespace dcsgrid::io
