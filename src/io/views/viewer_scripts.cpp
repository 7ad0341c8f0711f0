// PyMOL's ramp_new and ChimeraX's palette interpolate linearly in RGB between the colours named
// at the given values: red at −range, white at 0, blue at +range, clamped beyond, as
// analysis::potential_colour does.
#include "dcsgrid/io/views/viewer_scripts.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include <fmt/format.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "io/maps/output_file.hpp"

namespace dcsgrid::io {
namespace {

namespace fs = std::filesystem;

// opens: the program's column of the format registry (PyMOL also opens gzipped DX; ChimeraX
// does not).
void check_script(const ViewerScript& s, bool MapFormatInfo::*opens, const char* program) {
  if (s.structure.empty()) throw Error(std::string("a ") + program + " script needs a structure file");
  if (s.map.empty()) throw Error(std::string("a ") + program + " script needs a map file");
  if (!(s.range > 0) || !std::isfinite(s.range))
    throw Error("the colour range must be a positive number of kT/e, not " + std::to_string(s.range));
  const MapFormat format = map_format_from_path(s.map);
  if (!(format->*opens))
    throw Error(printable(s.map.string()) + ": " + program + " cannot read " +
                format->name + " maps; its script needs a .dx (OpenDX), " +
                ".ccp4/.mrc/.map or .cube map (write one with `dcsgrid STRUCTURE -o map.dx`)");
}

}  // namespace

bool viewers_read_map(const fs::path& map) {
  const MapFormat format = map_format_from_path(map);
  return format->pymol_opens && format->chimerax_opens;
}

namespace {

// A path as a Python string literal: PyMOL's own commands split arguments at commas and
// semicolons, so paths go through its Python API (`/cmd.load(...)` lines).
std::string python_string(const fs::path& path) {
  std::string out = "\"";
  for (const char c : fs::absolute(path).string()) {
    if (c == '"' || c == '\\') out += '\\';
    if ((unsigned char)c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", (unsigned char)c);
    else
      out += c;
  }
  return out + "\"";
}

// ChimeraX takes a file name in double quotes; a name that holds one cannot be written.
std::string chimerax_path(const fs::path& path) {
  const std::string text = fs::absolute(path).string();
  for (const char c : text)
    if (c == '"' || (unsigned char)c < 0x20)
      throw Error(printable(text) + ": ChimeraX's command line cannot name a file whose name holds a "
                  "double quote or a control character");
  return "\"" + text + "\"";
}

void write_text(const fs::path& path, const std::string& text) {
  AtomicFile target(path);
  OutputFile out(target.temp_path(), path);
  out.write(text);
  out.close();
  target.commit();
}

// PyMOL's set_view: the model-to-camera rotation column by column (the camera looks down its −z),
// the camera's place relative to the origin of rotation, that origin in model space, the front
// and back clipping distances, and orthoscopic (1). The distance makes the picture's height show
// visible_height Å at PyMOL's 20° field of view.
std::string pymol_set_view(const ScriptView& v) {
  constexpr double kFieldOfView = 20;
  const double distance = v.visible_height / (2 * std::tan(kFieldOfView / 2 * std::numbers::pi / 180));
  std::string m;
  for (int column = 0; column < 3; ++column)
    for (int row = 0; row < 3; ++row) m += fmt::format("{:.6f}, ", v.axes[row][column]);
  return fmt::format(
      "set field_of_view, {}\nset orthoscopic, on\n"
      "set_view ({}0, 0, {:.3f}, {:.3f}, {:.3f}, {:.3f}, 1, {:.3f}, 1)\n",
      kFieldOfView, m, -distance, v.centre[0], v.centre[1], v.centre[2], 2 * distance + 1000);
}

}  // namespace

void write_pymol_script(const fs::path& path, const ViewerScript& s) {
  check_script(s, &MapFormatInfo::pymol_opens, "PyMOL");
  const double r = s.range;
  std::string text = fmt::format(
      "# Written by dcsgrid: the molecular surface coloured by the potential map, red {0:g}, white 0,\n"
      "# blue +{1:g} kT/e (the ramp of dcsgrid's own picture). Open it in PyMOL (File > Run Script,\n"
      "# or `pymol {2}`); `pymol -cq {2}` renders the picture and quits.\n"
      "/cmd.load({3}, \"dcsgrid_molecule\")\n"
      "/cmd.load({4}, \"dcsgrid_potential\")\n"
      "hide everything, dcsgrid_molecule\n"
      "ramp_new dcsgrid_ramp, dcsgrid_potential, [{0:g}, 0, {1:g}], [red, white, blue]\n"
      "set surface_color, dcsgrid_ramp, dcsgrid_molecule\n"
      "show surface, dcsgrid_molecule\n"
      "disable dcsgrid_potential\n"
      "disable dcsgrid_ramp\n"
      "bg_color white\n"
      "set depth_cue, off\n",
      -r, r, path.filename().string(), python_string(s.structure), python_string(s.map));
  text += s.view ? pymol_set_view(*s.view) : "orient dcsgrid_molecule\n";
  if (!s.picture.empty())
    text += fmt::format("set ray_opaque_background, on\n/cmd.png({}, width={}, height={}, ray=1)\n",
                        python_string(s.picture), s.width, s.height);
  write_text(path, text);
}

void write_chimerax_script(const fs::path& path, const ViewerScript& s) {
  check_script(s, &MapFormatInfo::chimerax_opens, "ChimeraX");
  const double r = s.range;
  std::string text = fmt::format(
      "# Written by dcsgrid: the molecular surface coloured by the potential map, red {0:g}, white 0,\n"
      "# blue +{1:g} kT/e (the ramp of dcsgrid's own picture), sampled on the surface (offset 0).\n"
      "# Open it in ChimeraX (`open {2}`). It starts with `close`, so that the structure is #1 and the\n"
      "# map #2: run it in a fresh session.\n"
      "close\n"
      "open {3}\n"
      "open {4}\n"
      "volume #2 hide\n"
      "surface #1\n"
      "color electrostatic #1 map #2 palette red:white:blue range {0:g},{1:g} offset 0\n"
      "set bgColor white\n"
      "view\n",
      -r, r, path.filename().string(), chimerax_path(s.structure), chimerax_path(s.map));
  if (!s.picture.empty())
    text += fmt::format("save {} width {} height {} supersample 3\n", chimerax_path(s.picture), s.width,
                        s.height);
  write_text(path, text);
}

}  // namespace dcsgrid::io
