#include "shared_options.hpp"

#include "dcsgrid/cli/commands.hpp"

#include "dcsgrid/app/mpi_context.hpp"
#include "dcsgrid/app/pb_settings.hpp"

#include <cmath>
#include <map>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/cell.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/gpu_ids.hpp"
#include "dcsgrid/core/threads.hpp"
#include "dcsgrid/core/units.hpp"

namespace dcsgrid::cli {

CLI::Validator finite_number(double lo, double hi) {
  const bool bounded = std::isfinite(lo) || std::isfinite(hi);
  return CLI::Validator(
      [lo, hi](std::string& text) {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return text + " is not a number";
        if (!std::isfinite(value)) return text + " is not a finite number";
        if (value < lo || value > hi) return fmt::format("{} is not in [{:g}, {:g}]", text, lo, hi);
        return std::string();
      },
      bounded ? fmt::format("in [{:g}, {:g}]", lo, hi) : std::string());
}

std::optional<int> parse_and_set_up_logging(CLI::App& app, int argc, char** argv, const MessageOptions& messages,
                                            const std::function<void()>& after) {
  if (const auto status = parse_command_line(app, argc, argv, after)) return status;
  setup_logging(messages.verbose, messages.quiet);
  return std::nullopt;
}

void set_help_layout(CLI::App& app, const char* examples) {
  app.footer(examples);
  app.get_formatter()->column_width(34);
}

void add_message_options(CLI::App& app, MessageOptions& o, const std::string& json_help) {
  app.add_flag("--json", o.json, json_help)->group(kMessageGroup);
  app.add_flag("-v,--verbose", o.verbose, "More messages (-vv for all)")->group(kMessageGroup);
  app.add_flag("-q,--quiet", o.quiet, "Only warnings and errors")->group(kMessageGroup);
}

void add_charge_options(CLI::App& app, io::ReadOptions& read, const std::string& unknown_help) {
  const std::string in = "Input and charges";
  app.add_option("--forcefield", read.forcefield, "Charges for PDB/mmCIF: amber, charmm, parse")
      ->check(CLI::IsMember({"amber", "charmm", "parse"}))
      ->capture_default_str()
      ->group(in);
  app.add_option("--forcefield-dir", read.forcefield_dir,
                 "Folder with pdb2pqr's <FF>.DAT and .names (default: $DCSGRID_FORCEFIELD_DIR, "
                 "then " DCSGRID_DEFAULT_FORCEFIELD_DIR ")")
      ->group(in);
  app.add_option("--unknown", read.unknown_zero, unknown_help)
      ->transform(CLI::CheckedTransformer(std::map<std::string, bool>{{"error", false}, {"zero", true}}))
      ->default_str("error")
      ->group(in);
}

void add_format_option(CLI::App& app, std::string& format, const std::string& help) {
  app.add_option("--format", format, "Input format, whatever the name says: pqr pdb mmcif pdbqt xyz mol2" + help)
      ->check(parses_with(
          [](const std::string& f) {
            if (!io::format_from_name(f)) throw dcsgrid::Error("unknown format '" + f + "'");
          },
          "FORMAT"))
      ->group("Input and charges");
}

app::GridChoice GridOptions::choice() const {
  app::GridChoice c;
  c.spacing = spacing;
  c.padding = padding;
  c.on_cell = layout == "cell";
  if (!center.empty())
    c.box = grid_centered({center[0], center[1], center[2]}, {size[0], size[1], size[2]}, spacing);
  else if (!origin.empty())
    c.box = grid_from_origin({origin[0], origin[1], origin[2]}, {dims[0], dims[1], dims[2]}, spacing);
  return c;
}

void add_grid_options(CLI::App& app, GridOptions& g, const std::string& group,
                      const std::string& padding_help) {
  app.add_option("--spacing", g.spacing, "Grid spacing, Å")
      ->check(finite_number())
      ->capture_default_str()
      ->group(group);
  app.add_option("--padding", g.padding, padding_help)
      ->check(finite_number())
      ->capture_default_str()
      ->group(group);
  const auto add_xyz = [&](const std::string& name, auto& values, const std::string& help) {
    return app.add_option(name, values, help)->delimiter(',')->expected(3)->group(group);
  };
  auto* center = add_xyz("--center", g.center, "Box centre x,y,z (Å), with --size");
  auto* size = add_xyz("--size", g.size, "Box edge lengths x,y,z (Å), with --center");
  auto* origin = add_xyz("--origin", g.origin, "Position of the first point x,y,z (Å), with --dims");
  auto* dims = add_xyz("--dims", g.dims, "Points along x,y,z, with --origin");
  for (CLI::Option* lengths : {center, size, origin}) lengths->check(finite_number());
  center->needs(size);
  size->needs(center);
  origin->needs(dims);
  dims->needs(origin);
  center->excludes(origin);
  size->excludes(dims);
  auto* layout = app.add_option("--grid", g.layout,
                                "Periodic methods without a box: 'box', the cell's bounding box at --spacing "
                                "(axes x, y, z); 'cell', the cell's own lattice, ⌈length/spacing⌉ points "
                                "along each cell vector (oblique axes for a triclinic cell; written to "
                                ".h5, .dx, .ccp4/.mrc and .cube, which can say so)")
                     ->check(CLI::IsMember({"box", "cell"}))
                     ->capture_default_str()
                     ->group(group);
  layout->excludes(center);
  layout->excludes(origin);
}

namespace {

void add_physics_options(CLI::App& app, Physics& physics, std::string& units) {
  const std::string phys = "Physics";
  app.add_option("--dielectric", physics.dielectric, "Relative permittivity ε")
      ->check(finite_number())
      ->capture_default_str()
      ->group(phys);
  app.add_flag("--ddd", physics.distance_dependent, "Distance-dependent dielectric ε(r) = 4r")
      ->group(phys);
  app.add_option("--ionic-strength", physics.ionic_strength,
                 "Debye–Hückel screening by a 1:1 salt of this ionic strength, mol/L")
      ->check(finite_number())
      ->capture_default_str()
      ->group(phys);
  app.add_option("--temperature", physics.temperature, "Temperature, K (for kT/e and screening)")
      ->check(finite_number())
      ->capture_default_str()
      ->group(phys);
  app.add_option("--min-distance", physics.min_distance,
                 "Distances below this count as this, Å (keeps points on atoms finite)")
      ->check(finite_number())
      ->capture_default_str()
      ->group(phys);
  app.add_option("--units", units, "Output unit: kT/e, kcal/mol/e, kJ/mol/e or V")
      ->check(CLI::IsMember({"kT/e", "kcal/mol/e", "kJ/mol/e", "V"}))
      ->capture_default_str()
      ->group(phys);
}

std::string preset_help() {
  std::string help = "Another program's conventions (options given explicitly win):";
  for (const app::Preset& p : app::presets())
    help += fmt::format("\n  {}: {}{}, T = {:g} K, {} — as {}", p.name,
                        p.distance_dependent ? "ε(r) = 4r" : "ε = ",
                        p.distance_dependent ? "" : fmt::format("{:g}", p.dielectric), p.temperature,
                        p.units, p.source);
  return help;
}

// Applies the preset to the options the command line left at their defaults.
void add_preset_option(CLI::App& app, ComputeOptions& o) {
  auto* preset = app.add_option("--preset", o.preset, preset_help())
                     ->check(parses_with([](const std::string& p) { app::find_preset(p); }, "PRESET"))
                     ->group("Physics");
  app.parse_complete_callback([&app, &o, preset] {
    if (preset->count() == 0) return;
    const app::PresetGiven given{.dielectric = app.count("--dielectric") + app.count("--ddd") > 0,
                                 .temperature = app.count("--temperature") > 0,
                                 .ionic_strength = app.count("--ionic-strength") > 0,
                                 .units = app.count("--units") > 0};
    app::apply_preset(app::find_preset(o.preset), given, o.physics, o.units);
  });
}

void add_periodic_options(CLI::App& app, ComputeOptions& o) {
  const std::string group = "Periodic systems (--method ewald, pme; docs/periodic.md)";
  app.add_option("--cell", o.cell,
                 "Unit cell A,B,C[,ALPHA,BETA,GAMMA] (Å, degrees; angles default to 90). Without it a "
                 "periodic method takes the input's own: PDB CRYST1, mmCIF _cell, each trajectory "
                 "frame's box")
      ->check(parses_with([](const std::string& c) { parse_cell(c); }, "A,B,C[,ALPHA,BETA,GAMMA]"))
      ->group(group);
  app.add_option("--pme-cutoff", o.periodic.real_cutoff,
                 "Real-space cutoff of the Ewald splitting, Å (erfc(β·rc)/rc beyond it is dropped)")
      ->check(finite_number())
      ->capture_default_str()
      ->group(group);
  app.add_option("--pme-tolerance", o.periodic.tolerance,
                 "erfc(β·cutoff) at the real-space cutoff; sets the Ewald coefficient β (GROMACS' "
                 "ewald-rtol)")
      ->check(finite_number())
      ->capture_default_str()
      ->group(group);
  app.add_option("--pme-order", o.periodic.pme_order, "B-spline order of PME's charge spreading, 4..12")
      ->check(CLI::Range(engine::kPmeMinOrder, engine::kPmeMaxOrder))
      ->capture_default_str()
      ->group(group);
  app.add_option("--pme-spacing", o.periodic.mesh_spacing,
                 "Largest spacing of PME's FFT mesh, Å (independent of --spacing)")
      ->check(finite_number())
      ->capture_default_str()
      ->group(group);
  app.add_option("--smooth", o.periodic.smooth_beta,
                 "BETA: only the reciprocal part, the potential of Gaussian charges of Ewald factor BETA "
                 "(1/Å) — what VMD's PMEpot writes (its default 0.25)")
      ->check(finite_number())
      ->group(group);
}

void add_pb_options(CLI::App& app, ComputeOptions& o) {
  const std::string group = "Poisson–Boltzmann (--method pb; APBS's keywords; docs/pb.md)";
  engine::PbOptions& pb = o.pb;
  app.add_option("--solvent-dielectric", pb.sdie, "Solvent dielectric (APBS sdie); --dielectric is the solute's (pdie)")
      ->check(finite_number())->capture_default_str()->group(group);
  app.add_option("--ion-radius", pb.ion_radius, "Radius of the 1:1 salt of --ionic-strength, Å")
      ->check(finite_number())->capture_default_str()->group(group);
  app.add_option("--ion", o.ions, "CHARGE,CONC,RADIUS: one mobile ion species (e, mol/L, Å), repeatable; replaces "
                                  "--ionic-strength's 1:1 salt (APBS ion)")
      ->group(group);
  app.add_option("--probe-radius", pb.srad, "Solvent probe radius, Å (APBS srad)")->check(finite_number())->capture_default_str()->group(group);
  app.add_option("--surface", o.surface, "Dielectric boundary (APBS srfm): mol, smol, spl2, spl4")
      ->check(parses_with([](const std::string& t) { app::parse_surface(t); }, "SURFACE"))
      ->default_str(engine::keyword(pb.srfm))
      ->group(group);
  app.add_option("--surface-density", pb.sdens,
                 "Points per Å² on each atom's probe sphere when the surface is mol or smol (APBS sdens)")
      ->check(finite_number())->capture_default_str()->group(group);
  app.add_option("--spline-window", pb.swin,
                 "Half-width of the switch that softens each atom's sphere when the surface is spl2 or spl4, Å "
                 "(APBS swin)")
      ->check(finite_number())->capture_default_str()->group(group);
  app.add_option("--charge-map", o.charge_map, "Charge spreading (APBS chgm): spl0, spl2, spl4")
      ->check(parses_with([](const std::string& t) { app::parse_charge_map(t); }, "CHARGE_MAP"))
      ->default_str(engine::keyword(pb.chgm))
      ->group(group);
  app.add_option("--boundary", o.boundary,
                 "Boundary values (APBS bcfl): zero, sdh or mdh on the grid itself (APBS mg-manual), or focus "
                 "(APBS mg-auto: a coarse grid's solution sets the grid's faces). Default: mdh, focusing when "
                 "the grid is shorter than 1.7 × the molecule's extent along an axis (the log says so)")
      ->check(parses_with(app::check_boundary, "BOUNDARY"))
      ->group(group);
  app.add_option("--coarse-boundary", o.coarse_boundary,
                 "With focusing, the coarsest grid's boundary values (APBS bcfl in mg-auto): zero, sdh, mdh "
                 "(default mdh)")
      ->check(parses_with([](const std::string& t) { app::parse_coarse_boundary(t); }, "BOUNDARY"))
      ->group(group);
  app.add_option("--coarse-size", o.coarse_size,
                 "X,Y,Z: focus from a coarse grid of these lengths (Å, APBS cglen), centred on the atoms' box, "
                 "with the grid's point counts; default 1.7 × the molecule's extent")
      ->delimiter(',')
      ->expected(3)
      ->check(finite_number())
      ->group(group);
  app.add_flag("--solvation", pb.solvation,
               "Also solve the reference medium (solvent dielectric = solute's, no ions) on the same grids and "
               "report the electrostatic solvation energy")
      ->group(group);
  app.add_flag("--nonlinear", pb.nonlinear, "Full (nonlinear) PB by Newton's method (APBS npbe)")->group(group);
  app.add_option("--pb-tolerance", pb.tolerance, "Relative residual the solver stops at")
      ->check(finite_number())->capture_default_str()->group(group);
}

}  // namespace

app::ComputeSettings ComputeOptions::settings() const {
  app::ComputeSettings s;
  s.physics = physics;
  s.physics.unit = parse_unit(units);
  app::set_methods(s, method);
  s.cutoff = cutoff;
  s.cutoff.form = engine::parse_cutoff_form(cutoff_form);
  s.msm = msm;
  s.periodic = periodic;
  s.pb = pb;
  if (!surface.empty()) s.pb.srfm = app::parse_surface(surface);
  if (!charge_map.empty()) s.pb.chgm = app::parse_charge_map(charge_map);
  for (const std::string& ion : ions) s.pb.ions.push_back(app::parse_ion(ion));
  app::set_focusing(s.pb, boundary, coarse_boundary, coarse_size);
  if (!cell.empty()) s.cell = parse_cell(cell);
  s.device = device;
  s.gpus = app::parse_gpu_list(gpus);
  // CUDA starts with only the GPUs asked for. Not under mpirun: MPI's start may have started CUDA.
  if (s.device != "cpu" && !app::mpi::launched_by_mpirun()) s.gpus = narrow_visible_gpus(s.gpus);
  s.threads = threads > 0 ? bounded_threads(threads, "--threads") : threads;
  s.allow_non_finite = allow_non_finite;
  app::validate(s);
  return s;
}

std::string method_help(bool lists) {
  std::string help;
  for (const engine::MethodDescription& d : engine::methods())
    help += fmt::format("{}{} ({})", help.empty() ? "" : ", ", d.name, d.summary);
  if (!lists) return help;
  return help +
         "; or a list such as direct,msm,cutoff: each map into the .h5 (/potential, /potential_msm, ...) "
         "with each map's error against the list's exact method (direct; ewald among the periodic "
         "methods, which are never mixed with the others; the exact map is kept in memory for the "
         "comparisons when it fits in $DCSGRID_HELD_MAPS_BYTES, by default a quarter of the free memory); "
         "both = direct,cutoff; auto = direct where it "
         "is cheap, else msm, from the measured cost of each on this hardware (the choice is printed)";
}

void add_compute_options(CLI::App& app, ComputeOptions& o, const std::string& method_help, bool lists) {
  add_physics_options(app, o.physics, o.units);
  add_preset_option(app, o);
  const auto one_method = [](const std::string& m) { engine::parse_method(m); };
  const auto method_list = [](const std::string& m) {
    if (m != "auto") app::parse_method_list(m);
  };
  app.add_option("--method", o.method, method_help)
      ->check(lists ? parses_with(method_list, "METHOD[,METHOD...]") : parses_with(one_method, "METHOD"))
      ->capture_default_str()
      ->group(kMethodGroup);
  app.add_option("--cutoff", o.cutoff.radius, "Cutoff radius for the cutoff method, Å")
      ->check(finite_number())
      ->capture_default_str()
      ->group(kMethodGroup);
  app.add_option("--cutoff-form", o.cutoff_form,
                 "truncated, shifted q/r·(1−r²/rc²)², or switched (C1 from --switch-start to rc)")
      ->check(CLI::IsMember({"truncated", "shifted", "switched"}))
      ->capture_default_str()
      ->group(kMethodGroup);
  app.add_option("--switch-start", o.cutoff.switch_start, "Where the switched form starts, Å")
      ->check(finite_number())
      ->capture_default_str()
      ->group(kMethodGroup);
  app.add_option("--bin-capacity", o.cutoff.bin_capacity,
                 "GPU cutoff and msm: atoms per bin, the rest summed on the CPU (0: prefix-sum "
                 "bins that hold every atom, the fastest on every input measured)")
      ->capture_default_str()
      ->group(kMethodGroup);
  app.add_flag("--allow-non-finite", o.allow_non_finite,
               "Compute charges whose potential could overflow float32 and keep maps with inf/NaN "
               "values (otherwise both are errors: every map written is finite)")
      ->group(kMethodGroup);

  const std::string msm_group = "Multilevel summation (--method msm)";
  app.add_option("--msm-cutoff", o.msm.cutoff,
                 "Short-range radius a, Å: pairs nearer than a are summed directly, the smooth "
                 "rest on grids")
      ->check(finite_number())
      ->capture_default_str()
      ->group(msm_group);
  app.add_option("--msm-spacing", o.msm.spacing,
                 "Finest MSM grid spacing h, Å (independent of --spacing; smaller: more accurate, "
                 "slower)")
      ->check(finite_number())
      ->capture_default_str()
      ->group(msm_group);
  app.add_option("--msm-order", o.msm.order,
                 "Interpolation order: 4 (cubic), 6 (~1e-4 to 1e-3 relative error), 8, 10 "
                 "(~5e-5); docs/msm.md")
      ->check(CLI::IsMember({4, 6, 8, 10}))
      ->capture_default_str()
      ->group(msm_group);

  add_periodic_options(app, o);
  add_pb_options(app, o);

  add_device_option(app, o.device, kHardwareGroup);
  app.add_option("--gpus", o.gpus,
                 "GPUs to use: all or a list like 0,1 (CUDA's numbers; CUDA then starts only these, "
                 "which saves the start of the others)")
      ->check(parses_with([](const std::string& g) { app::parse_gpu_list(g); }, "all|ID[,ID...]"))
      ->capture_default_str()
      ->group(kHardwareGroup);
  app.add_option("--threads", o.threads,
                 "CPU threads (0: all cores; more than " +
                     std::to_string(kThreadsPerHardwareThread) +
                     " per hardware thread are cut to that, with a warning)")
      ->check(CLI::Range(0, std::numeric_limits<int>::max(), "NON-NEGATIVE"))
      ->capture_default_str()
      ->group(kHardwareGroup);
}

void add_device_option(CLI::App& app, std::string& device, const std::string& group) {
  app.add_option("--device", device, "auto (GPU when present), cpu or gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str()
      ->group(group);
}

}  // namespace dcsgrid::cli
