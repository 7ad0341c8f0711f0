// Joins the parts of a sharded batch: checks that they belong together, then writes one batch file
// whose /potential is a virtual dataset over theirs, or a copy.
#include "dcsgrid/analysis/batch_merge.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"

namespace dcsgrid::analysis {

namespace fs = std::filesystem;

namespace {

struct Part {
  fs::path path;
  BatchFile file;
  ShardInfo shard;
};

std::string shard_name(const ShardInfo& s) { return fmt::format("{}/{}", s.index, s.count); }

// The options that made a part, without its shard: what every part of one batch shares.
nlohmann::json shared_options(const Part& part) {
  nlohmann::json options;
  try {
    options = nlohmann::json::parse(part.file.options_json());
  } catch (const nlohmann::json::exception&) {
    throw Error(part.path.string() + ": its batch_options attribute is not valid JSON");
  }
  options.erase("shard");
  return options;
}

std::vector<Part> open_parts(const std::vector<fs::path>& paths) {
  std::vector<Part> parts;
  for (const fs::path& path : paths) {
    BatchFile file(path);
    if (!file.shard())
      throw Error(path.string() + ": not a part of a sharded batch (it was made without --shard)");
    const ShardInfo shard = *file.shard();
    parts.push_back({path, std::move(file), shard});
  }
  std::sort(parts.begin(), parts.end(),
            [](const Part& a, const Part& b) { return a.shard.index < b.shard.index; });
  return parts;
}

// Every shard of one count, once, each holding the block of frames that follows the one before.
void check_shards(const std::vector<Part>& parts) {
  const Part& first = parts.front();
  const std::size_t count = first.shard.count;
  for (const Part& p : parts)
    if (p.shard.count != count || p.shard.total_frames != first.shard.total_frames)
      throw Error(fmt::format("{} is shard {} of {} frames but {} is shard {} of {}: parts of "
                              "different batches",
                              p.path.string(), shard_name(p.shard), p.shard.total_frames,
                              first.path.string(), shard_name(first.shard), first.shard.total_frames));
  for (std::size_t i = 1; i < parts.size(); ++i)
    if (parts[i].shard.index == parts[i - 1].shard.index)
      throw Error(fmt::format("{} and {} are both shard {}", parts[i - 1].path.string(),
                              parts[i].path.string(), shard_name(parts[i].shard)));
  std::size_t next_frame = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (i >= parts.size() || parts[i].shard.index != i)
      throw Error(fmt::format("shard {}/{} is missing: {} parts given, {} needed", i, count,
                              parts.size(), count));
    const Part& p = parts[i];
    if (p.shard.first_frame != next_frame)
      throw Error(fmt::format("{}: shard {} starts at frame {}, expected {}", p.path.string(),
                              shard_name(p.shard), p.shard.first_frame, next_frame));
    next_frame += p.file.frames().size();
  }
  if (next_frame != first.shard.total_frames)
    throw Error(fmt::format("the parts hold {} frames, the batch {}", next_frame,
                            first.shard.total_frames));
}

// The same options (inputs, method, physics, stats), hence the same grid and metadata.
void check_same_batch(const std::vector<Part>& parts) {
  const Part& first = parts.front();
  const nlohmann::json options = shared_options(first);
  for (const Part& p : parts) {
    const nlohmann::json other = shared_options(p);
    for (const auto& [key, value] : options.items())
      if (!other.contains(key) || other[key] != value)
        throw Error(fmt::format("{} and {} were made with different options ('{}' differs): "
                                "parts of different batches",
                                first.path.string(), p.path.string(), key));
    if (other.size() != options.size())
      throw Error(fmt::format("{} and {} were made with different options: parts of different "
                              "batches", first.path.string(), p.path.string()));
    if (!p.file.grid().same_as(first.file.grid()))
      throw Error(fmt::format("{} is on grid {} but {} on {}", p.path.string(),
                              p.file.grid().describe(), first.path.string(),
                              first.file.grid().describe()));
    if (p.file.histogram_bins() != first.file.histogram_bins() || p.file.has_ensemble())
      throw Error(p.path.string() + ": its statistics tables differ from " + first.path.string());
  }
}

BatchLayout merged_layout(const std::vector<Part>& parts, const MergeOptions& o) {
  const BatchFile& first = parts.front().file;
  BatchLayout layout;
  layout.grid = first.grid();
  layout.meta = first.meta();
  layout.histogram_bins = first.histogram_bins();
  layout.options_json = shared_options(parts.front()).dump();
  const fs::path folder = fs::absolute(o.output).parent_path();
  for (const Part& p : parts) {
    const auto& frames = p.file.frames();
    layout.frames.append(frames);
    if (!o.copy)
      layout.virtual_parts.push_back(
          {fs::proximate(fs::absolute(p.path), folder).string(), p.shard.first_frame, frames.size()});
  }
  if (o.copy)  // complete once copied, by the batch file's own write order
    for (std::size_t i = 0; i < layout.frames.size(); ++i)
      if (layout.frames.status(i) == FrameStatus::complete)
        layout.frames.set_outcome(i, FrameStatus::pending, layout.frames.atom_count(i),
                                  layout.frames.total_charge(i));
  return layout;
}

// The complete frames' maps (copy) or only their stats rows (virtual) into the merged file.
void fill_merged(BatchFile& out, const std::vector<Part>& parts, bool copy) {
  std::vector<float> map(copy ? out.grid().point_count() : 0);
  for (const Part& p : parts) {
    const std::vector<MapStats> stats = p.file.stats();
    const auto& frames = p.file.frames();
    for (std::size_t i = 0; i < frames.size(); ++i) {
      if (frames.status(i) != FrameStatus::complete) continue;
      const std::size_t index = p.shard.first_frame + i;
      const MapStats* row = stats.empty() ? nullptr : &stats[i];
      if (!copy) {
        if (row) out.write_stats(index, *row);
        continue;
      }
      p.file.read_frame(i, map.data());
      out.write_frame(index, map.data(), frames[i], row);
    }
  }
}

}  // namespace

MergeResult merge_batch_parts(const MergeOptions& o) {
  if (o.parts.empty()) throw Error("merge: no parts given");
  if (o.output.empty()) throw Error("merge: no output file given");
  if (fs::exists(o.output) && !o.overwrite)
    throw Error(o.output.string() + " exists: use --overwrite to replace it");
  io::require_not_an_input(o.output, o.parts);
  const std::vector<Part> parts = open_parts(o.parts);
  check_shards(parts);
  check_same_batch(parts);

  const BatchLayout layout = merged_layout(parts, o);
  io::AtomicFile atomic(o.output);
  BatchFile::create(atomic.temp_path(), layout);
  {
    BatchFile out(atomic.temp_path(), true);
    fill_merged(out, parts, o.copy);
  }
  atomic.commit();

  MergeResult result;
  result.parts = parts.size();
  for (const Part& p : parts) {
    const FrameTable& frames = p.file.frames();
    result.frames += frames.size();
    result.complete += frames.count(FrameStatus::complete);
    result.failed += frames.count(FrameStatus::failed);
    result.pending += frames.count(FrameStatus::pending);
  }
  return result;
}

}  // namespace dcsgrid::analysis
