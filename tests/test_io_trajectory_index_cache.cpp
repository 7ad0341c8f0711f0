// The XTC/TRR frame index cache: built once and reused (proved by a cache whose middle offset is
// faked: reading through it fails), rebuilt when the trajectory's time, or its last KiB at the
// same size and time, changes, malformed caches ignored, and frames selected with a step through
// the cache equal to MDAnalysis' frames and the sequential reading.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/trajectory/frame_index_cache.hpp"
#include "dcsgrid/io/trajectory/trajectory.hpp"
#include "test_io_trajectory_util.hpp"

namespace dcsgrid::test {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kAtoms = 150;
constexpr int kFrames = 9;

// Frames of a reader (a frame per entry, 3·atoms floats).
std::vector<std::vector<float>> read_frames(io::TrajectoryReader& reader) {
  std::vector<std::vector<float>> out;
  std::vector<float> xyz(3 * reader.atom_count());
  io::FrameInfo info;
  while (reader.next(xyz.data(), info)) out.push_back(xyz);
  return out;
}

// The k-th frame as MDAnalysis read it, within one float32 rounding.
void expect_mdanalysis_frame(const std::vector<float>& xyz, const fs::path& path, int k) {
  const auto ref = read_binary<double>(path.string() + ".xyz");
  for (std::size_t i = 0; i < 3 * kAtoms; ++i)
    ASSERT_NEAR(xyz[i], ref[std::size_t(k) * 3 * kAtoms + i], 1.2e-7 * std::abs(ref[std::size_t(k) * 3 * kAtoms + i]) + 1e-6)
        << path << " frame " << k << " value " << i;
}

std::vector<std::uint64_t> mdanalysis_offsets(const fs::path& path) {
  std::ifstream in(path.string() + ".offsets");
  std::vector<std::uint64_t> out;
  for (std::uint64_t o; in >> o;) out.push_back(o);
  return out;
}

io::FrameIndexUse apply(const fs::path& trajectory, const fs::path& cache) {
  auto reader = io::open_trajectory(trajectory);
  return io::apply_frame_index_cache(*reader, cache);
}

class FrameIndexCache : public ::testing::TestWithParam<const char*> {};

TEST_P(FrameIndexCache, ReusedWhileTheFileIsUnchangedRebuiltOtherwise) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const std::string format = GetParam();
  const fs::path dir = temp_dir("traj_index_cache_" + format);
  const fs::path path = dir / ("t." + format), cache = dir / "out.h5.frame-index";
  run_mda("write " + format + " " + path.string() + " " + std::to_string(kAtoms) + " " +
          std::to_string(kFrames) + " 21");
  if (HasFatalFailure()) return;
  const auto offsets = mdanalysis_offsets(path);
  ASSERT_EQ(offsets.size(), std::size_t(kFrames));

  // First run: built, and the cache holds MDAnalysis' offsets.
  auto first = io::open_trajectory(path);
  io::FrameIndexUse use = io::apply_frame_index_cache(*first, cache);
  EXPECT_EQ(use.built, 1u);
  EXPECT_EQ(use.cached, 0u);
  EXPECT_EQ(first->frame_count(), kFrames);  // known without reading: it seeks
  EXPECT_EQ(io::as_indexed(*first)->frame_offsets(), offsets);
  ASSERT_TRUE(fs::exists(cache));

  // Second run: from the cache.
  use = apply(path, cache);
  EXPECT_EQ(use.cached, 1u);
  EXPECT_EQ(use.built, 0u);

  // A fake middle offset in the cache (inside frame 3): a reader that took the cache fails to
  // decode frame 3, so the cache is what it used.
  auto bytes = file_bytes(cache);
  const std::size_t at = bytes.size() - 8 * (kFrames - 3);
  std::uint64_t fake = offsets[3] + 4;
  std::memcpy(bytes.data() + at, &fake, 8);
  write_bytes(cache, bytes);
  {
    auto faked = io::open_trajectory(path);
    EXPECT_EQ(io::apply_frame_index_cache(*faked, cache).cached, 1u);
    std::vector<float> xyz(3 * kAtoms);
    io::FrameInfo info;
    faked->seek(3);
    EXPECT_THROW(faked->next(xyz.data(), info), InputError);
  }

  // The trajectory touched (its modification time changes): rebuilt, reading right again.
  const auto written = fs::last_write_time(path);
  fs::last_write_time(path, written + std::chrono::seconds(5));
  auto touched = io::open_trajectory(path);
  use = io::apply_frame_index_cache(*touched, cache);
  EXPECT_EQ(use.built, 1u);
  EXPECT_EQ(use.cached, 0u);
  std::vector<float> xyz(3 * kAtoms);
  io::FrameInfo info;
  touched->seek(3);
  ASSERT_TRUE(touched->next(xyz.data(), info));
  expect_mdanalysis_frame(xyz, path, 3);
  EXPECT_EQ(apply(path, cache).cached, 1u);

  // Same size and time, one byte of the last KiB changed: rebuilt.
  const auto stamped = fs::last_write_time(path);
  bytes = file_bytes(path);
  bytes[bytes.size() - 10] ^= 0x40;
  write_bytes(path, bytes);
  fs::last_write_time(path, stamped);
  use = apply(path, cache);
  EXPECT_EQ(use.built, 1u);
  EXPECT_EQ(use.cached, 0u);
  fs::remove_all(dir);
}

TEST_P(FrameIndexCache, MalformedCacheIsRebuiltNotAnError) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const std::string format = GetParam();
  const fs::path dir = temp_dir("traj_index_bad_" + format);
  const fs::path path = dir / ("t." + format), cache = dir / "x.frame-index";
  run_mda("write " + format + " " + path.string() + " 30 4 5");
  if (HasFatalFailure()) return;
  for (const std::string junk : {std::string("not a cache"), std::string("DCSGFIDX\x04\x03\x02\x01", 12)}) {
    write_bytes(cache, std::vector<char>(junk.begin(), junk.end()));
    const io::FrameIndexUse use = apply(path, cache);
    EXPECT_EQ(use.built, 1u);
    EXPECT_EQ(apply(path, cache).cached, 1u);  // rewritten whole
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Formats, FrameIndexCache, ::testing::Values("xtc", "trr"));

// Two XTC/TRR files and a DCD as one stream: the two indexed ones cached, the DCD needs none;
// a step selection through the cached indexes gives MDAnalysis' frames and the sequential ones.
TEST(FrameIndexCacheStream, StepSelectionThroughTheCacheEqualsSequentialFrames) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path dir = temp_dir("traj_index_stream");
  const std::vector<fs::path> paths = {dir / "a.xtc", dir / "b.dcd", dir / "c.trr"};
  for (std::size_t k = 0; k < paths.size(); ++k) {
    run_mda("write " + paths[k].extension().string().substr(1) + " " + paths[k].string() + " " +
            std::to_string(kAtoms) + " " + std::to_string(kFrames) + " " + std::to_string(30 + k));
    if (HasFatalFailure()) return;
  }
  const fs::path cache = dir / "f.h5.frame-index";
  auto sequential = read_frames(*io::open_trajectories(paths));
  ASSERT_EQ(sequential.size(), std::size_t(3 * kFrames));
  EXPECT_EQ(io::apply_frame_index_cache(*io::open_trajectories(paths), cache).built, 2u);

  for (const char* text : {"1::4", "2:25:3", "17::5"}) {
    SCOPED_TRACE(text);
    auto reader = io::open_trajectories(paths);
    const io::FrameIndexUse use = io::apply_frame_index_cache(*reader, cache);
    EXPECT_EQ(use.cached, 2u);
    EXPECT_EQ(use.built, 0u);
    const io::FrameSelection selection = io::parse_frame_selection(text);
    auto selected = io::select_frames(std::move(reader), selection);
    std::vector<float> xyz(3 * kAtoms);
    io::FrameInfo info;
    std::size_t count = 0;
    while (selected->next(xyz.data(), info)) {
      ASSERT_TRUE(selection.contains(info.serial));
      EXPECT_EQ(xyz, sequential[std::size_t(info.serial)]) << "frame " << info.serial;
      expect_mdanalysis_frame(xyz, paths[info.file], int(info.index));
      ++count;
    }
    std::size_t expected = 0;
    for (int f = 0; f < 3 * kFrames; ++f) expected += selection.contains(f);
    EXPECT_EQ(count, expected);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dcsgrid::test
