// Reading the maps a file holds one by one: one for a single-map file of any format, the complete
// frames of a batch file. The common reader of sample, similarity, stats and ensemble.
#pragma once
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "dcsgrid/core/grid.hpp"
#include "dcsgrid/io/maps/metadata.hpp"

namespace dcsgrid::io {

class MapReader {
 public:
  // InputError naming the file when it is not a map (io::read_map's checks; for HDF5, the map
  // dataset's: io::hdf5::open_map).
  explicit MapReader(const std::filesystem::path& path);
  ~MapReader();
  MapReader(MapReader&&) noexcept;
  MapReader& operator=(MapReader&&) noexcept;

  bool is_batch() const;
  const GridSpec& grid() const;
  const MapMetadata& meta() const;
  std::size_t size() const;                     // maps available
  std::size_t frame_count() const;              // frames in the file, complete or not (1: map)
  std::size_t frame_index(std::size_t i) const; // frame number of map i (0 for a single map)
  std::string label(std::size_t i) const;       // "file" or "file#frame"
  void read(std::size_t i, float* out) const;   // grid().point_count() floats

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dcsgrid::io
