// The module dcsgrid._core: what its parts share. Each bind_* adds one group of names; the
// pure-Python package (python/dcsgrid) wraps them in documented classes and functions.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::python {

namespace py = pybind11;

// A map owned by the module (grid, metadata, data x fastest): numpy arrays of its values are views
// into its data, their base this object, so no map is copied on its way to Python.
using MapData = io::MapFile;

// An AtomSet as the module holds it, with what read_atoms learnt about it.
struct Atoms {
  AtomSet set;
  std::string source;         // file read, or "" for arrays
  std::string charge_source;  // "file", a force field, or "arrays"
  std::string radius_source;  // io::Structure's, "arrays", or "" without radii
};

void bind_errors(py::module_& m);
void bind_atoms_grid(py::module_& m);
void bind_maps(py::module_& m);
void bind_compute(py::module_& m);
void bind_surface(py::module_& m);
// How read_atoms and surface read a structure file: their keywords as io::ReadOptions.
io::ReadOptions read_options(const std::string& forcefield, int model, bool unknown_zero,
                             const std::string& forcefield_dir);

// A Python integer (int, numpy integer, bool) as int64; ValueError naming `what` for anything else
// (5.5, "5", complex) or an integer beyond 64 bits, where pybind11's conversion says only "Unable
// to cast". The bounds of the value itself are the caller's (the CLI's checks and messages).
std::int64_t whole_number(const py::handle& value, const std::string& what);
// A real Python number (float, int, numpy scalar) as a double; ValueError naming `what` otherwise
// (complex numbers included: their imaginary part would be dropped).
double real_number(const py::handle& value, const std::string& what);
// `values` as a numpy array of real numbers (integers or floats); ValueError naming `what` for
// complex, boolean, object or text arrays, which a cast to float32 would change or refuse.
py::array real_array(const py::object& values, const std::string& what);

// (N, 3) positions, (N,) charges and optionally (N,) radii (None: none; any real dtype; copied to
// float32, so non-contiguous input is fine) as an AtomSet. Throws ValueError naming the problem:
// shape, length mismatch, NaN or inf, a negative radius.
AtomSet atoms_from_arrays(const py::object& positions, const py::object& charges,
                          const py::object& radii = py::none());
// (N, 3) points, checked alike, as an AtomSet with zero charges.
AtomSet points_from_array(const py::object& positions);
// The same positions with the charges of `like` (a trajectory frame).
AtomSet with_positions(const AtomSet& like, const py::object& positions);

// Raises KeyboardInterrupt (as py::error_already_set) when Ctrl-C was pressed; takes the GIL for
// the check, so it may be called from code running without it.
void check_interrupt();

// MapMetadata <-> dict, every field under its own name (io::for_each_field) plus "parameters".
py::dict metadata_dict(const io::MapMetadata& meta);
// None, "A,B,C[,ALPHA,BETA,GAMMA]", or a sequence of 3 or 6 numbers, as --cell takes it.
std::optional<UnitCell> unit_cell(const py::object& cell);
io::MapMetadata metadata_from_dict(const py::dict& d);

}  // namespace dcsgrid::python
