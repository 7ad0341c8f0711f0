#include "dcsgrid/io/atom_labels.hpp"

#include <string_view>

#include "read_text.hpp"

namespace dcsgrid::io {
namespace {

std::string column(std::string_view line, std::size_t from, std::size_t to) {
  if (from >= line.size()) return {};
  return std::string(detail::trim(line.substr(from, to - from)));
}

// PDB's fixed columns: name 13-16, resName 18-20, chainID 22, resSeq and iCode 23-27.
AtomLabel pdb_label(std::string_view line) {
  return {column(line, 21, 22), column(line, 17, 20), column(line, 22, 27), column(line, 12, 16)};
}

// PQR's fields: ATOM serial name resName [chain] resSeq x y z q r (the serial may run into ATOM).
AtomLabel pqr_label(std::string_view line) {
  std::string_view f[11];
  const std::size_t n = detail::split_fields(line, f, 11);
  if (n < 9 || n > 11) return {};
  const bool run_together = f[0] != "ATOM" && f[0] != "HETATM";
  const std::size_t name = run_together ? 1 : 2;
  const bool chain = n - name == 9;
  return {chain ? std::string(f[name + 2]) : "", std::string(f[name + 1]), std::string(f[n - 6]),
          std::string(f[name])};
}

}  // namespace

std::vector<AtomLabel> atom_labels(const std::filesystem::path& path, const Structure& structure) {
  std::vector<AtomLabel> labels(structure.atoms.size());
  const Format format = format_from_path(path);
  if (format != Format::pqr && format != Format::pdb && format != Format::pdbqt) return labels;
  const std::string text = read_text_input(path);
  std::vector<std::string_view> lines(1);  // 1-based
  detail::Lines reader(text);
  while (reader.next()) lines.push_back(reader.line());
  for (std::size_t a = 0; a < labels.size() && a < structure.lines.size(); ++a) {
    const std::size_t l = structure.lines[a];
    if (l == 0 || l >= lines.size()) continue;
    labels[a] = format == Format::pqr ? pqr_label(lines[l]) : pdb_label(lines[l]);
  }
  return labels;
}

}  // namespace dcsgrid::io
