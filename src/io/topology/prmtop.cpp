// AMBER PRMTOP (parm7): sections "%FLAG NAME", "%FORMAT(nXw[.d])", then values in fixed-width
// fields, n to a line. POINTERS gives the atom (first value) and residue (twelfth) counts.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/topology/topology.hpp"
#include "io/text/text.hpp"

namespace dcsgrid::io {
namespace {

constexpr double amber_charge_unit = 18.2223;  // AMBER stores q·sqrt(332.0636...) kcal·Å/mol

struct Section {
  std::size_t per_line = 0, width = 0;
  std::size_t first_line = 0;  // line number of the first value line
  std::vector<std::string_view> lines;
};

class Prmtop {
 public:
  explicit Prmtop(const std::filesystem::path& path);
  // The first `count` fields of a section, trimmed.
  std::vector<std::string_view> fields(const std::string& flag, std::size_t count) const;
  std::vector<double> numbers(const std::string& flag, std::size_t count) const;
  const std::string& name() const { return file_.name; }

 private:
  const Section& section(const std::string& flag) const;
  void parse_format(std::string_view line, std::size_t number, Section& s) const;
  detail::TextFile file_;
  std::map<std::string, Section, std::less<>> sections_;
};

Prmtop::Prmtop(const std::filesystem::path& path) : file_(detail::load_text(path)) {
  detail::Lines lines(file_.data);
  Section* current = nullptr;
  while (lines.next()) {
    const std::string_view line = lines.line();
    if (line.starts_with("%FLAG")) {
      current = &sections_[std::string(detail::trim(line.substr(5)))];
    } else if (line.starts_with("%FORMAT") && current) {
      parse_format(line, lines.number(), *current);
      current->first_line = lines.number() + 1;
    } else if (line.starts_with("%")) {
      continue;  // %VERSION, %COMMENT
    } else if (current) {
      current->lines.push_back(line);
    }
  }
  if (!sections_.count("POINTERS"))
    throw InputError(file_.name, 0, "not an AMBER PRMTOP file: no %FLAG POINTERS section");
}

// "%FORMAT(10I8)", "%FORMAT(5E16.8)", "%FORMAT(20a4)": fields per line and field width.
void Prmtop::parse_format(std::string_view line, std::size_t number, Section& s) const {
  const std::size_t open = line.find('('), close = line.find(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    throw InputError(file_.name, number, "bad %FORMAT line");
  const std::string_view f = line.substr(open + 1, close - open - 1);
  std::size_t i = 0;
  while (i < f.size() && std::isdigit(static_cast<unsigned char>(f[i]))) ++i;
  std::size_t j = i;
  while (j < f.size() && std::isalpha(static_cast<unsigned char>(f[j]))) ++j;
  std::size_t k = j;
  while (k < f.size() && std::isdigit(static_cast<unsigned char>(f[k]))) ++k;
  const auto to_size = [](std::string_view t, std::size_t& v) {
    return std::from_chars(t.data(), t.data() + t.size(), v).ec == std::errc() && v > 0;
  };
  if (i == 0 || j == i || k == j || !to_size(f.substr(0, i), s.per_line) ||
      !to_size(f.substr(j, k - j), s.width))
    throw InputError(file_.name, number, "bad %FORMAT '" + std::string(f) + "'");
}

const Section& Prmtop::section(const std::string& flag) const {
  const auto it = sections_.find(flag);
  if (it == sections_.end()) throw InputError(file_.name, 0, "no %FLAG " + flag + " section");
  return it->second;
}

std::vector<std::string_view> Prmtop::fields(const std::string& flag, std::size_t count) const {
  const Section& s = section(flag);
  std::vector<std::string_view> out;
  out.reserve(std::min(count, s.lines.size() * s.per_line));  // count is the file's word
  for (std::size_t l = 0; l < s.lines.size() && out.size() < count; ++l) {
    const std::string_view line = s.lines[l];
    for (std::size_t at = 0; at < line.size() && out.size() < count && at < s.per_line * s.width;
         at += s.width)
      out.push_back(detail::trim(line.substr(at, s.width)));
  }
  if (out.size() < count)
    throw InputError(file_.name, s.first_line, "%FLAG " + flag + " holds " +
                                                   std::to_string(out.size()) + " values, " +
                                                   std::to_string(count) + " expected");
  return out;
}

std::vector<double> Prmtop::numbers(const std::string& flag, std::size_t count) const {
  const auto text = fields(flag, count);
  const Section& s = section(flag);
  std::vector<double> values(count);
  for (std::size_t n = 0; n < count; ++n) {
    const auto status = detail::parse_number(text[n], values[n]);
    if (status != detail::NumberStatus::ok)
      throw InputError(file_.name, s.first_line + n / s.per_line,
                       detail::describe_bad_number("%FLAG " + flag + " value", text[n], status));
  }
  return values;
}

}  // namespace

Topology read_prmtop(const std::filesystem::path& path) {
  const Prmtop top(path);
  const auto pointers = top.numbers("POINTERS", 12);
  // NATOM and NRES are 8-digit integers (%FORMAT(10I8)); beyond that a count is not one.
  const auto count = [](double v) { return v >= 1 && v <= 99999999 && v == std::floor(v); };
  if (!count(pointers[0]) || !count(pointers[11])) {
    char problem[128];
    std::snprintf(problem, sizeof problem,
                  "POINTERS give %.9g atoms and %.9g residues (counts 1 to 99999999)", pointers[0],
                  pointers[11]);
    throw InputError(top.name(), 0, problem);
  }
  const std::size_t atoms = std::size_t(pointers[0]), residues = std::size_t(pointers[11]);
  const auto charges = top.numbers("CHARGE", atoms);
  const auto names = top.fields("ATOM_NAME", atoms);
  const auto labels = top.fields("RESIDUE_LABEL", residues);
  const auto first_atoms = top.numbers("RESIDUE_POINTER", residues);
  Topology out;
  out.source = top.name();
  out.atoms.reserve(atoms);
  std::size_t residue = 0;
  for (std::size_t i = 0; i < atoms; ++i) {
    while (residue + 1 < residues && double(i + 1) >= first_atoms[residue + 1]) ++residue;
    out.atoms.push_back(0, 0, 0, charges[i] / amber_charge_unit);
    out.atom_names.emplace_back(names[i]);
    out.residue_names.emplace_back(labels[residue]);
    out.residue_numbers.push_back(std::int32_t(residue + 1));
  }
  return out;
}

}  // namespace dcsgrid::io
