#include "dcsgrid/core/text.hpp"
#include "dcsgrid/io/structure/read.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <set>

#include <spdlog/fmt/fmt.h>

#include "io/structure/formats.hpp"

namespace dcsgrid::io {
namespace {

std::vector<Structure> read_models(detail::TextFile& file, Format format, const ReadOptions& options,
                                   int model) {
  std::vector<Structure> models;
  switch (format) {
    case Format::pqr:
      models = detail::read_pqr(file, model, options.threads);
      break;
    case Format::pdbqt:
      models = detail::read_pdbqt(file, model, options.threads);
      break;
    case Format::xyz:
      models = detail::read_xyz(file, model, options.threads);
      break;
    case Format::mol2:
      models = detail::read_mol2(file, model);
      break;
    case Format::pdb:
    case Format::mmcif:
      models = detail::read_macromolecule(file, format, model, options);
      break;
  }
  for (Structure& s : models) {
    s.source = file.name;
    if (s.charge_source.empty()) s.charge_source = "file";
    if (s.radius_source.empty() && s.atoms.has_radii()) s.radius_source = "file";
  }
  return models;
}

std::vector<Structure> read_models(const std::filesystem::path& path, const ReadOptions& options,
                                   int model) {
  const Format format = options.format ? *options.format : format_from_path(path);
  if (model < 0) throw InputError(detail::input_name(path), 0, "model numbers start at 1");
  detail::TextFile file = detail::load_text(path);
  return read_models(file, format, options, model);
}

bool starts_record(std::string_view line, std::string_view name) {
  return line.starts_with(name) && (line.size() == name.size() || line[name.size()] == ' ' ||
                                    line[name.size()] == '\r');
}

// The byte ranges of the MODEL ... ENDMDL blocks of a PDB-like text.
std::vector<std::pair<std::size_t, std::size_t>> model_blocks(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  std::size_t pos = 0;
  constexpr std::size_t none = std::string_view::npos;
  std::size_t open = none;  // where the block being read began
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    if (starts_record(line, "MODEL")) {
      if (open != none) blocks.emplace_back(open, pos);  // no ENDMDL: the next MODEL ends it
      open = pos;
    } else if (starts_record(line, "ENDMDL") && open != none) {
      blocks.emplace_back(open, end);
      open = none;
    }
    pos = end + 1;
  }
  if (open != none) blocks.emplace_back(open, text.size());
  return blocks;
}

// The text with every byte of the other models' blocks blank but their line ends, so the lines
// keep their numbers in messages.
std::string only_block(std::string_view text, const std::vector<std::pair<std::size_t, std::size_t>>& blocks,
                       std::size_t keep) {
  std::string out(text);
  for (std::size_t b = 0; b < blocks.size(); ++b)
    if (b != keep)
      for (std::size_t i = blocks[b].first; i < blocks[b].second; ++i)
        if (out[i] != '\n') out[i] = ' ';
  return out;
}

// Whether two MODEL records of the blocks carry one number: the file as a whole is then refused
// (gemmi: "duplicate MODEL number"), and its blocks must not be read one by one around that.
bool repeats_a_model_number(std::string_view text, const std::vector<std::pair<std::size_t, std::size_t>>& blocks) {
  std::set<std::string> numbers;
  for (const auto& [begin, end] : blocks) {
    const std::string_view line = text.substr(begin, std::min(text.find('\n', begin), end) - begin);
    const std::string_view rest = line.substr(std::min<std::size_t>(5, line.size()));
    const std::size_t first = rest.find_first_not_of(" \t\r");
    const std::string number(first == std::string_view::npos ? std::string_view() : rest.substr(first));
    if (!numbers.insert(number.substr(0, number.find_last_not_of(" \t\r") + 1)).second) return true;
  }
  return false;
}

constexpr std::pair<const char*, Format> kNames[] = {
    {"pqr", Format::pqr},   {"pdb", Format::pdb},     {"mmcif", Format::mmcif},
    {"cif", Format::mmcif}, {"pdbqt", Format::pdbqt}, {"xyz", Format::xyz},
    {"mol2", Format::mol2}};

}  // namespace

Format format_from_path(const std::filesystem::path& path) {
  if (path == "-")
    throw InputError(detail::kStandardInputName, 0,
                     "standard input needs its format given (pqr, pdb, mmcif, pdbqt, xyz or mol2)");
  std::string name = ascii_lower(path.filename().string());
  for (const char* compressed : {".gz", ".bz2", ".xz"})
    if (name.ends_with(compressed)) name.resize(name.size() - std::strlen(compressed));
  const std::string ext = std::filesystem::path(name).extension().string();
  static const std::pair<const char*, Format> kExtensions[] = {
      {".pqr", Format::pqr},   {".pdb", Format::pdb},     {".ent", Format::pdb},
      {".cif", Format::mmcif}, {".mmcif", Format::mmcif}, {".pdbqt", Format::pdbqt},
      {".xyz", Format::xyz},   {".mol2", Format::mol2}};
  for (const auto& [e, f] : kExtensions)
    if (ext == e) return f;
  throw InputError(
      path.string(), 0,
      (ext.empty() ? std::string("no file extension") : "unknown extension '" + ext + "'") +
          ": expected .pqr .pdb .ent .cif .mmcif .pdbqt .xyz or .mol2, optionally with .gz .bz2 "
          "or .xz");
}

std::optional<Format> format_from_name(std::string_view name) {
  const std::string wanted = ascii_lower(std::string(name));
  for (const auto& [n, f] : kNames)
    if (wanted == n) return f;
  return std::nullopt;
}

Structure read_structure(const std::filesystem::path& path, const ReadOptions& options) {
  if (options.model < 1)
    throw InputError(detail::input_name(path), 0,
                     "model " + std::to_string(options.model) + " requested; models start at 1");
  return std::move(read_models(path, options, options.model).front());
}

TextBuffer read_text_input(const std::filesystem::path& path) {
  return std::move(detail::load_text(path).data);
}

std::vector<Structure> read_all_models(const std::filesystem::path& path,
                                       const ReadOptions& options) {
  return read_models(path, options, 0);
}

std::vector<ModelRead> read_each_model(const std::filesystem::path& path, const ReadOptions& options) {
  const Format format = options.format ? *options.format : format_from_path(path);
  detail::TextFile file = detail::load_text(path);
  std::vector<ModelRead> reads;
  try {
    detail::TextFile whole = file;
    for (Structure& s : read_models(whole, format, options, 0)) reads.push_back({s.model, std::move(s), {}});
    return reads;
  } catch (const InputError&) {
    // Only MODEL ... ENDMDL blocks can be told apart in a file that does not read as a whole.
    const bool blocks_possible = format == Format::pqr || format == Format::pdb || format == Format::pdbqt;
    const auto blocks = model_blocks(file.data);
    if (!blocks_possible || blocks.size() < 2 || repeats_a_model_number(file.data, blocks)) throw;
  }
  const auto blocks = model_blocks(file.data);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    detail::TextFile one{file.name, TextBuffer(only_block(file.data, blocks, b))};
    const int model = int(b) + 1;
    try {
      Structure s = std::move(read_models(one, format, options, 0).front());
      s.model = model;
      s.models_in_file = int(blocks.size());
      reads.push_back({model, std::move(s), {}});
    } catch (const InputError& e) {
      reads.push_back({model, std::nullopt, fmt::format("model {}: {}", model, e.what())});
    }
  }
  return reads;
}

namespace detail {

void finish_models(const TextFile& file, int model, int models_in_file,
                   std::vector<Structure>& models) {
  if (model > models_in_file && models_in_file > 0)
    throw InputError(file.name, 0,
                     "model " + std::to_string(model) + " requested but the file has " +
                         std::to_string(models_in_file) +
                         (models_in_file == 1 ? " model" : " models"));
  if (models.empty()) throw InputError(file.name, 0, "no atoms found");
  for (std::size_t i = 0; i < models.size(); ++i) {
    Structure& s = models[i];
    s.model = model == 0 ? int(i) + 1 : model;
    s.models_in_file = models_in_file;
    if (s.atoms.empty())
      throw InputError(file.name, 0, "model " + std::to_string(s.model) + " has no atoms");
  }
}

std::vector<Structure> models_from_marks(const TextFile& file, int model, AtomSet&& all,
                                         std::vector<std::size_t>&& lines,
                                         const std::vector<std::size_t>& marks) {
  std::vector<Structure> models;
  int current = 0, count = 0;
  std::size_t begin = 0;
  // `all` may be moved into the first model, so its size is taken here (a MODEL record after the
  // last atom made a second range start where the moved-from arrays had already ended).
  const std::size_t total = all.size();
  auto take = [&](std::size_t end) {  // atoms [begin, end) belong to model `current`
    if (begin >= end) return;
    if (current == 0) current = count = 1;
    if (model != 0 && current != model) return;
    const std::size_t slot = model == 0 ? std::size_t(current - 1) : 0;
    if (models.size() <= slot) models.resize(slot + 1);
    AtomSet& atoms = models[slot].atoms;
    if (begin == 0 && end == total) {
      atoms = std::move(all);
      models[slot].lines = std::move(lines);
      return;
    }
    const auto b = std::ptrdiff_t(begin), e = std::ptrdiff_t(end);
    const bool radii = all.has_radii();
    const auto to = atoms.columns(radii), from = all.columns(radii);
    for (std::size_t c = 0; c < from.size(); ++c) to[c]->insert(to[c]->end(), from[c]->begin() + b, from[c]->begin() + e);
    models[slot].lines.insert(models[slot].lines.end(), lines.begin() + b, lines.begin() + e);
  };
  for (const std::size_t mark : marks) {
    take(mark);
    begin = mark;
    current = ++count;
  }
  take(total);
  finish_models(file, model, count, models);
  return models;
}

}  // namespace detail
}  // namespace dcsgrid::io
