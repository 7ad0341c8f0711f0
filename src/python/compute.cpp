// Computing from Python: settings from keywords, potential() and the frames loop, all through the
// app layer (app/compute.hpp), with the GIL released while the engine runs and Ctrl-C checked.
#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "bindings.hpp"
#include "dcsgrid/app/compute.hpp"
#include "dcsgrid/app/pb_settings.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/gpu_ids.hpp"
#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::python {

namespace {

// Checks for Ctrl-C after every slab; the exception it raises stops the run (compute_map).
class InterruptObserver final : public app::Observer {
 public:
  void progress(double) override { check_interrupt(); }
};

std::string gpu_key(const std::vector<int>& gpus) {
  std::string key;
  for (const int g : gpus) key += std::to_string(g) + ",";
  return key;
}

// One started backend per device choice, kept for the session: a GPU's context and warm-up cost
// about 0.1 s, more than a small map. Never destroyed (left to process exit), because destructors
// of statics may run after the CUDA runtime has shut down.
std::shared_ptr<engine::Backend> backend_for(const app::ComputeSettings& settings) {
  static std::mutex mutex;
  static auto* cache = new std::map<std::string, std::shared_ptr<engine::Backend>>();
  const std::string key = settings.device + "|" + gpu_key(settings.gpus);
  std::lock_guard lock(mutex);
  auto& backend = (*cache)[key];
  if (!backend) {
    app::ComputeSettings start = settings;
    start.methods = {engine::Method::direct};  // the run checks its own method and options
    start.pb.solvation = false;                 // pb's alone, refused beside direct
    backend = app::start_backend(start);
  }
  return backend;
}

std::vector<int> gpu_list(const py::object& gpus) {
  if (gpus.is_none()) return {};
  if (py::isinstance<py::str>(gpus)) return app::parse_gpu_list(gpus.cast<std::string>());
  std::vector<int> ids = gpus.cast<std::vector<int>>();
  require_valid_gpu_ids(ids);
  return ids;
}


// None or an optional text keyword as the command line's text ("" where not given).
std::string optional_text(const py::handle& value, const std::string& what) {
  if (value.is_none()) return "";
  if (!py::isinstance<py::str>(value)) throw py::value_error(what + " must be a string or None");
  return value.cast<std::string>();
}

// ions=[(charge, conc, radius), ...] as --ion's species; None: none (the ionic strength's 1:1 salt).
std::vector<engine::PbIon> pb_ions(const py::handle& ions) {
  std::vector<engine::PbIon> out;
  if (ions.is_none()) return out;
  for (const py::handle ion : ions) {
    if (!py::isinstance<py::sequence>(ion) || py::len(ion) != 3)
      throw py::value_error("ions: each ion is (charge, conc, radius) in e, mol/L and Å, not " +
                            std::string(py::repr(ion)));
    const py::sequence v = py::reinterpret_borrow<py::sequence>(ion);
    out.push_back({real_number(v[0], "ions"), real_number(v[1], "ions"), real_number(v[2], "ions")});
  }
  return out;
}

// The pb keywords (a dict under the command line's option names, snake_case) into the settings,
// through the app layer's parsers, as ComputeOptions::settings() does for the command line.
void set_pb_options(engine::PbOptions& pb, const py::dict& o) {
  pb.sdie = real_number(o["solvent_dielectric"], "solvent_dielectric");
  pb.ions = pb_ions(o["ions"]);
  pb.ion_radius = real_number(o["ion_radius"], "ion_radius");
  pb.srad = real_number(o["probe_radius"], "probe_radius");
  if (const std::string surface = optional_text(o["surface"], "surface"); !surface.empty())
    pb.srfm = app::parse_surface(surface);
  if (const std::string charge_map = optional_text(o["charge_map"], "charge_map"); !charge_map.empty())
    pb.chgm = app::parse_charge_map(charge_map);
  pb.sdens = real_number(o["surface_density"], "surface_density");
  pb.swin = real_number(o["spline_window"], "spline_window");
  pb.nonlinear = py::bool_(o["nonlinear"]);
  pb.tolerance = real_number(o["pb_tolerance"], "pb_tolerance");
  pb.solvation = py::bool_(o["solvation"]);
  std::vector<double> coarse_size;
  if (!o["coarse_size"].is_none()) {
    for (const py::handle length : o["coarse_size"]) coarse_size.push_back(real_number(length, "coarse_size"));
    if (coarse_size.empty()) throw py::value_error("coarse_size must be None or 3 lengths (Å)");
  }
  app::set_focusing(pb, optional_text(o["boundary"], "boundary"),
                    optional_text(o["coarse_boundary"], "coarse_boundary"), coarse_size);
}

// preset (None or a name) applied to the physics keywords the caller did not give (`given`: the
// names of those it gave), as --preset on the command line.
void set_preset(app::ComputeSettings& s, const py::object& preset, const std::vector<std::string>& given,
                std::string& units) {
  const std::string name = optional_text(preset, "preset");
  if (name.empty()) return;
  const auto was_given = [&](const char* keyword) { return std::ranges::find(given, keyword) != given.end(); };
  const app::PresetGiven g{.dielectric = was_given("dielectric") || was_given("distance_dependent"),
                           .temperature = was_given("temperature"),
                           .ionic_strength = was_given("ionic_strength"),
                           .units = was_given("units")};
  app::apply_preset(app::find_preset(name), g, s.physics, units);
}

app::ComputeSettings make_settings(const std::string& method, const std::string& device,
                                   const py::object& gpus, const py::object& threads,
                                   std::string units,
                                   double dielectric, bool distance_dependent, double ionic_strength,
                                   double temperature, double min_distance, double cutoff,
                                   const std::string& cutoff_form, double switch_start,
                                   const py::object& cell, int pme_order, double pme_spacing,
                                   double pme_tolerance, double pme_cutoff, double smooth,
                                   const py::dict& pb, const py::object& preset,
                                   const std::vector<std::string>& given) {
  app::ComputeSettings s;
  s.methods = app::parse_method_list(method);
  s.device = device;
  s.gpus = gpu_list(gpus);
  const std::int64_t asked = whole_number(threads, "threads");
  if (asked < 0)
    throw Error("threads must be 0 (all cores) or a positive count, got " + std::to_string(asked));
  s.threads = asked > 0 ? bounded_threads(asked, "threads =") : 0;
  s.physics.dielectric = dielectric;
  s.physics.distance_dependent = distance_dependent;
  s.physics.ionic_strength = ionic_strength;
  s.physics.temperature = temperature;
  s.physics.min_distance = min_distance;
  set_preset(s, preset, given, units);
  s.physics.unit = parse_unit(units);
  s.cutoff.radius = cutoff;
  s.cutoff.form = engine::parse_cutoff_form(cutoff_form);
  s.cutoff.switch_start = switch_start;
  s.cell = unit_cell(cell);
  s.periodic.pme_order = pme_order;
  s.periodic.mesh_spacing = pme_spacing;
  s.periodic.tolerance = pme_tolerance;
  s.periodic.real_cutoff = pme_cutoff;
  s.periodic.smooth_beta = smooth;
  set_pb_options(s.pb, pb);
  app::validate(s);
  return s;
}

// The grid a run takes when none is given: one period of the cell for a periodic method (the
// command line's default; cell=, else the first frame's box), else the atoms' box grown by padding.
GridSpec default_grid(const Atoms& atoms, const app::ComputeSettings& s, double spacing, double padding,
                      const py::object& first_frame_cell) {
  app::GridChoice g;
  g.spacing = spacing;
  g.padding = padding;
  if (app::is_periodic(s.methods)) {
    const std::optional<UnitCell> cell = s.cell ? s.cell : unit_cell(first_frame_cell);
    if (!cell)
      throw Error("method " + app::method_list_name(s.methods) +
                  " computes a periodic potential and needs a unit cell: cell=(A, B, C[, ALPHA, BETA, GAMMA]) "
                  "in Å and degrees, or frames that carry their box");
    return g.resolve(*cell);
  }
  return g.resolve(bounding_box(atoms.set));
}

// The defaults of every keyword above and of the grid (the Python signatures are checked against
// these by the tests).
py::dict default_settings() {
  const app::ComputeSettings s;
  const app::GridChoice g;
  py::dict d;
  d["method"] = app::method_list_name(s.methods);
  d["device"] = s.device;
  d["threads"] = s.threads;
  d["units"] = unit_name(s.physics.unit);
  d["dielectric"] = s.physics.dielectric;
  d["distance_dependent"] = s.physics.distance_dependent;
  d["ionic_strength"] = s.physics.ionic_strength;
  d["temperature"] = s.physics.temperature;
  d["min_distance"] = s.physics.min_distance;
  d["cutoff"] = s.cutoff.radius;
  d["cutoff_form"] = engine::cutoff_form_name(s.cutoff.form);
  d["switch_start"] = s.cutoff.switch_start;
  d["cell"] = py::none();
  d["pme_order"] = s.periodic.pme_order;
  d["pme_spacing"] = s.periodic.mesh_spacing;
  d["pme_tolerance"] = s.periodic.tolerance;
  d["pme_cutoff"] = s.periodic.real_cutoff;
  d["smooth"] = s.periodic.smooth_beta;
  d["preset"] = py::none();
  d["solvent_dielectric"] = s.pb.sdie;
  d["ions"] = py::none();
  d["ion_radius"] = s.pb.ion_radius;
  d["probe_radius"] = s.pb.srad;
  d["surface"] = engine::keyword(s.pb.srfm);
  d["charge_map"] = engine::keyword(s.pb.chgm);
  d["boundary"] = py::none();
  d["coarse_boundary"] = py::none();
  d["coarse_size"] = py::none();
  d["surface_density"] = s.pb.sdens;
  d["spline_window"] = s.pb.swin;
  d["nonlinear"] = s.pb.nonlinear;
  d["pb_tolerance"] = s.pb.tolerance;
  d["solvation"] = s.pb.solvation;
  d["spacing"] = g.spacing;
  d["padding"] = g.padding;
  return d;
}

io::MapMetadata metadata_for(const app::ComputeSettings& s, engine::Method method, const Atoms& atoms) {
  io::MapMetadata meta = app::map_metadata(s, method);
  meta.atom_count = atoms.set.size();
  meta.total_charge = atoms.set.total_charge();
  meta.input_file = atoms.source;
  return meta;
}

py::array_t<double> double_array(const std::vector<double>& v) {
  return py::array_t<double>(py::ssize_t(v.size()), v.data());
}

// An iterative method's report (engine/solver_report.hpp) as a dict under its fields' names.
py::dict solver_dict(const engine::SolverReport& r) {
  py::dict d;
  d["method"] = r.method;
  d["energy_kt"] = r.energy_kt;
  d["energy_kj_per_mol"] = r.energy_kj_per_mol;
  d["solvation_kt"] = r.solvation_kt ? py::cast(*r.solvation_kt) : py::none();
  d["solvation_kj_per_mol"] = r.solvation_kj_per_mol ? py::cast(*r.solvation_kj_per_mol) : py::none();
  d["iterations"] = r.iterations;
  d["residual_history"] = double_array(r.residual_history);
  py::list levels;
  for (const engine::SolverLevel& l : r.levels) {
    py::dict level;
    level["grid"] = l.grid;
    level["boundary"] = l.boundary;
    level["reference"] = l.reference;
    level["iterations"] = l.iterations;
    level["residual_history"] = double_array(l.residual_history);
    levels.append(level);
  }
  d["levels"] = levels;
  return d;
}

// Each method's map, in the order given, as (name, map, solver report or None).
py::list potential(const Atoms& atoms, const GridSpec& grid, const app::ComputeSettings& settings) {
  py::list maps;
  std::shared_ptr<engine::Backend> backend;
  {
    py::gil_scoped_release release;
    backend = backend_for(settings);
  }
  for (const engine::Method method : settings.methods) {
    auto map = std::make_unique<MapData>();
    map->grid = grid;
    map->meta = metadata_for(settings, method, atoms);
    engine::RunStats stats;
    {
      py::gil_scoped_release release;
      require_host_memory(grid);
      // The buffer is zero-filled (std::vector) on another thread while the backend sets up and
      // computes the first slab: on a 256^3 grid that pass costs a few percent of a GPU run.
      std::future<void> allocated =
          std::async(std::launch::async, [&] { map->data.resize(grid.point_count()); });
      const std::size_t plane = grid.plane_size();
      InterruptObserver observer;
      stats = app::compute_map(
          *backend, atoms.set, grid, settings, method,
          [&](engine::Slab slab, const float* data) {
            if (allocated.valid()) allocated.get();
            std::copy(data, data + plane * slab.planes(), map->data.data() + plane * slab.z_begin);
          },
          observer);
    }
    maps.append(py::make_tuple(engine::method_name(method), py::cast(std::move(map)),
                               stats.solver ? py::object(solver_dict(*stats.solver)) : py::none()));
  }
  return maps;
}

// app::FrameMaps with the charges of the system, so each frame brings positions only.
struct Frames {
  std::unique_ptr<app::FrameMaps> maps;
  Atoms atoms;
  io::MapMetadata meta;
};

std::unique_ptr<Frames> make_frames(const Atoms& atoms, const GridSpec& grid,
                                    const app::ComputeSettings& settings, const std::string& path,
                                    std::size_t frames, const std::string& source, bool overwrite,
                                    bool stats, bool ensemble, bool keep_maps, std::size_t depth) {
  auto f = std::make_unique<Frames>();
  f->atoms = atoms;
  f->meta = metadata_for(settings, settings.methods.front(), atoms);
  f->meta.input_file = source;
  const app::FrameFile file{.path = path,
                            .frames = frames,
                            .source = source,
                            .overwrite = overwrite,
                            .stats = stats,
                            .histogram = {},
                            .ensemble = ensemble,
                            .command_line = "dcsgrid.potentials (Python)"};
  py::gil_scoped_release release;
  f->maps = std::make_unique<app::FrameMaps>(backend_for(settings), settings, grid, file, keep_maps, depth);
  return f;
}

py::dict summary_dict(const app::FramesSummary& s) {
  py::dict d;
  d["frames"] = s.frames;
  d["seconds"] = s.seconds;
  d["compute_seconds"] = s.compute_seconds;
  d["write_seconds"] = s.write_seconds;
  d["frames_per_second"] = s.frames_per_second;
  d["device"] = s.device;
  return d;
}

void bind_frames(py::module_& m) {
  py::class_<Frames>(m, "FrameMaps")
      .def(py::init(&make_frames), py::arg("atoms"), py::arg("grid"), py::arg("settings"),
           py::arg("path"), py::arg("frames"), py::arg("source"), py::arg("overwrite"),
           py::arg("stats"), py::arg("ensemble"), py::arg("keep_maps"), py::arg("depth"))
      .def("submit",
           [](Frames& f, const py::object& positions, const py::object& cell) {
             AtomSet frame = with_positions(f.atoms.set, positions);
             std::optional<UnitCell> frame_cell = unit_cell(cell);
             py::gil_scoped_release release;
             f.maps->submit(std::move(frame), std::move(frame_cell), check_interrupt);
           },
           py::arg("positions"), py::arg("cell") = py::none())
      .def("next",
           [](Frames& f) -> py::object {
             std::optional<app::FrameMap> frame;
             {
               py::gil_scoped_release release;
               frame = f.maps->next(check_interrupt);
             }
             if (!frame) return py::none();
             auto map = std::make_unique<MapData>(MapData{f.maps->grid(), f.meta, std::move(frame->data)});
             const auto& solver = frame->stats.solver;
             return py::make_tuple(py::cast(std::move(map)),
                                   solver ? py::object(solver_dict(*solver)) : py::none());
           })
      .def("finish", [](Frames& f) {
        app::FramesSummary s;
        {
          py::gil_scoped_release release;
          s = f.maps->finish(check_interrupt);
        }
        return summary_dict(s);
      });
}

}  // namespace

void bind_compute(py::module_& m) {
  py::class_<app::ComputeSettings>(m, "Settings")
      .def_property_readonly("methods", [](const app::ComputeSettings& s) {
        std::vector<std::string> names;
        for (const auto method : s.methods) names.push_back(engine::method_name(method));
        return names;
      })
      .def_property_readonly("periodic", [](const app::ComputeSettings& s) { return app::is_periodic(s.methods); })
      .def_property_readonly("has_cell", [](const app::ComputeSettings& s) { return s.cell.has_value(); });
  m.def("make_settings", &make_settings, py::kw_only(), py::arg("method"), py::arg("device"),
        py::arg("gpus"), py::arg("threads"), py::arg("units"), py::arg("dielectric"),
        py::arg("distance_dependent"), py::arg("ionic_strength"), py::arg("temperature"),
        py::arg("min_distance"), py::arg("cutoff"), py::arg("cutoff_form"), py::arg("switch_start"),
        py::arg("cell"), py::arg("pme_order"), py::arg("pme_spacing"), py::arg("pme_tolerance"),
        py::arg("pme_cutoff"), py::arg("smooth"), py::arg("pb"), py::arg("preset"), py::arg("given"));
  m.def("default_grid", &default_grid, py::arg("atoms"), py::arg("settings"), py::arg("spacing"),
        py::arg("padding"), py::arg("first_frame_cell") = py::none());
  m.def("default_settings", &default_settings);
  m.def("potential", &potential, py::arg("atoms"), py::arg("grid"), py::arg("settings"));
  m.def("gpu_available", &engine::gpu_available);
  bind_frames(m);
}

}  // namespace dcsgrid::python
