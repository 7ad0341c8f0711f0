#include "dcsgrid/io/read.hpp"

#include <algorithm>
#include <cctype>

#include "read_formats.hpp"

namespace dcsgrid::io {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower((unsigned char)c));
  return s;
}

std::vector<Structure> read_models(const std::filesystem::path& path, const ReadOptions& options,
                                   int model) {
  const Format format = format_from_path(path);
  if (model < 0) throw InputError(path.string(), 0, "model numbers start at 1");
  detail::TextFile file = detail::load_text(path);
  std::vector<Structure> models;
  switch (format) {
    case Format::pqr:
      models = detail::read_pqr(file, model);
      break;
    case Format::pdbqt:
      models = detail::read_pdbqt(file, model);
      break;
    case Format::xyz:
      models = detail::read_xyz(file, model);
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

}  // namespace

std::string format_name(Format f) {
  switch (f) {
    case Format::pqr:
      return "PQR";
    case Format::pdb:
      return "PDB";
    case Format::mmcif:
      return "mmCIF";
    case Format::pdbqt:
      return "PDBQT";
    case Format::xyz:
      return "XYZ";
  }
  return "?";
}

Format format_from_path(const std::filesystem::path& path) {
  std::string name = lower(path.filename().string());
  if (name.ends_with(".gz")) name.resize(name.size() - 3);
  const std::string ext = std::filesystem::path(name).extension().string();
  static const std::pair<const char*, Format> kExtensions[] = {
      {".pqr", Format::pqr},   {".pdb", Format::pdb},     {".ent", Format::pdb},
      {".cif", Format::mmcif}, {".mmcif", Format::mmcif}, {".pdbqt", Format::pdbqt},
      {".xyz", Format::xyz}};
  for (const auto& [e, f] : kExtensions)
    if (ext == e) return f;
  throw InputError(
      path.string(), 0,
      (ext.empty() ? std::string("no file extension") : "unknown extension '" + ext + "'") +
          ": expected .pqr .pdb .ent .cif .mmcif .pdbqt or .xyz, optionally with .gz");
}

Structure read_structure(const std::filesystem::path& path, const ReadOptions& options) {
  if (options.model < 1)
    throw InputError(path.string(), 0,
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

}  // namespace detail
}  // namespace dcsgrid::io
