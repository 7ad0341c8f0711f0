// dcsgrid info FILE.h5: what a map holds — grid, units, provenance and value range.
#include <cmath>
#include <cstdio>
#include <limits>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/io/map_io.hpp"

namespace dcsgrid::cli {

namespace {

struct ValueSummary {
  double min = 0, max = 0, mean = 0;
  std::size_t finite = 0;
};

ValueSummary summarize(const std::vector<float>& data) {
  ValueSummary s;
  double sum = 0, mn = std::numeric_limits<double>::infinity(), mx = -mn;
  for (float v : data) {
    if (!std::isfinite(v)) continue;
    sum += v;
    mn = std::min(mn, double(v));
    mx = std::max(mx, double(v));
    ++s.finite;
  }
  if (s.finite) {
    s.min = mn;
    s.max = mx;
    s.mean = sum / double(s.finite);
  }
  return s;
}

}  // namespace

int info_command(int argc, char** argv) {
  CLI::App app{"dcsgrid info: show a potential map's grid, units, provenance and value range",
               "dcsgrid info"};
  std::string file;
  bool json = false;
  app.add_option("file", file, "Map written by dcsgrid (.h5)")->required()->check(CLI::ExistingFile);
  app.add_flag("--json", json, "Print as JSON");
  app.footer("Example:\n  dcsgrid info pot.h5");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const io::MapFile map = io::read_hdf5(file);
  const ValueSummary values = summarize(map.data);
  const auto& g = map.grid;
  const auto& m = map.meta;
  if (json) {
    nlohmann::json out = {
        {"file", file},
        {"grid", {{"dims", g.dims}, {"origin", g.origin}, {"spacing", g.spacing}}},
        {"units", m.units}, {"temperature", m.temperature}, {"method", m.method},
        {"parameters", m.parameters}, {"dielectric", m.dielectric},
        {"dielectric_model", m.dielectric_model}, {"ionic_strength", m.ionic_strength},
        {"min_distance", m.min_distance}, {"atom_count", m.atom_count},
        {"total_charge", m.total_charge}, {"input_file", m.input_file},
        {"input_sha256", m.input_sha256}, {"program_version", m.program_version},
        {"command_line", m.command_line},
        {"values", {{"min", values.min}, {"max", values.max}, {"mean", values.mean},
                    {"finite", values.finite}}}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::string params;
  for (const auto& [k, v] : m.parameters) params += fmt::format(" {}={}", k, v);
  std::printf("%s\n", file.c_str());
  std::printf("  grid        %s\n", g.describe().c_str());
  std::printf("  extent      (%.3f, %.3f, %.3f) to (%.3f, %.3f, %.3f) Å\n", g.origin[0], g.origin[1],
              g.origin[2], g.far_corner()[0], g.far_corner()[1], g.far_corner()[2]);
  std::printf("  units       %s at %g K\n", m.units.c_str(), m.temperature);
  std::printf("  method      %s%s\n", m.method.c_str(), params.c_str());
  std::printf("  medium      %s, ε = %g, ionic strength %g M, min distance %g Å\n",
              m.dielectric_model.c_str(), m.dielectric, m.ionic_strength, m.min_distance);
  std::printf("  atoms       %zu, total charge %+.4f e\n", m.atom_count, m.total_charge);
  std::printf("  input       %s (sha256 %s)\n", m.input_file.c_str(), m.input_sha256.c_str());
  std::printf("  program     dcsgrid %s: %s\n", m.program_version.c_str(), m.command_line.c_str());
  std::printf("  values      min %.6g, max %.6g, mean %.6g %s (%zu of %zu finite)\n", values.min,
              values.max, values.mean, m.units.c_str(), values.finite, map.data.size());
  return 0;
}

}  // namespace dcsgrid::cli
