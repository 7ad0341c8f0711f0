// surface() from Python: the molecular surface of a structure file, the potential at its vertices
// and the per-atom and per-residue tables, through app::compute_surface (as `dcsgrid surface`).
#include "bindings.hpp"
#include "dcsgrid/app/surface.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/structure/element_radii.hpp"

namespace dcsgrid::python {
namespace {

// A table's rows as a dict of equal-length lists and arrays.
py::dict table_columns(const std::vector<analysis::PatchRow>& rows, bool with_atom_names) {
  py::list chain, residue, number, name;
  std::vector<std::int64_t> atom, vertices;
  std::vector<double> area, mean, lo, hi;
  for (const analysis::PatchRow& r : rows) {
    chain.append(r.label.chain);
    residue.append(r.label.residue);
    number.append(r.label.residue_number);
    if (with_atom_names) name.append(r.label.name);
    atom.push_back(std::int64_t(r.atom));
    vertices.push_back(std::int64_t(r.vertices));
    area.push_back(r.area);
    mean.push_back(r.mean);
    lo.push_back(r.min);
    hi.push_back(r.max);
  }
  py::dict d;
  d["chain"] = chain;
  d["residue_name"] = residue;
  d["residue_number"] = number;
  if (with_atom_names) d["atom_name"] = name;
  d["atom"] = py::array_t<std::int64_t>(py::ssize_t(atom.size()), atom.data());
  d["vertices"] = py::array_t<std::int64_t>(py::ssize_t(vertices.size()), vertices.data());
  d["area"] = py::array_t<double>(py::ssize_t(area.size()), area.data());
  d["mean"] = py::array_t<double>(py::ssize_t(mean.size()), mean.data());
  d["min"] = py::array_t<double>(py::ssize_t(lo.size()), lo.data());
  d["max"] = py::array_t<double>(py::ssize_t(hi.size()), hi.data());
  return d;
}

template <typename T, std::size_t N>
py::array_t<T> rows_array(const std::vector<std::array<T, N>>& rows) {
  py::array_t<T> out({py::ssize_t(rows.size()), py::ssize_t(N)});
  if (!rows.empty()) std::copy_n(rows.front().data(), rows.size() * N, out.mutable_data());
  return out;
}

py::dict surface(const std::string& path, const MapData* map, const std::string& kind, double probe_radius,
                 double mesh_spacing, double grid_spacing, const app::ComputeSettings& settings,
                 const std::string& forcefield, int model, bool unknown_zero, const std::string& forcefield_dir) {
  const io::ReadOptions read = read_options(forcefield, model, unknown_zero, forcefield_dir);
  app::SurfaceRequest request;
  request.surface = {analysis::parse_surface_kind(kind), probe_radius, mesh_spacing};
  request.grid_spacing = grid_spacing;
  request.compute = settings;
  app::SurfaceResult r;
  {
    py::gil_scoped_release release;
    io::Structure structure = io::read_structure(path, read);
    io::fill_missing_radii(structure, path, read.format);
    r = app::compute_surface(structure, io::atom_labels(path, structure), request, map,
                             map ? "the map given" : "the computed map");
  }
  py::dict out;
  out["vertices"] = rows_array(r.mesh.vertices);
  out["normals"] = rows_array(r.mesh.normals);
  out["faces"] = rows_array(r.mesh.faces);
  out["potential"] = py::array_t<float>(py::ssize_t(r.mesh.value.size()), r.mesh.value.data());
  out["vertex_atom"] = py::array_t<std::uint32_t>(py::ssize_t(r.mesh.atom.size()), r.mesh.atom.data());
  out["area"] = r.table.area;
  out["atoms"] = table_columns(r.table.atoms, true);
  out["residues"] = table_columns(r.table.residues, false);
  return out;
}

}  // namespace

void bind_surface(py::module_& m) {
  m.def("surface", &surface, py::arg("path"), py::arg("map").none(true), py::arg("kind"), py::arg("probe_radius"),
        py::arg("mesh_spacing"), py::arg("grid_spacing"), py::arg("settings"), py::arg("forcefield"),
        py::arg("model"), py::arg("unknown_zero"), py::arg("forcefield_dir"));
  // surface()'s default medium, the command's (app/surface.hpp).
  m.attr("SURFACE_DIELECTRIC") = app::kSurfaceDielectric;
  m.attr("SURFACE_IONIC_STRENGTH") = app::kSurfaceIonicStrength;
}

}  // namespace dcsgrid::python
