#include "dcsgrid/io/read.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "read_formats.hpp"

namespace dcsgrid::io {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower((unsigned char)c));
  return s;
}

std::vector<Structure> read_models(const std::filesystem::path& path, const ReadOptions& options,
                                   int model) {
  const Format format = options.format ? *options.format : format_from_path(path);
  if (model < 0) throw InputError(detail::input_name(path), 0, "model numbers start at 1");
  detail::TextFile file = detail::load_text(path);
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
  }
  return models;
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
  std::string name = lower(path.filename().string());
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
  const std::string wanted = lower(std::string(name));
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

std::vector<Structure> read_all_models(const std::filesystem::path& path,
                                       const ReadOptions& options) {
  return read_models(path, options, 0);
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
  auto take = [&](std::size_t end) {  // atoms [begin, end) belong to model `current`
    if (begin == end) return;
    if (current == 0) current = count = 1;
    if (model != 0 && current != model) return;
    const std::size_t slot = model == 0 ? std::size_t(current - 1) : 0;
    if (models.size() <= slot) models.resize(slot + 1);
    AtomSet& atoms = models[slot].atoms;
    if (begin == 0 && end == all.size()) {
      atoms = std::move(all);
      models[slot].lines = std::move(lines);
      return;
    }
    const auto b = std::ptrdiff_t(begin), e = std::ptrdiff_t(end);
    for (auto [to, from] :
         {std::pair{&atoms.x, &all.x}, {&atoms.y, &all.y}, {&atoms.z, &all.z}, {&atoms.q, &all.q}})
      to->insert(to->end(), from->begin() + b, from->begin() + e);
    models[slot].lines.insert(models[slot].lines.end(), lines.begin() + b, lines.begin() + e);
  };
  for (const std::size_t mark : marks) {
    take(mark);
    begin = mark;
    current = ++count;
  }
  take(all.size());
  finish_models(file, model, count, models);
  return models;
}

}  // namespace detail
}  // namespace dcsgrid::io
