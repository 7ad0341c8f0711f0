// MapReader: a single map is a batch of one complete frame; maps in formats that hold one map are
// read whole at once (read_map).
#include "dcsgrid/io/maps/reader.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/hdf5/maps.hpp"
#include "dcsgrid/io/maps/io.hpp"

namespace dcsgrid::io {

namespace fs = std::filesystem;

struct MapReader::Impl {
  fs::path path;
  hdf5::Handle file;
  hdf5::OpenMap map;
  std::vector<std::size_t> frames;  // frame index of each readable map
  std::vector<float> whole;         // the map of a file that holds one
};

MapReader::MapReader(const fs::path& path) : impl_(std::make_unique<Impl>()) {
  Impl& r = *impl_;
  r.path = path;
  r.frames = {0};
  if (!map_format_from_path(path)->several_maps) {
    MapFile map = read_map(path);
    r.map.grid = map.grid;
    r.map.meta = std::move(map.meta);
    r.whole = std::move(map.data);
    return;
  }
  std::lock_guard lock(hdf5::library_mutex());
  r.file = hdf5::open_file(path, false);
  hdf5::bound_metadata_cache(r.file.get(), path);
  r.map = hdf5::open_map(r.file.get(), hdf5::names::potential, path);
  if (!r.map.frames) return;
  r.frames.clear();
  const std::vector<std::int8_t> status = hdf5::read_status(r.file.get(), *r.map.frames, path);
  for (std::size_t i = 0; i < status.size(); ++i)
    if (hdf5::FrameState(status[i]) == hdf5::FrameState::complete) r.frames.push_back(i);
}

MapReader::~MapReader() {
  if (!impl_) return;
  std::lock_guard lock(hdf5::library_mutex());
  impl_.reset();
}
MapReader::MapReader(MapReader&&) noexcept = default;
MapReader& MapReader::operator=(MapReader&&) noexcept = default;

bool MapReader::is_batch() const { return impl_->map.frames.has_value(); }
const GridSpec& MapReader::grid() const { return impl_->map.grid; }
const MapMetadata& MapReader::meta() const { return impl_->map.meta; }
std::size_t MapReader::size() const { return impl_->frames.size(); }
std::size_t MapReader::frame_count() const { return impl_->map.frames.value_or(1); }
std::size_t MapReader::frame_index(std::size_t i) const { return impl_->frames.at(i); }

std::string MapReader::label(std::size_t i) const {
  const std::string name = impl_->path.string();
  return is_batch() ? name + "#" + std::to_string(frame_index(i)) : name;
}

void MapReader::read(std::size_t i, float* out) const {
  const Impl& r = *impl_;
  if (i >= r.frames.size())
    throw Error(fmt::format("{}: map {} does not exist ({} readable)", r.path.string(), i,
                            r.frames.size()));
  if (!r.whole.empty()) {
    std::copy(r.whole.begin(), r.whole.end(), out);
    return;
  }
  std::lock_guard lock(hdf5::library_mutex());
  hdf5::read_map(r.map.dataset.get(), is_batch() ? std::optional(r.frames[i]) : std::nullopt, r.map.grid,
                 out, r.path);
}

}  // namespace dcsgrid::io
