// The fingerprint of a batch's options and the checks of a resume (resume.hpp).
#include "app/batch/resume.hpp"

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/engine/pb.hpp"
#include "dcsgrid/io/files/sha256.hpp"

namespace dcsgrid::app {

using analysis::BatchFile;
using analysis::FrameStatus;

namespace {

// Names the first key whose value differs, or "" when they agree. Values compare as JSON text
// (NaN, an unset histogram end, is stored as null).
std::string first_difference(const nlohmann::json& recorded, const nlohmann::json& now) {
  for (const auto& [key, value] : now.items())
    if (!recorded.contains(key) || recorded[key].dump() != value.dump()) return key;
  for (const auto& [key, value] : recorded.items())
    if (!now.contains(key)) return key;
  return {};
}

// The options of the group the batch's method reads (its description's `options`), under the
// group's name.
void add_method_options(const ComputeSettings& s, nlohmann::json& j) {
  switch (engine::describe(s.methods.front()).options) {
    case engine::MethodOptions::none:
      return;
    case engine::MethodOptions::cutoff:
      j["cutoff"] = {{"radius", s.cutoff.radius},
                     {"form", engine::cutoff_form_name(s.cutoff.form)},
                     {"switch_start", s.cutoff.switch_start}};
      return;
    case engine::MethodOptions::msm:
      j["msm"] = {{"cutoff", s.msm.cutoff}, {"spacing", s.msm.spacing}, {"order", s.msm.order},
                  {"softening_order", engine::softening_order_used(s.msm)}};
      return;
    case engine::MethodOptions::periodic: {
      const engine::PeriodicOptions& p = s.periodic;
      j["periodic"] = {{"real_cutoff", p.real_cutoff}, {"tolerance", p.tolerance}, {"pme_order", p.pme_order},
                       {"mesh_spacing", p.mesh_spacing}, {"smooth_beta", p.smooth_beta}};
      if (s.cell) j["periodic"]["cell"] = {s.cell->lengths, s.cell->angles};
      return;
    }
    case engine::MethodOptions::pb:
      j["pb"] = engine::describe(s.pb) + fmt::format(", ion radius {:g} Å, tolerance {:g}, {} iterations at most",
                                                    s.pb.ion_radius, s.pb.tolerance, s.pb.max_iterations);
      return;
  }
}

}  // namespace

nlohmann::json options_fingerprint(const BatchOptions& o, const std::vector<std::string>& files) {
  const Physics& p = o.compute.physics;
  nlohmann::json j = {
      {"inputs", files},
      {"models_all", o.models_all},
      {"model", o.read.model},
      {"forcefield", o.read.forcefield},
      {"unknown_zero", o.read.unknown_zero},
      {"physics",
       {{"dielectric", p.dielectric}, {"distance_dependent", p.distance_dependent},
        {"ionic_strength", p.ionic_strength}, {"temperature", p.temperature},
        {"min_distance", p.min_distance}, {"unit", unit_name(p.unit)}}},
      {"method", engine::method_name(o.compute.methods.front())},
      {"stats", o.stats},
      {"histogram", {{"bins", o.histogram.bins}, {"lo", o.histogram.lo}, {"hi", o.histogram.hi}}},
      {"ensemble", o.ensemble},
  };
  if (o.grid_from_first) j["grid_from_first"] = true;  // absent when off: older files resume
  if (o.shard) j["shard"] = fmt::format("{}/{}", o.shard->index, o.shard->count);
  if (o.frames)
    j["frames"] = {{"start", o.frames->start}, {"stop", o.frames->stop ? *o.frames->stop : -1},
                   {"step", o.frames->step}};
  add_method_options(o.compute, j);
  if (const auto& box = o.grid.box)
    j["grid"] = {{"origin", box->origin}, {"spacing", box->spacing}, {"dims", box->dims}};
  else
    j["grid"] = {{"spacing", o.grid.spacing}, {"padding", o.grid.padding}};
  if (o.grid.on_cell) j["grid"]["on_cell"] = true;  // absent when off: older files resume
  return j;
}

// complete frames must be unchanged. Returns the inputs' checksums now, for the frames to come.
void require_same_options(const std::filesystem::path& file, const std::string& recorded_json,
                          const nlohmann::json& fingerprint) {
  nlohmann::json recorded;
  try {
    recorded = nlohmann::json::parse(recorded_json);
  } catch (const nlohmann::json::exception&) {
    throw Error(file.string() + ": its batch_options attribute is not valid JSON");
  }
  const std::string key = first_difference(recorded, fingerprint);
  if (!key.empty())
    throw Error(fmt::format("cannot resume {}: '{}' differs from the run that made it (was {}, now "
                            "{}); use the same options, or --overwrite to start again",
                            file.string(), key, recorded.contains(key) ? recorded[key].dump() : "absent",
                            fingerprint.contains(key) ? fingerprint[key].dump() : "absent"));
}

Checksums input_checksums(const std::vector<std::string>& files, const std::atomic<bool>* stop) {
  Checksums sha;
  for (const auto& f : files) {
    try {
      sha[f] = io::sha256_file(f, stop);
    } catch (const std::exception&) {
      sha[f] = "";
    }
  }
  return sha;
}

Checksums check_resume(const BatchFile& file, const nlohmann::json& fingerprint,
                       const std::vector<std::string>& files) {
  require_same_options(file.path(), file.options_json(), fingerprint);
  Checksums sha = input_checksums(files);
  const analysis::FrameTable& frames = file.frames();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const analysis::FrameSource& source = frames.source(i);
    if (frames.status(i) == FrameStatus::complete && sha[source.path] != source.sha256)
      throw Error(fmt::format("cannot resume {}: input {} changed since frame {} was computed "
                              "(SHA-256 differs); use --overwrite to start again",
                              file.path().string(), source.path, i));
  }
  return sha;
}

}  // namespace dcsgrid::app
