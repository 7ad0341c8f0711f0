// Two batch files compared as one run and another that must equal it: grid, options, the frame
// table row by row, and every complete frame's map bit for bit and its stats.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "dcsgrid/analysis/batch_file.hpp"

namespace dcsgrid::test {

inline std::vector<float> frame_data(const analysis::BatchFile& file, std::size_t i) {
  std::vector<float> out(file.grid().point_count());
  file.read_frame(i, out.data());
  return out;
}

// Bit-for-bit equality of two float maps (NaN payloads included).
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

inline void expect_same_record(const analysis::FrameRecord& a, const analysis::FrameRecord& b,
                               std::size_t i) {
  EXPECT_EQ(a.source, b.source) << i;
  EXPECT_EQ(a.model, b.model) << i;
  EXPECT_EQ(a.input_sha256, b.input_sha256) << i;
  EXPECT_EQ(a.atom_count, b.atom_count) << i;
  EXPECT_EQ(a.total_charge, b.total_charge) << i;
  EXPECT_EQ(a.status, b.status) << i;
  EXPECT_EQ(a.message, b.message) << i;
  EXPECT_EQ(a.frame_index, b.frame_index) << i;
  EXPECT_TRUE(a.time_ps == b.time_ps || (std::isnan(a.time_ps) && std::isnan(b.time_ps))) << i;
}

inline void expect_same_stats(const analysis::MapStats& a, const analysis::MapStats& b, std::size_t i) {
  EXPECT_EQ(a.min, b.min) << i;
  EXPECT_EQ(a.max, b.max) << i;
  EXPECT_EQ(a.mean, b.mean) << i;
  EXPECT_EQ(a.stddev, b.stddev) << i;
  EXPECT_EQ(a.count, b.count) << i;
  EXPECT_EQ(a.counts, b.counts) << i;
  EXPECT_EQ(a.edges, b.edges) << i;
}

// `other` holds what `reference` holds (options included).
inline void expect_same_batch(const std::filesystem::path& reference, const std::filesystem::path& other) {
  using analysis::FrameStatus;
  const analysis::BatchFile whole(reference), merged(other);
  EXPECT_TRUE(merged.grid().same_as(whole.grid(), 0)) << merged.grid().describe();
  EXPECT_EQ(merged.options_json(), whole.options_json());
  ASSERT_EQ(merged.frames().size(), whole.frames().size());
  const std::vector<analysis::MapStats> whole_stats = whole.stats(), merged_stats = merged.stats();
  ASSERT_EQ(merged_stats.size(), whole_stats.size());
  for (std::size_t i = 0; i < whole.frames().size(); ++i) {
    expect_same_record(merged.frames()[i], whole.frames()[i], i);
    if (whole.frames()[i].status != FrameStatus::complete) continue;
    EXPECT_TRUE(same_bits(frame_data(merged, i), frame_data(whole, i))) << "frame " << i;
    expect_same_stats(merged_stats[i], whole_stats[i], i);
  }
}

}  // namespace dcsgrid::test
