// dcsgrid._core: the engine, io and analysis layers for Python (see bindings.hpp).
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "bindings.hpp"
#include "dcsgrid/core/error.hpp"

namespace dcsgrid::python {

void check_interrupt() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

// dcsgrid.Error (RuntimeError) for what a user can fix, and its subclass dcsgrid.InputError with
// the file, line (0: the file as a whole) and problem, carrying the CLI's messages.
void bind_errors(py::module_& m) {
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<InputError> input_error(m, "InputError", error.ptr());
  error.doc() = "A failure the user can fix: bad input, bad options, a full disk.";
  input_error.doc() =
      "A problem at a place in an input file: .file, .line (1-based; 0 for the file as a whole) "
      "and .problem.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      py::object instance = py::reinterpret_borrow<py::object>(input_error.ptr())(e.what());
      instance.attr("file") = e.file;
      instance.attr("line") = e.line;
      instance.attr("problem") = e.problem;
      PyErr_SetObject(input_error.ptr(), instance.ptr());
    } catch (const Error& e) {
      error(e.what());
    }
  });
}

}  // namespace dcsgrid::python

PYBIND11_MODULE(_core, m) {
  using namespace dcsgrid::python;
  m.doc() = "dcsgrid's compiled core; use the dcsgrid package, which documents it.";
  // A library's messages go to stderr, as the CLI's do (spdlog's default logger writes to stdout,
  // where a script's own output goes), and it stays quiet: warnings and errors only.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("dcsgrid"));
  spdlog::set_level(spdlog::level::warn);
  m.attr("version") = DCSGRID_VERSION;
  bind_errors(m);
  bind_atoms_grid(m);
  bind_maps(m);
  bind_compute(m);
  bind_surface(m);
}
