#include "shared_options.hpp"

namespace dcsgrid::cli {

void add_charge_options(CLI::App& app, io::ReadOptions& read, std::string& unknown,
                        const std::string& unknown_help) {
  const std::string in = "Input and charges";
  app.add_option("--forcefield", read.forcefield, "Charges for PDB/mmCIF: amber, charmm, parse")
      ->check(CLI::IsMember({"amber", "charmm", "parse"}))
      ->capture_default_str()
      ->group(in);
  app.add_option("--forcefield-dir", read.forcefield_dir,
                 "Folder with pdb2pqr's <FF>.DAT and .names (default: $DCSGRID_FORCEFIELD_DIR, "
                 "then " DCSGRID_DEFAULT_FORCEFIELD_DIR ")")
      ->group(in);
  app.add_option("--unknown", unknown, unknown_help)
      ->check(CLI::IsMember({"error", "zero"}))
      ->capture_default_str()
      ->group(in);
}

std::optional<GridSpec> GridOptions::explicit_grid() const {
  if (!center.empty())
    return grid_centered({center[0], center[1], center[2]}, {size[0], size[1], size[2]}, spacing);
  if (!origin.empty())
    return grid_from_origin({origin[0], origin[1], origin[2]}, {dims[0], dims[1], dims[2]}, spacing);
  return std::nullopt;
}

void add_grid_options(CLI::App& app, GridOptions& g, const std::string& group,
                      const std::string& padding_help) {
  app.add_option("--spacing", g.spacing, "Grid spacing, Å")->capture_default_str()->group(group);
  app.add_option("--padding", g.padding, padding_help)->capture_default_str()->group(group);
  const auto add_xyz = [&](const std::string& name, auto& values, const std::string& help) {
    return app.add_option(name, values, help)->delimiter(',')->expected(3)->group(group);
  };
  auto* center = add_xyz("--center", g.center, "Box centre x,y,z (Å), with --size");
  auto* size = add_xyz("--size", g.size, "Box edge lengths x,y,z (Å), with --center");
  auto* origin = add_xyz("--origin", g.origin, "Position of the first point x,y,z (Å), with --dims");
  auto* dims = add_xyz("--dims", g.dims, "Points along x,y,z, with --origin");
  center->needs(size);
  size->needs(center);
  origin->needs(dims);
  dims->needs(origin);
  center->excludes(origin);
  size->excludes(dims);
}

void add_physics_options(CLI::App& app, Physics& physics, std::string& units) {
  const std::string phys = "Physics";
  app.add_option("--dielectric", physics.dielectric, "Relative permittivity ε")
      ->capture_default_str()
      ->group(phys);
  app.add_flag("--ddd", physics.distance_dependent, "Distance-dependent dielectric ε(r) = 4r")
      ->group(phys);
  app.add_option("--ionic-strength", physics.ionic_strength,
                 "Debye–Hückel screening by a 1:1 salt of this ionic strength, mol/L")
      ->capture_default_str()
      ->group(phys);
  app.add_option("--temperature", physics.temperature, "Temperature, K (for kT/e and screening)")
      ->capture_default_str()
      ->group(phys);
  app.add_option("--min-distance", physics.min_distance,
                 "Distances below this count as this, Å (keeps points on atoms finite)")
      ->capture_default_str()
      ->group(phys);
  app.add_option("--units", units, "Output unit: kT/e, kcal/mol/e, kJ/mol/e or V")
      ->check(CLI::IsMember({"kT/e", "kcal/mol/e", "kJ/mol/e", "V"}))
      ->capture_default_str()
      ->group(phys);
}

engine::CutoffOptions MethodOptions::parsed_cutoff() const {
  engine::CutoffOptions c = cutoff;
  c.form = engine::parse_cutoff_form(cutoff_form);
  return c;
}

void add_method_options(CLI::App& app, MethodOptions& m, const std::vector<std::string>& methods,
                        const std::string& method_help) {
  app.add_option("--method", m.method, method_help)
      ->check(CLI::IsMember(methods))
      ->capture_default_str()
      ->group(kMethodGroup);
  app.add_option("--cutoff", m.cutoff.radius, "Cutoff radius for the cutoff method, Å")
      ->capture_default_str()
      ->group(kMethodGroup);
  app.add_option("--cutoff-form", m.cutoff_form,
                 "truncated, shifted q/r·(1−r²/rc²)², or switched (C1 from --switch-start to rc)")
      ->check(CLI::IsMember({"truncated", "shifted", "switched"}))
      ->capture_default_str()
      ->group(kMethodGroup);
  app.add_option("--switch-start", m.cutoff.switch_start, "Where the switched form starts, Å")
      ->capture_default_str()
      ->group(kMethodGroup);
}

void add_device_option(CLI::App& app, std::string& device, const std::string& group) {
  app.add_option("--device", device, "auto (GPU when present), cpu or gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str()
      ->group(group);
}

}  // namespace dcsgrid::cli
