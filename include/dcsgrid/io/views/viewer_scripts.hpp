// Scripts for PyMOL (.pml) and ChimeraX (.cxc) that open a structure and its potential map, build
// the program's own molecular surface and colour it by the map with dcsgrid's ramp (red −range,
// white 0, blue +range; analysis/colour_ramp.hpp), so that a user turns the molecule in the program
// they know and sees what dcsgrid's picture shows.
//
// Maps: both programs read OpenDX (.dx), CCP4/MRC (.ccp4 .mrc .map) and Gaussian cube (.cube);
// neither reads our HDF5 layout or gzipped DX. A script must therefore name a map of the first
// kind: a command whose map is .h5 writes a .dx beside it for the script (docs/surface_render.md).
// Paths are written absolute, since both programs resolve relative ones against their own working
// folder, not the script's.
#pragma once
#include <array>
#include <filesystem>
#include <optional>

namespace dcsgrid::io {

// An orthographic view as dcsgrid's picture frames it (analysis::Camera): the picture's axes in
// model space (rows: right, up, back = towards the viewer), the model point at the picture's
// centre, and the height of model space the picture shows (Å).
struct ScriptView {
  std::array<std::array<double, 3>, 3> axes{};
  std::array<double, 3> centre{};
  double visible_height = 0;
};

struct ViewerScript {
  std::filesystem::path structure;  // a file the program reads: .pdb .cif .pqr .mol2 ...
  std::filesystem::path map;        // .dx, .ccp4/.mrc/.map or .cube
  double range = 5;                 // kT/e, > 0
  // A picture the script saves (PyMOL: `pymol -cq script.pml` writes it and quits); empty: none.
  std::filesystem::path picture;
  int width = 1024, height = 768;  // of the picture, pixels
  // dcsgrid's view (PyMOL's set_view, orthoscopic); none: the program's own orient / view all.
  std::optional<ScriptView> view;
};

// Whether both programs read the map file (.dx, .ccp4/.mrc/.map, .cube), by its name.
bool viewers_read_map(const std::filesystem::path& map);

// Each writes its script atomically. Throws Error naming the map when neither program reads its
// format (saying which formats they read and how to write one), for a range that is not a
// positive number, or for an empty structure or map path.
void write_pymol_script(const std::filesystem::path& path, const ViewerScript& script);
void write_chimerax_script(const std::filesystem::path& path, const ViewerScript& script);

}  // namespace dcsgrid::io
