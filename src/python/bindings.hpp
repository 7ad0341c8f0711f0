// The module dcsgrid._core: what its parts share. Each bind_* adds one group of names; the
// pure-Python package (python/dcsgrid) wraps them in documented classes and functions.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <vector>

#include "dcsgrid/core/atoms.hpp"
#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/map_io.hpp"

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
};

void bind_errors(py::module_& m);
void bind_atoms_grid(py::module_& m);
void bind_maps(py::module_& m);
void bind_compute(py::module_& m);

// (N, 3) positions and (N,) charges (any real dtype; copied to float32, so non-contiguous input is
// fine) as an AtomSet. Throws ValueError naming the problem: shape, length mismatch, NaN or inf.
AtomSet atoms_from_arrays(const py::object& positions, const py::object& charges);
// (N, 3) points, checked alike, as an AtomSet with zero charges.
AtomSet points_from_array(const py::object& positions);
// The same positions with the charges of `like` (a trajectory frame).
AtomSet with_positions(const AtomSet& like, const py::object& positions);

// Raises KeyboardInterrupt (as py::error_already_set) when Ctrl-C was pressed; takes the GIL for
// the check, so it may be called from code running without it.
void check_interrupt();

// MapMetadata <-> dict, every field under its own name (io::for_each_field) plus "parameters".
py::dict metadata_dict(const io::MapMetadata& meta);
io::MapMetadata metadata_from_dict(const py::dict& d);

}  // namespace dcsgrid::python
