// dcsgrid info FILE: what a map (any format) or a batch file holds — grid, units, provenance, the frames
// of a batch and the statistics of every map (those stored under /analysis when the file has
// them, else computed here).
#include <cstdio>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "shared_options.hpp"

namespace dcsgrid::cli {

namespace {

const char* kExamples = R"(Examples:
  dcsgrid info pot.h5                   grid, units, provenance, min/max/mean/std
  dcsgrid info frames.h5                a batch file: its frames (source, atoms, charge, status)
                                        and each complete frame's statistics
  dcsgrid info apbs.dx.gz               any map format: grid, units (where recorded), values
  dcsgrid info pot.h5 --store-stats     also store the statistics and histogram under /analysis
  dcsgrid info frames.h5 --json         everything as JSON, histograms included)";

constexpr std::size_t kFramesListed = 50;  // frame rows printed; --json has them all

nlohmann::json metadata_json(const io::MapMetadata& m) {
  return {{"units", m.units},
          {"temperature", m.temperature},
          {"method", m.method},
          {"parameters", m.parameters},
          {"dielectric", m.dielectric},
          {"dielectric_model", m.dielectric_model},
          {"ionic_strength", m.ionic_strength},
          {"min_distance", m.min_distance},
          {"atom_count", m.atom_count},
          {"total_charge", m.total_charge},
          {"input_file", m.input_file},
          {"input_sha256", m.input_sha256},
          {"program_version", m.program_version},
          {"command_line", m.command_line}};
}

// batch: the atoms and inputs are per frame, in the frame table.
void print_metadata(const std::string& file, const GridSpec& g, const io::MapMetadata& m,
                    bool batch) {
  std::string params;
  for (const auto& [k, v] : m.parameters) params += fmt::format(" {}={}", k, v);
  std::printf("%s\n", file.c_str());
  std::printf("  grid        %s\n", g.describe().c_str());
  const Box b = g.bounds();
  std::printf("  extent      (%.3f, %.3f, %.3f) to (%.3f, %.3f, %.3f) Å%s\n", b.lo[0], b.lo[1], b.lo[2], b.hi[0],
              b.hi[1], b.hi[2], g.orthogonal() ? "" : " (the box of a skewed grid's corners)");
  std::printf("  units       %s at %g K\n", m.units.c_str(), m.temperature);
  std::printf("  method      %s%s\n", m.method.c_str(), params.c_str());
  std::printf("  medium      %s, ε = %g, ionic strength %g M, min distance %g Å\n",
              m.dielectric_model.c_str(), m.dielectric, m.ionic_strength, m.min_distance);
  if (!batch) {
    std::printf("  atoms       %zu, total charge %+.4f e\n", m.atom_count, m.total_charge);
    std::printf("  input       %s (sha256 %s)\n", m.input_file.c_str(), m.input_sha256.c_str());
  }
  std::printf("  program     dcsgrid %s: %s\n", m.program_version.c_str(), m.command_line.c_str());
}

std::string values_line(const analysis::MapStats& s, const std::string& units) {
  return fmt::format("min {:.6g}, max {:.6g}, mean {:.6g}, std {:.6g} {} ({} finite, {} not)",
                     s.min, s.max, s.mean, s.stddev, units, s.count, s.non_finite);
}

// What the command shows of a file, read once.
struct FileContents {
  GridSpec grid;
  io::MapMetadata meta;
  bool batch = false;
  analysis::FrameTable frames;  // batch files
  std::size_t ensemble_frames = 0;
  std::optional<analysis::FileStats> stats;
  bool stored = false;  // stats read from /analysis
};

FileContents load(const std::string& file, const analysis::HistogramOptions& histogram, bool store) {
  const io::MapFormat format = io::map_format_from_path(file);
  FileContents c;
  if (!format->several_maps) {
    if (store)
      throw Error(file + ": --store-stats stores statistics in HDF5 files only; this is " +
                  format->name);
    // Other formats hold one map and no stored statistics: read it once, compute them here.
    io::MapFile map = io::read_map(file, format, {});
    c.stats = analysis::FileStats{file, map.meta.units, {0}, {analysis::map_stats(map.data, histogram)}};
    c.grid = map.grid;
    c.meta = std::move(map.meta);
    return c;
  }
  c.batch = analysis::is_batch_file(file);
  if (!store) {
    c.stats = analysis::read_stored_stats(file);
    c.stored = c.stats.has_value();
  }
  if (!c.stats) c.stats = analysis::file_stats({file, histogram, store});
  if (c.batch) {
    const analysis::BatchFile b(file);
    c.grid = b.grid();
    c.meta = b.meta();
    c.frames = b.frames();
    c.ensemble_frames = b.has_ensemble() ? b.ensemble_frames() : 0;
  } else {
    io::MapFile map = io::read_hdf5(file);
    c.grid = map.grid;
    c.meta = std::move(map.meta);
  }
  return c;
}

void print_json(const std::string& file, const FileContents& c, bool store) {
  nlohmann::json out = metadata_json(c.meta);
  out["file"] = file;
  out["grid"] = {{"dims", c.grid.dims}, {"origin", c.grid.origin}, {"spacing", c.grid.spacing}};
  if (!c.grid.orthogonal()) out["grid"]["axes"] = c.grid.steps();
  out["stats"] = c.stats->to_json()["maps"];
  out["stats_source"] = c.stored ? "stored" : store ? "computed and stored" : "computed";
  if (c.batch) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& f : c.frames)
      rows.push_back({{"source", f.source}, {"model", f.model}, {"atom_count", f.atom_count},
                      {"total_charge", f.total_charge}, {"status", analysis::status_name(f.status)},
                      {"message", f.message}});
    out["frames"] = rows;
    out["ensemble_frames"] = c.ensemble_frames;
  }
  std::printf("%s\n", out.dump(2).c_str());
}

// A batch file's frames: their counts by status, the ensemble maps, and a row a frame (the first
// kFramesListed) with its statistics or, for a failed or missing frame, its message.
void print_frames(const FileContents& c, const std::string& source) {
  const analysis::FrameTable& frames = c.frames;
  const analysis::FileStats& stats = *c.stats;
  const std::size_t complete = frames.count(analysis::FrameStatus::complete);
  const std::size_t failed = frames.count(analysis::FrameStatus::failed);
  const std::size_t missing = frames.count(analysis::FrameStatus::missing);
  std::printf("  frames      %zu: %zu complete, %zu failed, %zu pending%s\n", frames.size(), complete,
              failed, frames.size() - complete - failed - missing,
              missing ? fmt::format(", {} missing (cut off in a truncated trajectory)", missing).c_str() : "");
  if (c.ensemble_frames)
    std::printf("  ensemble    /analysis/mean and /analysis/std over %zu frames\n", c.ensemble_frames);
  std::printf("  statistics  %s, %s\n", source.c_str(), c.meta.units.c_str());
  std::printf("  %6s %-28s %5s %7s %9s %-8s %11s %11s %11s %11s\n", "frame", "source", "model",
              "atoms", "charge", "status", "min", "max", "mean", "std");
  std::size_t next_stats = 0;
  for (std::size_t i = 0; i < frames.size() && i < kFramesListed; ++i) {
    const auto& f = frames[i];
    std::string values;
    while (next_stats < stats.frames.size() && stats.frames[next_stats] < i) ++next_stats;
    if (next_stats < stats.frames.size() && stats.frames[next_stats] == i) {
      const auto& s = stats.maps[next_stats];
      values = fmt::format("{:11.5g} {:11.5g} {:11.5g} {:11.5g}", s.min, s.max, s.mean, s.stddev);
    } else if (f.status == analysis::FrameStatus::failed || f.status == analysis::FrameStatus::missing) {
      values = f.message;
    }
    std::printf("  %6zu %-28s %5d %7zu %+9.4f %-8s %s\n", i, f.source.c_str(), f.model, f.atom_count,
                f.total_charge, analysis::status_name(f.status).c_str(), values.c_str());
  }
  if (frames.size() > kFramesListed)
    std::printf("  ... %zu more frames (--json lists them all)\n", frames.size() - kFramesListed);
}

void print_text(const std::string& file, const FileContents& c, bool store) {
  print_metadata(file, c.grid, c.meta, c.batch);
  const std::string source = c.stored ? "stored in the file" : store ? "computed, now stored" : "computed";
  if (c.batch) {
    print_frames(c, source);
  } else if (!c.stats->maps.empty()) {
    std::printf("  values      %s [%s]\n", values_line(c.stats->maps[0], c.meta.units).c_str(), source.c_str());
  }
}

}  // namespace

int info_command(int argc, char** argv) {
  CLI::App app{"dcsgrid info: show a potential map's or batch file's grid, units, provenance, "
               "frames and statistics",
               "dcsgrid info"};
  std::string file;
  bool store = false;
  MessageOptions messages;
  analysis::HistogramOptions histogram;
  app.add_option("file", file,
                 "Map (" + io::map_format_list() + ") or batch file written by dcsgrid")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_flag("--store-stats", store,
               "Store the statistics and histograms under /analysis in the file (rewritten "
               "under a temporary name, then renamed)");
  app.add_option("--bins", histogram.bins, "Histogram bins when statistics are computed here")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  add_message_options(app, messages, "Print as JSON");
  app.footer(kExamples);
  if (const auto status = parse_and_set_up_logging(app, argc, argv, messages)) return *status;

  const FileContents c = load(file, histogram, store);
  if (messages.json)
    print_json(file, c, store);
  else
    print_text(file, c, store);
  return 0;
}

}  // namespace dcsgrid::cli
