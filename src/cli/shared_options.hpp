// Option groups that several commands share (the main job and batch most of them), so they read
// the same flags with the same checks, defaults and help.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/core/physics.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/io/read.hpp"

namespace dcsgrid::cli {

// --forcefield, --forcefield-dir, --unknown (into `unknown`: "error" or "zero").
void add_charge_options(CLI::App& app, io::ReadOptions& read, std::string& unknown,
                        const std::string& unknown_help);

// --spacing, --padding, and an explicit box: --center with --size, or --origin with --dims.
struct GridOptions {
  double spacing = 0.5, padding = 10.0;
  std::vector<double> center, size, origin;
  std::vector<std::int64_t> dims;
  // The box the user gave, if any.
  std::optional<GridSpec> explicit_grid() const;
};
void add_grid_options(CLI::App& app, GridOptions& grid, const std::string& group,
                      const std::string& padding_help);

// --dielectric, --ddd, --ionic-strength, --temperature, --min-distance, --units (into `units`).
void add_physics_options(CLI::App& app, Physics& physics, std::string& units);

// --method (one of `methods`), --cutoff, --cutoff-form, --switch-start; group "Method".
struct MethodOptions {
  std::string method = "direct";
  std::string cutoff_form = "shifted";
  engine::CutoffOptions cutoff;
  // cutoff with its form parsed from cutoff_form.
  engine::CutoffOptions parsed_cutoff() const;
};
inline const std::string kMethodGroup = "Method";
void add_method_options(CLI::App& app, MethodOptions& method,
                        const std::vector<std::string>& methods, const std::string& method_help);

// --device: auto (GPU when present), cpu or gpu.
inline const std::string kHardwareGroup = "Hardware";
void add_device_option(CLI::App& app, std::string& device, const std::string& group);

}  // namespace dcsgrid::cli
