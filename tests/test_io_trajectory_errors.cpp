// Trajectory readers on damaged and long files: a truncated last frame is reported (file, frame,
// byte offset) after the frames before it, corrupt frames are refused naming file, frame and
// offset, random damage never crashes, and a long trajectory streams in constant memory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/trajectory/trajectory.hpp"
#include "test_io_trajectory_util.hpp"

namespace dcsgrid::test {
namespace {

namespace fs = std::filesystem;

struct Written {
  fs::path path;
  std::vector<std::uint64_t> offsets;  // frame starts, from MDAnalysis (DCD: from the size)
};

// 6 frames of 120 atoms by MDAnalysis; frame offsets as MDAnalysis indexes them (XTC, TRR),
// from scipy's record size (NetCDF) or from the DCD's fixed frame size: (4+4·120+4)·3 coordinates + (4+48+4) unit cell.
Written write_six_frames(const std::string& format) {
  const fs::path dir = temp_dir("traj_err_" + format);
  Written w{dir / ("t." + format), {}};
  run_mda("write " + format + " " + w.path.string() + " 120 6 21");
  if (format == "dcd") {
    const std::uint64_t frame_bytes = 3 * (8 + 4 * 120) + 56, size = fs::file_size(w.path);
    for (int f = 0; f < 6; ++f) w.offsets.push_back(size - (6 - f) * frame_bytes);
  } else {
    std::ifstream offsets(w.path.string() + ".offsets");
    for (std::uint64_t o; offsets >> o;) w.offsets.push_back(o);
  }
  return w;
}

std::vector<std::vector<float>> read_frames(io::TrajectoryReader& reader) {
  std::vector<std::vector<float>> frames;
  std::vector<float> xyz(3 * reader.atom_count());
  io::FrameInfo info;
  while (reader.next(xyz.data(), info)) frames.push_back(xyz);
  return frames;
}

struct TruncatedTrajectories : ::testing::TestWithParam<const char*> {};
// Formats decoded here (NetCDF frames carry no marker to damage; libnetcdf decodes them).
struct CorruptTrajectories : ::testing::TestWithParam<const char*> {};

TEST_P(TruncatedTrajectories, TruncatedLastFrameIsReportedAfterTheFramesBeforeIt) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const std::string format = GetParam();
  if (format == "ncdf" && !io::netcdf_supported()) GTEST_SKIP() << "built without libnetcdf";
  const Written w = write_six_frames(format);
  if (HasFatalFailure()) return;
  ASSERT_EQ(w.offsets.size(), 6u);
  auto whole_reader = io::open_trajectory(w.path);
  const auto whole = read_frames(*whole_reader);
  const auto bytes = file_bytes(w.path);
  const std::uint64_t last = w.offsets[5];
  // Cut at every byte of the last frame (its header, coordinates, cell; NetCDF's record).
  for (std::uint64_t keep = last + 1; keep < bytes.size(); ++keep) {
    const fs::path cut = w.path.parent_path() / ("cut." + format);
    write_bytes(cut, std::vector<char>(bytes.begin(), bytes.begin() + std::ptrdiff_t(keep)));
    for (bool skipping : {false, true}) {
      auto reader = io::open_trajectory(cut);
      std::vector<std::vector<float>> frames;
      if (skipping) {
        // Frames 0..4 passed by skip() (no decoding), then frame 5 asked for.
        for (int f = 0; f < 5; ++f) ASSERT_TRUE(reader->skip()) << keep << " frame " << f;
        std::vector<float> xyz(360);
        io::FrameInfo info;
        EXPECT_FALSE(reader->next(xyz.data(), info));
      } else {
        frames = read_frames(*reader);
        ASSERT_EQ(frames.size(), 5u) << "cut at " << keep;
        for (std::size_t f = 0; f < 5; ++f) EXPECT_EQ(frames[f], whole[f]);
      }
      ASSERT_EQ(reader->truncations().size(), 1u) << "cut at " << keep;
      const io::Truncation& t = reader->truncations()[0];
      EXPECT_EQ(t.file, cut.string());
      EXPECT_EQ(t.frame, 5);
      EXPECT_EQ(t.offset, last);
      const std::string m = t.message();
      EXPECT_NE(m.find(cut.string()), std::string::npos) << m;
      EXPECT_NE(m.find("frame 5"), std::string::npos) << m;
      EXPECT_NE(m.find(std::to_string(last)), std::string::npos) << m;
    }
  }
  fs::remove_all(w.path.parent_path());
}

// A frame in the middle with a damaged start (magic number or DCD record marker): an
// InputError naming the file, the frame and its byte offset, after the frames before it.
TEST_P(CorruptTrajectories, CorruptFrameNamesFileFrameAndOffset) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const std::string format = GetParam();
  const Written w = write_six_frames(format);
  if (HasFatalFailure()) return;
  auto bytes = file_bytes(w.path);
  bytes[w.offsets[3] + 2] ^= 0x5a;  // the high bytes of the magic number / record marker
  const fs::path bad = w.path.parent_path() / ("bad." + format);
  write_bytes(bad, bytes);
  auto reader = io::open_trajectory(bad);
  std::vector<float> xyz(360);
  io::FrameInfo info;
  for (int f = 0; f < 3; ++f) ASSERT_TRUE(reader->next(xyz.data(), info));
  try {
    reader->next(xyz.data(), info);
    FAIL() << "a corrupt frame was read";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(bad.string()), std::string::npos) << m;
    EXPECT_NE(m.find("frame 3"), std::string::npos) << m;
    EXPECT_NE(m.find("byte offset " + std::to_string(w.offsets[3])), std::string::npos) << m;
  }
  fs::remove_all(w.path.parent_path());
}

// Random bytes changed anywhere after the first frame header: each read ends normally, with a
// truncation, or with InputError; never a crash or another exception.
TEST_P(CorruptTrajectories, RandomDamageIsRefusedCleanly) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const std::string format = GetParam();
  const Written w = write_six_frames(format);
  if (HasFatalFailure()) return;
  const auto bytes = file_bytes(w.path);
  std::mt19937_64 rng(77);
  const fs::path bad = w.path.parent_path() / ("fuzz." + format);
  int refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto damaged = bytes;
    std::uniform_int_distribution<std::size_t> where(w.offsets[0] + 8, bytes.size() - 1);
    for (int k = 0; k < 1 + trial % 6; ++k) damaged[where(rng)] = char(rng());
    if (trial % 5 == 0) damaged.resize(where(rng));
    write_bytes(bad, damaged);
    try {
      auto reader = io::open_trajectory(bad);
      read_frames(*reader);
    } catch (const InputError&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0) << "no damage was ever detected";
  fs::remove_all(w.path.parent_path());
}

INSTANTIATE_TEST_SUITE_P(Formats, TruncatedTrajectories, ::testing::Values("dcd", "xtc", "trr", "ncdf"));
INSTANTIATE_TEST_SUITE_P(Formats, CorruptTrajectories, ::testing::Values("dcd", "xtc", "trr"));

// A 96 MB DCD (2000 atoms × 4000 frames) written here frame by frame, read back with the
// resident set sampled: it may not grow by more than a few MB over the whole read.
TEST(IoTrajectoryMemory, LongDcdStreamsInConstantMemory) {
  const fs::path dir = temp_dir("traj_long");
  const fs::path path = dir / "long.dcd";
  const std::int32_t atoms = 2000, frames = 4000;
  write_synthetic_dcd(path, atoms, frames);
  auto reader = io::open_trajectory(path);
  ASSERT_EQ(reader->frame_count(), frames);
  std::vector<float> xyz(3 * atoms);
  io::FrameInfo info;
  ASSERT_TRUE(reader->next(xyz.data(), info));
  const long baseline = resident_kb();
  long peak = baseline;
  std::int64_t read = 1;
  for (; reader->next(xyz.data(), info); ++read) {
    if (read % 100 == 0) peak = std::max(peak, resident_kb());
    ASSERT_EQ(xyz[3 * 1999 + 2], float(read % 97 + 0.001 * 1999 + 2)) << read;
  }
  EXPECT_EQ(read, frames);
  EXPECT_LT(peak - baseline, 4096) << "resident set grew by " << (peak - baseline) << " kB";
  fs::remove_all(dir);
}

// Classic NetCDF headers whose counts claim more than the file holds (fuzz_netcdf's findings):
// libnetcdf allocated 7.6 GB, crashed, or looped for over 10 s on them; the header is now walked
// and its counts checked against the file before libnetcdf opens it. Two more made libnetcdf divide
// by zero (SIGFPE in NC_check_vlen): the unlimited dimension in a later place of a variable.
TEST(IoTrajectoryNetcdf, DamagedHeaderCountsAreRefusedBeforeLibnetcdfOpensTheFile) {
  const fs::path dir = source_dir() / "fuzz" / "regressions" / "netcdf";
  const auto tmp = temp_dir("netcdf-header");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const fs::path copy = tmp / (entry.path().stem().string() + ".nc");
    fs::copy_file(entry.path(), copy);
    try {
      io::open_trajectory(copy);
      ADD_FAILURE() << entry.path() << " was accepted";
    } catch (const InputError& e) {
      if (std::string(e.what()).find("without") != std::string::npos) GTEST_SKIP() << e.what();
      EXPECT_NE(std::string(e.what()).find("damaged NetCDF header at byte"), std::string::npos) << e.what();
    }
    ++files;
  }
  EXPECT_EQ(files, 5);
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace dcsgrid::test
