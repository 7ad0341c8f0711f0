// Atoms (from arrays or read_atoms) and Grid for Python.
#include <algorithm>
#include <cmath>
#include <string>

#include "bindings.hpp"
#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::python {

namespace {

using Array = py::array_t<float, py::array::c_style | py::array::forcecast>;

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// The array as float32 (a copy when it is not already C-contiguous float32), checked to be finite.
Array finite_array(const py::object& object, const char* what) {
  Array a = Array::ensure(real_array(object, what));
  if (!a) {
    PyErr_Clear();
    throw py::value_error(std::string(what) + " must be an array of numbers");
  }
  const float* p = a.data();
  for (py::ssize_t i = 0; i < a.size(); ++i)
    if (!std::isfinite(p[i]))
      throw py::value_error(std::string(what) + " holds NaN or inf (flat index " + std::to_string(i) + ")");
  return a;
}

Array positions_array(const py::object& positions) {
  Array a = finite_array(positions, "positions");
  if (a.ndim() != 2 || a.shape(1) != 3)
    throw py::value_error("positions must have shape (N, 3), not " + shape_text(a));
  if (a.shape(0) == 0) throw py::value_error("positions: no atoms");
  return a;
}

std::array<double, 3> triple(const py::object& value, const char* what) {
  if (!py::isinstance<py::sequence>(value) && !py::isinstance<py::array>(value)) {
    const double v = real_number(value, what);
    return {v, v, v};
  }
  const py::sequence items = py::reinterpret_borrow<py::sequence>(value);
  if (py::len(items) != 3)
    throw py::value_error(std::string(what) + " must be a number or 3 numbers");
  return {real_number(items[0], what), real_number(items[1], what), real_number(items[2], what)};
}

py::array_t<float> positions_of(const AtomSet& set) {
  py::array_t<float> out({py::ssize_t(set.size()), py::ssize_t(3)});
  auto r = out.mutable_unchecked<2>();
  for (std::size_t i = 0; i < set.size(); ++i) {
    r(i, 0) = set.x[i];
    r(i, 1) = set.y[i];
    r(i, 2) = set.z[i];
  }
  return out;
}

GridSpec make_grid(const py::object& origin, const py::object& spacing, const py::object& dims) {
  GridSpec g;
  g.origin = triple(origin, "origin");
  g.spacing = triple(spacing, "spacing");
  if (!py::isinstance<py::sequence>(dims) || py::len(dims) != 3)
    throw py::value_error("dims must be 3 point counts (nx, ny, nz)");
  const py::sequence d = py::reinterpret_borrow<py::sequence>(dims);
  g.dims = {whole_number(d[0], "dims"), whole_number(d[1], "dims"), whole_number(d[2], "dims")};
  validate(g);
  return g;
}

}  // namespace

// None, "A,B,C[,ALPHA,BETA,GAMMA]", or a sequence of 3 lengths (Å) or 3 lengths and 3 angles
// (degrees), as --cell takes it.
std::optional<UnitCell> unit_cell(const py::object& cell) {
  if (cell.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(cell)) return parse_cell(cell.cast<std::string>());
  std::vector<double> v;
  try {
    for (const py::handle item : cell) v.push_back(item.cast<double>());
  } catch (const py::cast_error&) {
    throw py::value_error("cell must be None, 'A,B,C[,ALPHA,BETA,GAMMA]' or a sequence of 3 or 6 numbers");
  }
  if (v.size() != 3 && v.size() != 6)
    throw py::value_error("cell must hold 3 lengths (Å) or 3 lengths and 3 angles (degrees), got " +
                          std::to_string(v.size()) + " numbers");
  return make_cell({v[0], v[1], v[2]}, v.size() == 6 ? Vec3{v[3], v[4], v[5]} : Vec3{90, 90, 90});
}

namespace {

py::tuple coordinates(const GridSpec& g) {
  if (!g.orthogonal())
    throw py::value_error("a skewed grid (a cell's lattice) has no x, y and z planes: point (i, j, k) lies at "
                          "origin + i·axes[0] + j·axes[1] + k·axes[2]");
  py::list axes;
  for (int a = 0; a < 3; ++a) {
    py::array_t<double> axis(g.dims[a]);
    auto r = axis.mutable_unchecked<1>();
    for (std::int64_t i = 0; i < g.dims[a]; ++i) {
      std::array<std::int64_t, 3> ijk{0, 0, 0};
      ijk[a] = i;
      r(i) = g.position(ijk[0], ijk[1], ijk[2])[a];
    }
    axes.append(axis);
  }
  return py::tuple(axes);
}

// Atoms, an MDAnalysis AtomGroup (.positions) or Universe (.atoms), or an (N, 3) array, as points.
AtomSet positions_of_any(const py::object& atoms) {
  if (py::isinstance<Atoms>(atoms)) return atoms.cast<const Atoms&>().set;
  if (py::hasattr(atoms, "positions")) return points_from_array(atoms.attr("positions"));
  if (py::hasattr(atoms, "atoms")) return points_from_array(atoms.attr("atoms").attr("positions"));
  return points_from_array(atoms);
}

}  // namespace

std::int64_t whole_number(const py::handle& value, const std::string& what) {
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) {
    PyErr_Clear();
    throw py::value_error(what + " must be a whole number, not " + std::string(py::repr(value)));
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0)
    throw py::value_error(what + ": " + std::string(py::str(index)) + " is beyond 64 bits");
  return v;
}

double real_number(const py::handle& value, const std::string& what) {
  if (!PyComplex_Check(value.ptr()) && !py::isinstance<py::str>(value)) {
    const double v = PyFloat_AsDouble(value.ptr());
    if (!(v == -1.0 && PyErr_Occurred())) return v;
    PyErr_Clear();
  }
  throw py::value_error(what + " must be real numbers, not " + std::string(py::repr(value)));
}

py::array real_array(const py::object& values, const std::string& what) {
  py::array a = py::array::ensure(values);
  if (!a) {
    PyErr_Clear();
    throw py::value_error(what + " must be an array of numbers");
  }
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u' && kind != 'f')
    throw py::value_error(what + " must be real numbers, not an array of " +
                          std::string(py::str(a.dtype())));
  return a;
}

// One value per atom: an (N,) array of n values, checked finite.
Array per_atom(const py::object& values, const char* what, py::ssize_t n) {
  const Array a = finite_array(values, what);
  if (a.ndim() != 1) throw py::value_error(std::string(what) + " must have shape (N,), not " + shape_text(a));
  if (a.shape(0) != n)
    throw py::value_error("positions hold " + std::to_string(n) + " atoms but " + what + " " +
                          std::to_string(a.shape(0)));
  return a;
}

AtomSet atoms_from_arrays(const py::object& positions, const py::object& charges, const py::object& radii) {
  const Array p = positions_array(positions);
  const Array q = per_atom(charges, "charges", p.shape(0));
  AtomSet set;
  set.reserve(std::size_t(p.shape(0)));
  const auto r = p.unchecked<2>();
  const float* c = q.data();
  for (py::ssize_t i = 0; i < p.shape(0); ++i) set.push_back(r(i, 0), r(i, 1), r(i, 2), c[i]);
  if (radii.is_none()) return set;
  const Array a = per_atom(radii, "radii", p.shape(0));
  if (const float* bad = std::find_if(a.data(), a.data() + a.size(), [](float v) { return v < 0; });
      bad != a.data() + a.size())
    throw py::value_error("radii: atom " + std::to_string(bad - a.data() + 1) + " has a negative radius (" +
                          std::to_string(*bad) + " Å)");
  set.r.assign(a.data(), a.data() + a.size());
  return set;
}

AtomSet points_from_array(const py::object& positions) {
  const Array p = positions_array(positions);
  AtomSet set;
  set.reserve(std::size_t(p.shape(0)));
  const auto r = p.unchecked<2>();
  for (py::ssize_t i = 0; i < p.shape(0); ++i) set.push_back(r(i, 0), r(i, 1), r(i, 2), 0.0);
  return set;
}

AtomSet with_positions(const AtomSet& like, const py::object& positions) {
  const Array p = positions_array(positions);
  if (std::size_t(p.shape(0)) != like.size())
    throw py::value_error("a frame holds " + std::to_string(p.shape(0)) + " positions but the atoms " +
                          std::to_string(like.size()));
  AtomSet set = like;
  const auto r = p.unchecked<2>();
  for (py::ssize_t i = 0; i < p.shape(0); ++i) {
    set.x[i] = r(i, 0);
    set.y[i] = r(i, 1);
    set.z[i] = r(i, 2);
  }
  return set;
}

namespace {

void bind_atoms(py::module_& m) {
  py::class_<Atoms>(m, "Atoms", R"(Atoms with charges: positions (N, 3) in Å, charges (N,) in e, and
optionally radii (N,) in Å (what --method pb needs).

Atoms(positions, charges, radii=None) takes any real arrays (copied to float32, so non-contiguous
input is fine; MDAnalysis' u.atoms.positions, .charges and .radii work as they are); ValueError for
a wrong shape, mismatched lengths, NaN or inf, or a negative radius. dcsgrid.read_atoms(path) reads
them from a file (radii: PQR's column, or the force field's for PDB/mmCIF). .positions, .charges
and .radii (None without radii) are float32 copies; .radius_source says where the radii came from.)")
      .def(py::init([](const py::object& positions, const py::object& charges, const py::object& radii) {
             return Atoms{atoms_from_arrays(positions, charges, radii), "", "arrays", radii.is_none() ? "" : "arrays"};
           }),
           py::arg("positions"), py::arg("charges"), py::arg("radii") = py::none())
      .def("__len__", [](const Atoms& a) { return a.set.size(); })
      .def_property_readonly("positions", [](const Atoms& a) { return positions_of(a.set); })
      .def_property_readonly("charges", [](const Atoms& a) {
        return py::array_t<float>(py::ssize_t(a.set.size()), a.set.q.data());
      })
      .def_property_readonly("radii", [](const Atoms& a) -> py::object {
        if (!a.set.has_radii()) return py::none();
        return py::array_t<float>(py::ssize_t(a.set.size()), a.set.r.data());
      })
      .def_property_readonly("total_charge", [](const Atoms& a) { return a.set.total_charge(); })
      .def_readonly("source", &Atoms::source)
      .def_readonly("charge_source", &Atoms::charge_source)
      .def_readonly("radius_source", &Atoms::radius_source)
      .def("with_positions", [](const Atoms& a, const py::object& positions) {
        return Atoms{with_positions(a.set, positions), a.source, a.charge_source, a.radius_source};
      })
      .def("__repr__", [](const Atoms& a) {
        return "<dcsgrid.Atoms " + std::to_string(a.set.size()) + " atoms, charges from " + a.charge_source +
               (a.set.has_radii() ? ", radii from " + a.radius_source : "") +
               (a.source.empty() ? "" : ", " + a.source) + ">";
      });

  m.def("read_atoms",
        [](const std::string& path, const std::string& forcefield, int model, bool unknown_zero,
           const std::string& forcefield_dir) {
          const io::ReadOptions options = read_options(forcefield, model, unknown_zero, forcefield_dir);
          py::gil_scoped_release release;
          io::Structure s = io::read_structure(path, options);
          return Atoms{std::move(s.atoms), path, s.charge_source, s.radius_source};
        },
        py::arg("path"), py::arg("forcefield"), py::arg("model"), py::arg("unknown_zero"),
        py::arg("forcefield_dir"));
}

void bind_grid(py::module_& m) {
  const app::GridChoice defaults;
  py::class_<GridSpec>(m, "Grid", R"(A regular grid: point (i, j, k) lies at origin + (i, j, k) * spacing, Å.

Grid(origin, spacing, dims): spacing one number or three, dims the point counts (nx, ny, nz).
Grid.around(atoms, padding, spacing): the atoms' box grown by padding on every side, centred.
Grid.box(center, size, spacing): a box of edge lengths size centred on center (AutoGrid-style).
Grid.on_cell(cell, spacing): a unit cell's own lattice (--grid cell), skewed for a triclinic cell:
point (i, j, k) at origin + i·axes[0] + j·axes[1] + k·axes[2].
.coordinates() gives the x, y and z of the planes (orthogonal grids); .shape is (nx, ny, nz), the
shape of a map's values.)")
      .def(py::init(&make_grid), py::arg("origin"), py::arg("spacing"), py::arg("dims"))
      .def_static("around",
                  [](const py::object& atoms, double padding, double spacing) {
                    return grid_around(bounding_box(positions_of_any(atoms)), spacing, padding);
                  },
                  py::arg("atoms"), py::arg("padding") = defaults.padding,
                  py::arg("spacing") = defaults.spacing,
                  "The box of atoms (Atoms, an MDAnalysis AtomGroup or Universe, or an (N, 3) "
                  "array) grown by padding (Å) on every side, at spacing (Å), centred.")
      .def_static("box",
                  [](const py::object& center, const py::object& size, double spacing) {
                    GridSpec g = grid_centered(triple(center, "center"), triple(size, "size"), spacing);
                    validate(g);
                    return g;
                  },
                  py::arg("center"), py::arg("size"), py::arg("spacing") = defaults.spacing,
                  "A box of edge lengths size (Å; one number or three) centred on center.")
      .def_static("on_cell",
                  [](const py::object& cell, double spacing) {
                    const std::optional<UnitCell> c = unit_cell(cell);
                    if (!c) throw py::value_error("on_cell needs a cell: (A, B, C[, ALPHA, BETA, GAMMA])");
                    return grid_on_cell(*c, spacing);
                  },
                  py::arg("cell"), py::arg("spacing") = defaults.spacing,
                  "The cell's own lattice: ⌈length/spacing⌉ points along each cell vector, one period "
                  "(cell as --cell takes it: 'A,B,C[,ALPHA,BETA,GAMMA]' or 3 or 6 numbers).")
      .def_property_readonly("origin", [](const GridSpec& g) { return g.origin; })
      .def_property_readonly("axes", [](const GridSpec& g) { return g.steps(); },
                             "The steps between neighbouring points along i, j and k (rows, Å).")
      .def_property_readonly("orthogonal", &GridSpec::orthogonal)
      .def_property_readonly("spacing", [](const GridSpec& g) { return g.spacing; })
      .def_property_readonly("dims", [](const GridSpec& g) { return g.dims; })
      .def_property_readonly("shape", [](const GridSpec& g) { return py::make_tuple(g.nx(), g.ny(), g.nz()); })
      .def_property_readonly("size", &GridSpec::point_count)
      .def("coordinates", &coordinates)
      .def("same_as", &GridSpec::same_as, py::arg("other"), py::arg("tolerance") = 1e-6)
      .def("__eq__",
           [](const GridSpec& a, const py::object& b) -> py::object {
             if (!py::isinstance<GridSpec>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a.same_as(b.cast<const GridSpec&>()));
           })
      .def("__repr__", [](const GridSpec& g) { return "Grid(" + g.describe() + ")"; });
}

}  // namespace

io::ReadOptions read_options(const std::string& forcefield, int model, bool unknown_zero,
                             const std::string& forcefield_dir) {
  io::ReadOptions options;
  options.forcefield = forcefield;
  options.model = model;
  options.unknown_zero = unknown_zero;
  options.forcefield_dir = forcefield_dir;
  return options;
}

void bind_atoms_grid(py::module_& m) {
  bind_atoms(m);
  bind_grid(m);
}

}  // namespace dcsgrid::python
