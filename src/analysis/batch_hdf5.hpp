// Internal to the analysis layer: the statistics tables of batch and analysis files, on top of
// the HDF5 map layout in io (io/hdf5_maps.hpp, whose names are used here as h5::...). Callers
// hold io::hdf5::library_mutex(). `path` names the file in errors.
#pragma once
#include <hdf5.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/io/hdf5/maps.hpp"

namespace dcsgrid::analysis::h5 {

using namespace io::hdf5;

// Dataset names of the statistics tables (relative to the file's root).
namespace names {
using namespace io::hdf5::names;
inline constexpr const char* stats = "analysis/stats";
inline constexpr const char* histogram = "analysis/histogram";
inline constexpr const char* edges = "analysis/histogram_edges";
}  // namespace names

// /analysis/stats [frames][6] (min max mean std count non_finite), /analysis/histogram
// [frames][bins+2], /analysis/histogram_edges [frames][bins+1], rows NaN/0 until written. The
// /analysis group must exist.
void create_stats_datasets(hid_t file, std::size_t frames, std::size_t bins, const std::string& units,
                           const Path& path);
// The stats rows of frames `frames` (ascending; stats[k] is frame k's): one write a dataset.
void write_stats_rows(hid_t file, std::span<const std::size_t> frames,
                      std::span<const MapStats* const> stats, std::size_t bins, const Path& path);
// Every row (frames × bins from the datasets' shapes).
std::vector<MapStats> read_stats_rows(hid_t file, const Path& path);

}  // namespace dcsgrid::analysis::h5
