// dcsgrid surface STRUCTURE [MAP] -o OUT...: the molecular surface as a mesh, the potential at its
// vertices (from MAP, or computed as the main job computes it on a grid around the surface), and
// the potential over each atom's and residue's patch. docs/surface.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "dcsgrid/analysis/colour_ramp.hpp"
#include "dcsgrid/analysis/interpolation.hpp"
#include "dcsgrid/analysis/surface.hpp"
#include "dcsgrid/analysis/surface_table.hpp"
#include "dcsgrid/app/compute.hpp"
#include "dcsgrid/app/surface.hpp"
#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/core/clock.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/method.hpp"
#include "dcsgrid/io/structure/atom_labels.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"
#include "dcsgrid/io/structure/element_radii.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/views/mesh_files.hpp"
#include "dcsgrid/io/views/viewer_scripts.hpp"
#include "dcsgrid/analysis/render.hpp"
#include "shared_options.hpp"

namespace dcsgrid::cli {
namespace {


struct SurfaceOptions {
  std::string structure, map;
  std::vector<std::string> outputs;
  io::ReadOptions read;
  ComputeOptions compute;
  std::string kind = "ses";
  double mesh_spacing = 0.5, grid_spacing = 1.0, range = 5.0;
  std::string view = "auto", picture_size = "1024x768";
  bool transparent = false;
  std::string pymol, chimerax;  // scripts
  MessageOptions messages;
};

// What every writer gets.
struct SurfaceResult {
  TriangleMesh mesh;
  analysis::SurfaceTable table;
  analysis::RenderOptions picture;  // its range is the colours' range
};

// The outputs, chosen by extension: one row per format.
struct SurfaceWriter {
  const char* extension;
  void (*write)(const std::filesystem::path&, const SurfaceResult&);
};

io::VertexColours colours(const SurfaceResult& r) {
  io::VertexColours c(r.mesh.vertices.size());
  for (std::size_t v = 0; v < c.size(); ++v) c[v] = analysis::potential_colour(r.mesh.value[v], r.picture.range);
  return c;
}

constexpr SurfaceWriter kWriters[] = {
    {".ply", [](const auto& path, const auto& r) { io::write_ply(path, r.mesh, colours(r)); }},
    {".glb", [](const auto& path, const auto& r) { io::write_glb(path, r.mesh, colours(r)); }},
    {".csv", [](const auto& path, const auto& r) {
       io::write_file_atomically(path, analysis::table_csv(r.table.residues, false));
     }},
    {".json", [](const auto& path, const auto& r) {
       io::write_file_atomically(path, analysis::table_json(r.table).dump(1) + "\n");
     }},
    {".png", [](const auto& path, const auto& r) { analysis::render_png(path, r.mesh, r.picture); }},
};

const SurfaceWriter& writer_for(const std::string& output) {
  for (const SurfaceWriter& w : kWriters)
    if (output.size() > std::strlen(w.extension) && output.ends_with(w.extension)) return w;
  std::string list;
  for (const SurfaceWriter& w : kWriters) list += std::string(list.empty() ? "" : ", ") + w.extension;
  throw Error("output '" + output + "': unknown extension; dcsgrid surface writes " + list);
}

const char* kExamples = R"(Examples:
  dcsgrid surface protein.pqr -o surf.ply                  SES coloured by the potential (kT/e)
  dcsgrid surface protein.pqr -o surf.glb -o residues.csv  for Blender/web viewers, and a table
  dcsgrid surface protein.pqr pot.dx -o surf.ply           the potential from a map (APBS's too)
  dcsgrid surface protein.pqr -o surf.png --view z         a picture, looking down z
  dcsgrid surface protein.pqr -o s.png --pymol s.pml       and a PyMOL script: pymol s.pml
  dcsgrid surface protein.pqr -o s.ply --surface-kind sas --probe-radius 1.4 --mesh-spacing 0.3
  dcsgrid surface protein.pqr -o s.ply --method pb --ionic-strength 0.15   Poisson–Boltzmann

The surface: SES (solvent-excluded: where a probe sphere rolling over the atoms cannot reach) or SAS
(solvent-accessible: the atoms' spheres grown by the probe radius), from the atoms' radii (PQR's
column; PDB/mmCIF: the force field's table; else, and where a table gives none, the element's van der
Waals radius: docs/surface.md). Without MAP, the potential is computed with the same method and physics options as the
main job, on a grid of --grid-spacing around the surface; a MAP must cover every vertex. Values
at vertices are trilinear interpolations (as `dcsgrid sample`).
Outputs by extension: .ply (binary: positions, normals, float `potential`, colours, faces), .glb
(glTF 2.0 with vertex colours), .csv (per residue: area, area-weighted mean, min, max potential of
the residue's patch, the vertices whose nearest atom is the residue's), .json (per atom and per
residue), .png (a picture of the coloured surface with a colour bar; --view, --picture-size).
Without physics options the potential is computed in water (ε 78.54) with 0.15 M salt
(Debye–Hückel); --dielectric, --ionic-strength, --ddd, --preset or --method pb choose otherwise.
Colours: red negative, white 0, blue positive, saturated at ±--range. --pymol/--chimerax write
scripts that show the same map on those programs' own surfaces.)";

// "WIDTHxHEIGHT", each 16 to 8192.
std::array<int, 2> picture_size(const std::string& text) {
  int w = 0, h = 0;
  char x = 0, rest = 0;
  if (std::sscanf(text.c_str(), "%d %c %d %c", &w, &x, &h, &rest) != 3 || (x != 'x' && x != 'X') ||
      w < 16 || h < 16 || w > 8192 || h > 8192)
    throw Error("--picture-size '" + text + "': expected WIDTHxHEIGHT, 16 to 8192 pixels each (e.g. 1024x768)");
  return {w, h};
}

void add_options(CLI::App& app, SurfaceOptions& o) {
  app.add_option("structure", o.structure, "Atoms with charges (PQR; PDB/mmCIF with a force field; PDBQT, XYZ, MOL2)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("map", o.map, "A potential map to colour by (" + io::map_format_list() + "); default: compute it")
      ->check(CLI::ExistingFile);
  app.add_option("-o,--output", o.outputs, "Output; the extension picks it: .ply .glb .csv .json .png. Repeatable")
      ->required();
  add_charge_options(app, o.read, "Residues/atoms missing from the force field: error or zero (warn, charge 0)");
  app.add_option("--model", o.read.model, "Model number of a multi-model file")
      ->check(kPositiveCount)->capture_default_str()->group("Input and charges");
  const std::string group = "Surface";
  app.add_option("--surface-kind", o.kind, "ses (solvent-excluded) or sas (solvent-accessible)")
      ->check(CLI::IsMember({"ses", "sas"}))->capture_default_str()->group(group);
  app.add_option("--mesh-spacing", o.mesh_spacing,
                 "Distance-field grid spacing, Å: about the mesh's edge length (area error ~(spacing/radius)²); "
                 "the mesh is made on the GPU where --device picks one (the same mesh as on the CPU)")
      ->check(finite_number(0.05, 10))->capture_default_str()->group(group);
  app.add_option("--grid-spacing", o.grid_spacing, "Spacing of the potential's grid when computed, Å")
      ->check(finite_number(0.05, 10))->capture_default_str()->group(group);
  app.add_option("--range", o.range, "Colour range: ±this (in the map's unit) is full red/blue")
      ->check(finite_number(1e-30))->capture_default_str()->group(group);
  const std::string views = "Picture and viewers";
  app.add_option("--view", o.view,
                 "The picture's view: auto (along the smallest principal axis), x|-x|y|-y|z|-z (from that "
                 "side), A,B,C (the auto view turned by these degrees about the picture's x, y, z), or AXIS:A,B,C")
      ->check(parses_with([](const std::string& v) { analysis::parse_view(v); }, "VIEW"))
      ->capture_default_str()->group(views);
  app.add_option("--picture-size", o.picture_size, "The picture's WIDTHxHEIGHT in pixels")
      ->check(parses_with([](const std::string& v) { picture_size(v); }, "WxH"))
      ->capture_default_str()->group(views);
  app.add_flag("--transparent", o.transparent, "Transparent background for the picture (else white)")->group(views);
  app.add_option("--pymol", o.pymol,
                 "Also write a PyMOL script (.pml) that loads the structure and the map and colours PyMOL's own "
                 "surface with this ramp and view (`pymol -cq S.pml` renders S_pymol.png)")
      ->group(views);
  app.add_option("--chimerax", o.chimerax,
                 "Also write a ChimeraX script (.cxc) doing the same (`color electrostatic`)")
      ->group(views);
  add_compute_options(app, o.compute, method_help(false), false);
  app.get_option("--probe-radius")
      ->description("Solvent probe radius, Å: the surface's and, with --method pb, APBS's srad");
  add_message_options(app, o.messages, "Print a summary as JSON on stdout");
}

// The scripts for PyMOL and ChimeraX: they name the input structure and a map those programs read
// (MAP itself, else the map as .dx beside the script), and take the picture's view.
void write_viewer_scripts(const SurfaceOptions& o, const SurfaceResult& r, const io::MapFile& map) {
  io::ViewerScript script;
  script.structure = o.structure;
  script.range = r.picture.range;
  script.width = r.picture.width;
  script.height = r.picture.height;
  script.view = analysis::script_view(analysis::frame_mesh(r.mesh, r.picture));
  for (const auto& [path, program] : {std::pair{o.pymol, "pymol"}, std::pair{o.chimerax, "chimerax"}}) {
    if (path.empty()) continue;
    const std::filesystem::path stem = std::filesystem::path(path).replace_extension();
    script.map = o.map;
    if (o.map.empty() || !io::viewers_read_map(o.map)) {
      script.map = stem.string() + "_map.dx";
      io::write_map(script.map, map.grid, map.data.data(), map.meta);
    }
    script.picture = stem.string() + "_" + program + ".png";
    if (std::string(program) == "pymol") io::write_pymol_script(path, script);
    else io::write_chimerax_script(path, script);
  }
}

}  // namespace

int surface_command(int argc, char** argv) {
  CLI::App app{"dcsgrid surface: the molecular surface, coloured by the potential, and the potential per "
               "atom and residue", "dcsgrid surface"};
  set_help_layout(app, kExamples);
  SurfaceOptions o;
  add_options(app, o);
  if (const auto status = parse_command_line(app, argc, argv)) return *status;
  // The default medium (app::kSurfaceDielectric), where the command line chose none.
  if (app.count("--dielectric") + app.count("--ddd") + app.count("--ionic-strength") + app.count("--preset") == 0 &&
      o.compute.method != "pb") {
    o.compute.physics.dielectric = app::kSurfaceDielectric;
    o.compute.physics.ionic_strength = app::kSurfaceIonicStrength;
  }
  setup_logging(o.messages.verbose, o.messages.quiet);
  for (const auto& out : o.outputs) {
    writer_for(out);
    io::require_not_an_input(out, o.map.empty() ? std::vector<std::filesystem::path>{o.structure}
                                                : std::vector<std::filesystem::path>{o.structure, o.map});
  }
  o.compute.settings();  // a bad option fails before any work
  set_openmp_threads(o.compute.threads);  // the mesh's and the potential's teams
  LapTimer timer;
  io::Structure structure = io::read_structure(o.structure, o.read);
  for (const auto& w : structure.warnings) spdlog::warn("{}", w);
  io::fill_missing_radii(structure, o.structure, o.read.format);
  spdlog::info("{}: radii from {}", o.structure, structure.radius_source);
  spdlog::debug("surface: read {:.3f} s", timer.lap());
  SurfaceResult result;
  result.picture.range = o.range;
  result.picture.view = analysis::parse_view(o.view);
  const std::array<int, 2> size = picture_size(o.picture_size);
  result.picture.width = size[0];
  result.picture.height = size[1];
  result.picture.transparent = o.transparent;
  app::SurfaceRequest request;
  request.surface = {analysis::parse_surface_kind(o.kind), o.compute.pb.srad,
                     o.mesh_spacing};
  request.grid_spacing = o.grid_spacing;
  request.compute = o.compute.settings();
  request.whole_map = !o.pymol.empty() || !o.chimerax.empty();
  std::optional<io::MapFile> given;
  if (!o.map.empty()) given = io::read_map(o.map);
  app::SurfaceResult surface = app::compute_surface(structure, io::atom_labels(o.structure, structure), request,
                                                    given ? &*given : nullptr, o.map.empty() ? "the computed map" : o.map);
  result.mesh = std::move(surface.mesh);
  result.table = std::move(surface.table);
  const io::MapFile& map = given ? *given : surface.map;
  spdlog::debug("surface: mesh, potential and table {:.3f} s", timer.lap());
  for (const auto& out : o.outputs) writer_for(out).write(out, result);
  spdlog::debug("surface: outputs {:.3f} s", timer.lap());
  write_viewer_scripts(o, result, map);
  const double area = result.table.area;
  if (o.messages.json)
    std::printf("%s\n", nlohmann::json({{"surface", o.kind}, {"vertices", result.mesh.vertices.size()},
                                        {"faces", result.mesh.faces.size()}, {"area_A2", area},
                                        {"outputs", o.outputs}}).dump(2).c_str());
  else if (!o.messages.quiet) {
    std::fprintf(stderr, "done: %zu atoms, %s surface of %zu vertices, %zu faces, %.1f Å²\n", structure.atoms.size(),
                 o.kind.c_str(), result.mesh.vertices.size(), result.mesh.faces.size(), area);
    for (const auto& out : o.outputs) std::fprintf(stderr, "      wrote %s\n", out.c_str());
  }
  return 0;
}

}  // namespace dcsgrid::cli
