// The labels of atoms (record, name, residue, chain, number), found again in the input's text by
// each atom's line (Structure::lines).
#include "dcsgrid/io/structure/atom_labels.hpp"

#include <algorithm>
#include <cstdint>

#include "dcsgrid/core/threads.hpp"
#include "io/text/text.hpp"

namespace dcsgrid::io {
namespace {

// A field as one word: blanks trimmed, inner blanks as '_', empty as `fallback`.
std::string word(std::string_view field, const char* fallback) {
  std::string w(detail::trim(field));
  std::replace(w.begin(), w.end(), ' ', '_');
  return w.empty() || w == "?" || w == "." ? fallback : w;
}

std::string_view columns(std::string_view line, std::size_t begin, std::size_t end) {
  return begin < line.size() ? line.substr(begin, std::min(end, line.size()) - begin) : std::string_view();
}

// PDB and PDBQT: record 1-6, name 13-16, residue 18-20, chain 22, number 23-26, insertion code 27.
AtomLabel pdb_label(std::string_view line) {
  AtomLabel l;
  l.record = line.starts_with("ATOM") ? "ATOM" : "HETATM";
  l.name = word(columns(line, 12, 16), "X");
  l.residue = word(columns(line, 17, 20), "UNK");
  l.chain = word(columns(line, 21, 22), "");
  l.residue_number = word(std::string(detail::trim(columns(line, 22, 26))) + std::string(detail::trim(columns(line, 26, 27))), "1");
  return l;
}

// PQR: ATOM serial name resName [chain] resSeq x y z q r (the reader has checked the layout; a
// serial may run into the record name).
AtomLabel pqr_label(std::string_view line) {
  std::string_view f[11];
  const std::size_t n = std::min<std::size_t>(detail::split_fields(line, f, 11), 11);
  AtomLabel l;
  const std::size_t name = f[0] == "ATOM" || f[0] == "HETATM" ? 2 : 1;
  if (n < name + 8) return l;
  l.record = f[0].starts_with("ATOM") ? "ATOM" : "HETATM";
  l.name = word(f[name], "X");
  l.residue = word(f[name + 1], "UNK");
  l.chain = n - 6 > name + 2 ? word(f[name + 2], "") : "";
  l.residue_number = word(f[n - 6], "1");
  return l;
}

// The tags of mmCIF's atom loop (the first loop with _atom_site.Cartn_x), one a line as every
// writer of mmCIF puts them.
std::vector<std::string> atom_site_tags(std::string_view text) {
  detail::Lines lines(text);
  std::vector<std::string> tags;
  bool in_loop = false;
  while (lines.next()) {
    const std::string_view line = detail::trim(lines.line());
    if (line == "loop_") {
      if (std::find(tags.begin(), tags.end(), "_atom_site.Cartn_x") != tags.end()) return tags;
      tags.clear(), in_loop = true;
    } else if (in_loop && line.starts_with('_')) {
      tags.emplace_back(line.substr(0, line.find_first_of(" \t")));
    } else if (in_loop) {
      if (std::find(tags.begin(), tags.end(), "_atom_site.Cartn_x") != tags.end()) return tags;
      in_loop = false;
    }
  }
  return {};
}

// A CIF row's values: bare words and 'quoted' or "quoted" ones (closed by a quote before a blank).
std::vector<std::string_view> cif_values(std::string_view line) {
  std::vector<std::string_view> values;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == ' ' || line[i] == '\t') {
      ++i;
      continue;
    }
    const char quote = line[i] == '\'' || line[i] == '"' ? line[i] : 0;
    std::size_t end = i + 1;
    while (end < line.size() && (quote ? !(line[end] == quote && (end + 1 == line.size() || line[end + 1] == ' '))
                                       : line[end] != ' ' && line[end] != '\t'))
      ++end;
    values.push_back(quote ? line.substr(i + 1, end - i - 1) : line.substr(i, end - i));
    i = end + (quote ? 1 : 0);
  }
  return values;
}

AtomLabel cif_label(std::string_view line, const std::vector<std::string>& tags) {
  const std::vector<std::string_view> v = cif_values(line);
  AtomLabel l;
  if (v.size() != tags.size()) return l;  // a row over several lines
  const auto value = [&](const char* auth, const char* label) -> std::string_view {
    for (const char* tag : {auth, label})
      if (const auto it = std::find(tags.begin(), tags.end(), tag); it != tags.end()) {
        const std::string_view x = v[std::size_t(it - tags.begin())];
        if (x != "?" && x != ".") return x;
      }
    return {};
  };
  l.record = value("_atom_site.group_PDB", "") == "HETATM" ? "HETATM" : "ATOM";  // gemmi writes no group
  l.name = word(value("_atom_site.auth_atom_id", "_atom_site.label_atom_id"), "X");
  l.residue = word(value("_atom_site.auth_comp_id", "_atom_site.label_comp_id"), "UNK");
  l.chain = word(value("_atom_site.auth_asym_id", "_atom_site.label_asym_id"), "");
  l.residue_number = word(std::string(value("_atom_site.auth_seq_id", "_atom_site.label_seq_id")) +
                              std::string(value("_atom_site.pdbx_PDB_ins_code", "")), "1");
  return l;
}

}  // namespace

std::vector<AtomLabel> atom_labels(const Structure& s, Format format, std::string_view text) {
  // The atoms in parallel (a 10^6-atom assembly has a million labels to make).
  std::vector<AtomLabel> labels(s.atoms.size());
  const bool by_line = !(format == Format::xyz || format == Format::mol2 || s.lines.size() != labels.size());
  std::vector<std::string_view> line_of;  // where each line starts, for the lines the atoms name
  std::vector<std::string> tags;
  if (by_line) {
    const std::size_t last = s.lines.empty() ? 0 : *std::max_element(s.lines.begin(), s.lines.end());
    line_of = detail::numbered_lines(text, last);
    if (format == Format::mmcif) tags = atom_site_tags(text);
  }
#pragma omp parallel for num_threads(team_size()) schedule(static)
  for (std::int64_t a = 0; a < std::int64_t(labels.size()); ++a) {
    const std::size_t i = std::size_t(a);
    const std::size_t n = by_line ? s.lines[i] : 0;
    if (n == 0 || line_of[n].empty()) labels[i].residue_number = std::to_string(i + 1);
    else if (format == Format::pqr) labels[i] = pqr_label(line_of[n]);
    else if (format == Format::mmcif) labels[i] = cif_label(line_of[n], tags);
    else labels[i] = pdb_label(line_of[n]);
  }
  return labels;
}

std::vector<AtomLabel> atom_labels(const std::filesystem::path& path, const Structure& structure) {
  return atom_labels(structure, format_from_path(path), read_text_input(path));
}

}  // namespace dcsgrid::io
