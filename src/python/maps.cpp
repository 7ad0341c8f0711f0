// Maps for Python: the buffer and its numpy view, save and load, sampling at points, comparison
// and similarity. Everything is done by the io and analysis layers; this file converts.
#include <cmath>
#include <string>

#include "bindings.hpp"
#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/analysis/compare.hpp"
#include "dcsgrid/analysis/ensemble.hpp"
#include "dcsgrid/analysis/interpolation.hpp"
#include "dcsgrid/analysis/similarity.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/units.hpp"

namespace dcsgrid::python {

namespace {

// The (nx, ny, nz) view indexed [i, j, k]: x fastest in memory, so Fortran-ordered strides.
py::array values_view(py::object self) {
  MapData& map = self.cast<MapData&>();
  const GridSpec& g = map.grid;
  const py::ssize_t f = sizeof(float);
  return py::array_t<float>({g.nx(), g.ny(), g.nz()}, {f, f * g.nx(), f * g.nx() * g.ny()},
                            map.data.data(), self);
}

// A map from an (nx, ny, nz) array on grid (copied into x-fastest order).
MapData map_from_array(const py::array& values, const GridSpec& grid, const py::dict& metadata) {
  using FArray = py::array_t<float, py::array::f_style | py::array::forcecast>;
  const FArray a = FArray::ensure(real_array(values, "values"));
  if (!a) {
    PyErr_Clear();
    throw py::value_error("values must be an array of numbers");
  }
  if (a.ndim() != 3 || a.shape(0) != grid.nx() || a.shape(1) != grid.ny() || a.shape(2) != grid.nz())
    throw py::value_error("values must have the grid's shape (" + std::to_string(grid.nx()) + ", " +
                          std::to_string(grid.ny()) + ", " + std::to_string(grid.nz()) + ")");
  MapData map;
  map.grid = grid;
  map.meta = metadata_from_dict(metadata);
  map.data.assign(a.data(), a.data() + a.size());
  return map;
}

MapData load_map(const std::string& path, const std::string& dataset, std::int64_t frame) {
  io::MapSelector selector;
  selector.dataset = dataset;
  if (frame >= 0) selector.frame = std::size_t(frame);
  return io::read_map(path, selector);  // every format the CLI reads
}

py::array_t<float> sample(const MapData& map, const py::object& points, const std::string& device) {
  const AtomSet set = points_from_array(points);
  std::vector<float> values;
  {
    py::gil_scoped_release release;
    const analysis::InterpolationMatrix matrix = analysis::trilinear_matrix(map.grid, set);
    values = analysis::interpolate(matrix, map.data.data(), device);
  }
  return py::array_t<float>(py::ssize_t(values.size()), values.data());
}

std::string compare(const MapData& reference, const MapData& test, const Atoms* atoms) {
  py::gil_scoped_release release;
  analysis::CompareReport report =
      analysis::compare_maps(reference, test, atoms ? &atoms->set : nullptr);
  return report.to_json().dump();
}

// Gram matrix, Hodgkin and Carbó indices and the clustered order of maps on one grid.
py::dict similarity(const std::vector<const MapData*>& maps, const std::string& device) {
  if (maps.size() < 2) throw Error("similarity: needs at least two maps, got " + std::to_string(maps.size()));
  const GridSpec& grid = maps.front()->grid;
  const std::size_t n = maps.size(), points = grid.point_count();
  std::vector<double> gram, hodgkin, carbo;
  std::vector<std::size_t> order;
  {
    py::gil_scoped_release release;
    std::vector<float> rows(n * points);
    for (std::size_t i = 0; i < n; ++i) {
      analysis::require_same_grid(grid, maps[i]->grid);
      if (maps[i]->meta.units != maps.front()->meta.units)
        throw Error("similarity: map " + std::to_string(i) + " is in " + maps[i]->meta.units +
                    ", map 0 in " + maps.front()->meta.units);
      std::copy(maps[i]->data.begin(), maps[i]->data.end(), rows.begin() + i * points);
    }
    gram = analysis::gram_matrix(rows.data(), n, points, device);
    std::vector<std::string> labels;
    for (std::size_t i = 0; i < n; ++i) labels.push_back(std::to_string(i));
    analysis::require_nonzero_maps(gram, labels);
    hodgkin = analysis::hodgkin_from_gram(gram, n);
    carbo = analysis::carbo_from_gram(gram, n);
    std::vector<double> distance(n * n);
    for (std::size_t i = 0; i < n * n; ++i) distance[i] = 1.0 - hodgkin[i];
    order = analysis::average_linkage_order(distance, n);
  }
  auto matrix = [n](const std::vector<double>& v) {
    return py::array_t<double>({py::ssize_t(n), py::ssize_t(n)}, v.data());
  };
  py::dict d;
  d["gram"] = matrix(gram);
  d["hodgkin"] = matrix(hodgkin);
  d["carbo"] = matrix(carbo);
  d["order"] = py::array_t<std::size_t>(py::ssize_t(n), order.data());
  return d;
}

}  // namespace

py::dict metadata_dict(const io::MapMetadata& meta) {
  py::dict d;
  io::for_each_field(meta, [&](const char* name, const auto& field) { d[name] = field; });
  d["parameters"] = meta.parameters;
  return d;
}

io::MapMetadata metadata_from_dict(const py::dict& d) {
  io::MapMetadata meta;
  io::for_each_field(meta, [&](const char* name, auto& field) {
    if (d.contains(name)) field = d[name].cast<std::decay_t<decltype(field)>>();
  });
  if (!meta.units.empty()) parse_unit(meta.units);  // Error naming the units the CLI knows
  if (d.contains("parameters"))
    meta.parameters = d["parameters"].cast<std::map<std::string, std::string>>();
  for (const auto& item : d) {
    const std::string key = item.first.cast<std::string>();
    bool known = key == "parameters";
    io::for_each_field(meta, [&](const char* name, auto&) { known = known || key == name; });
    if (!known) throw py::value_error("metadata: unknown field '" + key + "'");
  }
  return meta;
}

void bind_maps(py::module_& m) {
  py::class_<MapData>(m, "MapData")
      .def_static("from_array", &map_from_array, py::arg("values"), py::arg("grid"),
                  py::arg("metadata") = py::dict())
      .def_readonly("grid", &MapData::grid)
      .def_property_readonly("metadata", [](const MapData& map) { return metadata_dict(map.meta); })
      .def_property_readonly("values", &values_view);
  m.def("save_map",
        [](const MapData& map, const std::string& path, bool compress) {
          io::WriteOptions options;
          options.compress = compress;
          py::gil_scoped_release release;
          io::write_map(path, map.grid, map.data.data(), map.meta, options);
        },
        py::arg("map"), py::arg("path"), py::arg("compress") = false);
  m.def("load_map",
        [](const std::string& path, const std::string& dataset, std::int64_t frame) {
          py::gil_scoped_release release;
          return load_map(path, dataset, frame);
        },
        py::arg("path"), py::arg("dataset") = "potential", py::arg("frame") = -1);
  m.def("sample", &sample, py::arg("map"), py::arg("points"), py::arg("device") = "auto");
  m.def("compare", &compare, py::arg("reference"), py::arg("test"), py::arg("atoms") = nullptr);
  m.def("similarity", &similarity, py::arg("maps"), py::arg("device") = "auto");
  // The mean and spread of maps on one grid in float64 (analysis::EnsembleAccumulator, as batch's
  // --ensemble), for dcsgrid.average: maps are added one at a time and not kept.
  py::class_<analysis::EnsembleAccumulator>(m, "Ensemble")
      .def(py::init<std::size_t>(), py::arg("points"))
      .def("add",
           [](analysis::EnsembleAccumulator& e, const MapData& map) {
             if (map.data.size() != e.points())
               throw py::value_error("Ensemble.add: a map of " + std::to_string(map.data.size()) +
                                     " points, the ensemble's have " + std::to_string(e.points()));
             py::gil_scoped_release release;
             e.add(map.data.data());
           },
           py::arg("map"))
      .def_property_readonly("count", &analysis::EnsembleAccumulator::count)
      .def("mean", [](const analysis::EnsembleAccumulator& e, const MapData& like) {
        MapData out = like;
        out.data = e.mean();
        return out;
      }, py::arg("like"), "The mean map, on the grid and with the metadata of `like`")
      .def("stddev", [](const analysis::EnsembleAccumulator& e, const MapData& like) {
        MapData out = like;
        out.data = e.stddev();
        return out;
      }, py::arg("like"), "The population standard deviation map, on the grid and with the metadata of `like`");
}

}  // namespace dcsgrid::python
