// A picture of a surface coloured by its potential: a software z-buffer rasteriser (orthographic
// view, Lambert + ambient shading from the vertex normals, the value interpolated across each
// triangle and coloured by potential_colour) and a colour bar labelled −range, 0, +range and kT/e.
// Used by `dcsgrid surface -o picture.png`; the view is the one PyMOL's script can take too
// (io/viewer_scripts.hpp).
#pragma once
#include <array>
#include <filesystem>
#include <optional>
#include <string>

#include "dcsgrid/core/mesh.hpp"
#include "dcsgrid/io/views/png.hpp"
#include "dcsgrid/io/views/viewer_scripts.hpp"

namespace dcsgrid::analysis {

using Vec3 = std::array<double, 3>;

// Which way the camera looks. axis empty: along the vertices' smallest principal axis (the
// molecule shows its largest face), up the middle one; else from the side of that axis ("z": from
// +z looking towards −z, x to the right and y up, as PyMOL's unrotated view; "x": from +x, up z;
// "y": from +y, up z; "-x" "-y" "-z" from the other side, same up). Then the molecule turns by
// angles (degrees, right-handed) about the picture's x (right), then y (up), then z (towards the
// viewer) axis.
struct ViewSpec {
  std::string axis;  // "", "x", "-x", "y", "-y", "z", "-z"
  std::array<double, 3> angles{0, 0, 0};
};

// The text of --view: "auto", an axis ("x" ... "-z"), three angles "A,B,C" (turning the auto
// view), or "AXIS:A,B,C". Throws Error saying what it accepts.
ViewSpec parse_view(const std::string& text);

// Orthographic camera: the picture's axes in model space (rows of a rotation: right, up, back =
// towards the viewer), the model point at the picture's centre, and pixels per Å.
struct Camera {
  std::array<Vec3, 3> axes{};
  Vec3 centre{};
  double pixels_per_angstrom = 1;
  std::array<double, 2> centre_pixel{};  // where centre lands (column, row)
  int width = 0, height = 0;             // of the picture
  // Where a model point lands: (column, row) in pixels from the top left, and its depth (Å,
  // larger nearer the viewer).
  std::array<double, 3> project(const Vec3& point) const;
};

// The camera as PyMOL's script takes it: the same axes and scale, centred on the model point at
// the middle of the picture, so that PyMOL's picture of the same size lines up with ours.
io::ScriptView script_view(const Camera& camera);

struct RenderOptions {
  int width = 1024, height = 768;  // pixels, 16 to 8192 each
  double range = 5;                // kT/e: −range is red, +range blue, clamped beyond
  bool transparent = false;        // background: transparent, else white
  ViewSpec view;
  // Samples per pixel along each axis (smooth edges), 1 to 4; lowered where the samples would pass
  // 2^26 (about 0.5 GB of buffers).
  int supersample = 2;
};

// The camera that frames the mesh in a picture of the options' size, leaving the colour bar's
// strip at the right free. Throws Error for a mesh without vertices.
Camera frame_mesh(const TriangleMesh& mesh, const RenderOptions& options);

struct Picture {
  io::Image image;
  Camera camera;
};

// Throws Error for bad options, a mesh without vertices, a face naming a vertex that does not
// exist, or normals/values whose count is not the vertex count (normals may be empty: the faces'
// own are used; values may be empty: the surface is drawn white).
Picture render_mesh(const TriangleMesh& mesh, const RenderOptions& options);
// render_mesh, written as PNG (io::write_png: atomic, errors name the file). Returns the camera.
Camera render_png(const std::filesystem::path& path, const TriangleMesh& mesh,
                  const RenderOptions& options);

}  // namespace dcsgrid::analysis
