// Trajectory readers against MDAnalysis: files written by MDAnalysis' own writers (DCD, XTC,
// TRR, AMBER NetCDF) or byte by byte from the DCD description (X-PLOR, big-endian, 8-byte
// markers, fixed atoms), every frame's coordinates, unit cell and time compared with what
// MDAnalysis reads from the same file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/topology/topology.hpp"
#include "dcsgrid/io/trajectory/trajectory.hpp"
#include "test_io_trajectory_util.hpp"

namespace dcsgrid::test {
namespace {

namespace fs = std::filesystem;
using io::FrameInfo;
using io::TrajectoryReader;

struct Reference {
  std::int64_t frames = 0;
  std::size_t atoms = 0;
  std::vector<double> xyz, box, time;
  std::vector<std::uint64_t> offsets;
};

Reference load_reference(const fs::path& path) {
  Reference r;
  std::ifstream meta(path.string() + ".meta");
  meta >> r.frames >> r.atoms;
  r.xyz = read_binary<double>(path.string() + ".xyz");
  r.box = read_binary<double>(path.string() + ".box");
  r.time = read_binary<double>(path.string() + ".time");
  std::ifstream offsets(path.string() + ".offsets");
  for (std::uint64_t o; offsets >> o;) r.offsets.push_back(o);
  return r;
}

struct Frames {
  std::vector<std::vector<float>> xyz;
  std::vector<FrameInfo> info;
};

Frames read_all(TrajectoryReader& reader) {
  Frames out;
  std::vector<float> xyz(3 * reader.atom_count());
  FrameInfo info;
  while (reader.next(xyz.data(), info)) {
    out.xyz.push_back(xyz);
    out.info.push_back(info);
  }
  return out;
}

// Coordinates within `tolerance` Å (0: the float32 values MDAnalysis sees, to one rounding),
// unit cells to 1e-4 (lengths Å, angles degrees), times to 1e-4 ps.
void expect_frames_match(const Frames& got, const Reference& ref, double tolerance = 0,
                         bool check_time = true) {
  ASSERT_EQ(std::int64_t(got.xyz.size()), ref.frames);
  for (std::int64_t f = 0; f < ref.frames; ++f) {
    const auto& frame = got.xyz[std::size_t(f)];
    ASSERT_EQ(frame.size(), 3 * ref.atoms);
    double worst = 0;
    std::size_t worst_at = 0;
    for (std::size_t i = 0; i < frame.size(); ++i) {
      const double want = ref.xyz[std::size_t(f) * 3 * ref.atoms + i];
      const double allowed = tolerance > 0 ? tolerance : 1.2e-7 * std::abs(want);
      const double excess = std::abs(frame[i] - want) - allowed;
      if (excess > worst) worst = excess, worst_at = i;
    }
    EXPECT_EQ(worst, 0) << "frame " << f << " value " << worst_at << ": "
                        << frame[worst_at] << " vs MDAnalysis "
                        << ref.xyz[std::size_t(f) * 3 * ref.atoms + worst_at];
    const FrameInfo& info = got.info[std::size_t(f)];
    EXPECT_EQ(info.index, f);
    const double* box = &ref.box[6 * std::size_t(f)];
    if (std::isnan(box[0]) || box[0] == 0) {
      EXPECT_FALSE(info.box) << "frame " << f;
    } else {
      ASSERT_TRUE(info.box) << "frame " << f;
      for (int k = 0; k < 6; ++k) EXPECT_NEAR((*info.box)[k], box[k], 1e-4) << "frame " << f;
    }
    if (check_time) EXPECT_NEAR(info.time_ps, ref.time[std::size_t(f)], 1e-4) << "frame " << f;
  }
}

struct TrajectoryFormats : ::testing::TestWithParam<const char*> {};

fs::path write_with_mdanalysis(const std::string& format, std::size_t atoms, int frames,
                               int seed, const std::string& tag) {
  const fs::path dir = temp_dir("traj_" + tag);
  const fs::path path = dir / ("t." + format);
  run_mda("write " + format + " " + path.string() + " " + std::to_string(atoms) + " " +
          std::to_string(frames) + " " + std::to_string(seed));
  return path;
}

bool format_readable(const std::string& format) {
  return format != "ncdf" || io::netcdf_supported();
}

TEST_P(TrajectoryFormats, EveryFrameMatchesMDAnalysis) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const std::string format = GetParam();
  if (!format_readable(format)) GTEST_SKIP() << "built without libnetcdf";
  // 5 atoms: XTC stores them uncompressed; 301: compressed with runs of small differences.
  for (std::size_t atoms : {5, 301}) {
    const fs::path path = write_with_mdanalysis(format, atoms, 7, int(atoms), format);
    if (HasFatalFailure()) return;
    auto reader = io::open_trajectory(path);
    EXPECT_EQ(reader->atom_count(), atoms);
    const Frames frames = read_all(*reader);
    expect_frames_match(frames, load_reference(path));
    EXPECT_TRUE(reader->truncations().empty());
    // Against what was written: XTC to its precision (0.001 nm: 0.005 Å after rounding).
    const auto written = read_binary<double>(path.string() + ".written");
    const double allowed = format == "xtc" ? 0.0051 : 1e-4;
    for (std::size_t f = 0; f < frames.xyz.size(); ++f)
      for (std::size_t i = 0; i < 3 * atoms; ++i)
        ASSERT_NEAR(frames.xyz[f][i], written[f * 3 * atoms + i], allowed) << f << " " << i;
    fs::remove_all(path.parent_path());
  }
}

TEST_P(TrajectoryFormats, SeekingGivesTheFramesOfSequentialReading) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const std::string format = GetParam();
  if (!format_readable(format)) GTEST_SKIP() << "built without libnetcdf";
  const fs::path path = write_with_mdanalysis(format, 40, 9, 3, format + "_seek");
  if (HasFatalFailure()) return;
  auto sequential = io::open_trajectory(path);
  const Frames all = read_all(*sequential);
  ASSERT_EQ(all.xyz.size(), 9u);
  auto reader = io::open_trajectory(path);
  ASSERT_TRUE(reader->can_seek());
  std::vector<float> xyz(3 * 40);
  FrameInfo info;
  for (std::int64_t f : {7, 2, 8, 0, 5, 5, 1}) {
    reader->seek(f);
    ASSERT_TRUE(reader->next(xyz.data(), info)) << "frame " << f;
    EXPECT_EQ(info.index, f);
    EXPECT_EQ(xyz, all.xyz[std::size_t(f)]) << "frame " << f;
  }
  EXPECT_EQ(reader->frame_count(), 9);
  reader->seek(9);
  EXPECT_FALSE(reader->next(xyz.data(), info));
  // Skipping passes frames without returning their coordinates, but their number, step and
  // time from the headers (each format's header, the NetCDF time variable), as next() reads them.
  auto skipper = io::open_trajectory(path);
  const auto mda_times = read_binary<double>(path.string() + ".time");
  for (std::size_t f = 0; f < 2; ++f) {
    FrameInfo skipped;
    ASSERT_TRUE(skipper->skip(skipped));
    EXPECT_EQ(skipped.index, std::int64_t(f));
    EXPECT_EQ(skipped.time_ps, all.info[f].time_ps) << "frame " << f;
    EXPECT_NEAR(skipped.time_ps, mda_times[f], 1e-3) << "frame " << f;
    if (format == "xtc" || format == "trr") EXPECT_EQ(skipped.step, all.info[f].step);
  }
  ASSERT_TRUE(skipper->next(xyz.data(), info));
  EXPECT_EQ(info.index, 2);
  EXPECT_EQ(xyz, all.xyz[2]);
  fs::remove_all(path.parent_path());
}

TEST_P(TrajectoryFormats, FrameSelectionPicksStartStopStep) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const std::string format = GetParam();
  if (!format_readable(format)) GTEST_SKIP() << "built without libnetcdf";
  const fs::path path = write_with_mdanalysis(format, 12, 11, 4, format + "_select");
  if (HasFatalFailure()) return;
  auto all_reader = io::open_trajectory(path);
  const Frames all = read_all(*all_reader);
  for (const std::string text : {"2:9:3", "::4", "5:", ":3", "7", "3:40:5"}) {
    const io::FrameSelection selection = io::parse_frame_selection(text);
    auto reader = io::select_frames(io::open_trajectory(path), selection);
    const Frames picked = read_all(*reader);
    std::vector<std::int64_t> want;
    for (std::int64_t f = 0; f < 11; ++f)
      if (selection.contains(f)) want.push_back(f);
    ASSERT_EQ(picked.xyz.size(), want.size()) << text;
    for (std::size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(picked.info[k].index, want[k]) << text;
      EXPECT_EQ(picked.xyz[k], all.xyz[std::size_t(want[k])]) << text;
    }
    // Known lengths (DCD, NetCDF) count the selected frames; seek(k) goes to the k-th of them.
    if (const auto count = reader->frame_count()) EXPECT_EQ(*count, std::int64_t(want.size())) << text;
    if (want.size() >= 2) {
      auto again = io::select_frames(io::open_trajectory(path), selection);
      std::vector<float> xyz(3 * 12);
      io::FrameInfo info;
      again->seek(1);
      ASSERT_TRUE(again->next(xyz.data(), info)) << text;
      EXPECT_EQ(info.index, want[1]) << text;
      EXPECT_EQ(xyz, all.xyz[std::size_t(want[1])]) << text;
    }
  }
  fs::remove_all(path.parent_path());
}

INSTANTIATE_TEST_SUITE_P(Formats, TrajectoryFormats, ::testing::Values("dcd", "xtc", "trr", "ncdf"));

// DCD variants MDAnalysis cannot write, made byte by byte; MDAnalysis reads the 4-byte-marker
// ones, and every one is also held to the values written.
TEST(IoTrajectoryDcd, FlavoursEndiannessAndMarkersMatch) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path dir = temp_dir("traj_dcd_variants");
  for (const std::string flavour : {"charmm", "xplor"})
    for (const std::string endian : {"<", ">"})
      for (int marker : {4, 8}) {
        const std::string tag = flavour + (endian == "<" ? "_le_" : "_be_") + std::to_string(marker);
        const fs::path path = dir / (tag + ".dcd");
        run_mda("dcd " + path.string() + " 17 4 9 " + flavour + " '" + endian + "' " +
                std::to_string(marker));
        if (HasFatalFailure()) return;
        auto reader = io::open_trajectory(path);
        ASSERT_EQ(reader->atom_count(), 17u) << tag;
        EXPECT_EQ(reader->frame_count(), 4) << tag;
        const Frames frames = read_all(*reader);
        ASSERT_EQ(frames.xyz.size(), 4u) << tag;
        const auto written = read_binary<double>(path.string() + ".written");
        const auto boxes = read_binary<double>(path.string() + ".boxes_written");
        for (std::size_t f = 0; f < 4; ++f) {
          for (std::size_t a = 0; a < 17; ++a)
            for (std::size_t k = 0; k < 3; ++k)
              ASSERT_EQ(frames.xyz[f][3 * a + k], float(written[(f * 17 + a) * 3 + k])) << tag;
          ASSERT_EQ(bool(frames.info[f].box), flavour == "charmm") << tag;
          if (frames.info[f].box)
            for (int k = 0; k < 6; ++k)
              EXPECT_NEAR((*frames.info[f].box)[k], boxes[6 * f + k], 1e-9) << tag;
          // istart 10, nsavc 5, delta 0.02 AKMA.
          EXPECT_NEAR(frames.info[f].time_ps, (10 + 5.0 * f) * 0.02 * 4.888821e-2, 1e-8) << tag;
        }
        if (marker == 4) expect_frames_match(frames, load_reference(path), 0, false);
      }
  fs::remove_all(dir);
}

TEST(IoTrajectoryDcd, FixedAtomsAreRefusedClearly) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path dir = temp_dir("traj_dcd_fixed");
  const fs::path path = dir / "fixed.dcd";
  run_mda("dcd " + path.string() + " 10 2 1 charmm '<' 4 3");
  if (HasFatalFailure()) return;
  try {
    io::open_trajectory(path);
    FAIL() << "a DCD with fixed atoms was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3 fixed atoms"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(IoTrajectoryXtc, LargeCoordinateRangesUseSeparateWidths) {
  DCSGRID_REQUIRE_MDANALYSIS();
  // Coordinates spread over 2·10^5 Å: integer ranges beyond 2^24 at precision 1000/nm.
  const fs::path dir = temp_dir("traj_xtc_large");
  const fs::path path = dir / "large.xtc";
  const std::string script = "import MDAnalysis as mda, numpy as np\n"
                             "rng = np.random.default_rng(5)\n"
                             "u = mda.Universe.empty(50, trajectory=True)\n"
                             "with mda.Writer('" + path.string() + "', 50) as w:\n"
                             "    for f in range(3):\n"
                             "        u.atoms.positions = rng.uniform(-1e5, 1e5, (50, 3))\n"
                             "        w.write(u)\n";
  std::ofstream(dir / "make.py") << script;
  ASSERT_EQ(run_command("/usr/bin/python3 -W ignore " + (dir / "make.py").string()).status, 0);
  run_mda("reference " + path.string() + " 50");
  if (HasFatalFailure()) return;
  auto reader = io::open_trajectory(path);
  const Frames frames = read_all(*reader);
  // float32 of 1e5 Å has a 0.008 Å step: compare to the relative float32 precision.
  expect_frames_match(frames, load_reference(path), 0, false);
  fs::remove_all(dir);
}

// GROMACS' double-precision build writes TRR reals as doubles; velocities are passed over.
TEST(IoTrajectoryTrr, DoublePrecisionWithVelocitiesMatches) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path dir = temp_dir("traj_trr_double");
  const fs::path path = dir / "double.trr";
  run_mda("trr-double " + path.string() + " 33 5 6");
  if (HasFatalFailure()) return;
  auto reader = io::open_trajectory(path);
  const Frames frames = read_all(*reader);
  // MDAnalysis rounds to float32 before scaling nm to Å, we after: one float32 step apart.
  expect_frames_match(frames, load_reference(path), 1e-5);
  const auto written = read_binary<double>(path.string() + ".written");
  for (std::size_t f = 0; f < frames.xyz.size(); ++f) {
    EXPECT_EQ(frames.info[f].step, std::int64_t(1000 * f));
    for (std::size_t i = 0; i < 99; ++i)
      ASSERT_NEAR(frames.xyz[f][i], written[99 * f + i], 4e-6 * std::abs(written[99 * f + i]));
  }
  fs::remove_all(dir);
}

// Found by fuzz_trr (fuzz/): a double-precision frame's time and lambda were read into a 12-byte
// header buffer, 4 bytes past its end. The sanitizer build (tools/sanitize.sh) fails here without
// the fix; every build checks the frames against MDAnalysis' reading of the same file.
TEST(IoTrajectoryTrr, FuzzRegressionDoublePrecisionHeader) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path dir = temp_dir("traj_trr_fuzz");
  const fs::path path = dir / "double.trr";
  fs::copy_file(source_dir() / "fuzz/regressions/trr/double_precision_time.trr", path);
  run_mda("reference " + path.string() + " 4");
  if (HasFatalFailure()) return;
  auto reader = io::open_trajectory(path);
  const Frames frames = read_all(*reader);
  const Reference ref = load_reference(path);
  ASSERT_GT(ref.frames, 0);
  expect_frames_match(frames, ref, 1e-5);
  fs::remove_all(dir);
}

// Records without coordinates (x+v, v, x, f in turn, a v-only one last) are passed over: the
// frames are the records with positions, in reading, skipping and seeking alike.
TEST(IoTrajectoryTrr, RecordsWithoutCoordinatesArePassedOver) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path dir = temp_dir("traj_trr_mixed");
  const fs::path path = dir / "mixed.trr";
  run_mda("trr-mixed " + path.string() + " 20 10 7");
  if (HasFatalFailure()) return;
  auto reader = io::open_trajectory(path);
  const Frames frames = read_all(*reader);
  const Reference ref = load_reference(path);
  ASSERT_EQ(ref.frames, 5);  // records 0, 2, 4, 6, 8 hold positions
  expect_frames_match(frames, ref, 1e-5);
  EXPECT_TRUE(reader->truncations().empty());
  const std::int64_t steps[] = {0, 2000, 4000, 6000, 8000};
  for (std::size_t f = 0; f < 5; ++f) EXPECT_EQ(frames.info[f].step, steps[f]);
  auto seeker = io::open_trajectory(path);
  EXPECT_EQ(io::as_indexed(*seeker)->frame_offsets().size(), 5u);
  EXPECT_EQ(seeker->frame_count(), 5);
  std::vector<float> xyz(60);
  FrameInfo info;
  for (std::int64_t f : {3, 0, 4}) {
    seeker->seek(f);
    ASSERT_TRUE(seeker->next(xyz.data(), info));
    EXPECT_EQ(xyz, frames.xyz[std::size_t(f)]);
  }
  EXPECT_FALSE(seeker->next(xyz.data(), info));
  auto skipper = io::open_trajectory(path);
  for (int f = 0; f < 4; ++f) ASSERT_TRUE(skipper->skip());
  ASSERT_TRUE(skipper->next(xyz.data(), info));
  EXPECT_EQ(info.step, 8000);
  EXPECT_FALSE(skipper->skip());
  // Cut inside the last record, which holds no positions: the frames, and the cut reported.
  const auto bytes = file_bytes(path);
  write_bytes(dir / "cut.trr", std::vector<char>(bytes.begin(), bytes.end() - 10));
  auto cut = io::open_trajectory(dir / "cut.trr");
  EXPECT_EQ(read_all(*cut).xyz.size(), 5u);
  EXPECT_EQ(cut->truncations().size(), 1u);
  fs::remove_all(dir);
}

// The XTC/TRR index: MDAnalysis' own offsets, accepted back from a cache, stale ones refused.
TEST(IoTrajectoryXdr, FrameOffsetsMatchMDAnalysisAndCachesAreChecked) {
  DCSGRID_REQUIRE_MDANALYSIS();
  for (const std::string format : {"xtc", "trr"}) {
    const fs::path path = write_with_mdanalysis(format, 200, 6, 8, format + "_offsets");
    if (HasFatalFailure()) return;
    const Reference ref = load_reference(path);
    auto reader = io::open_trajectory(path);
    io::IndexedTrajectory* indexed = io::as_indexed(*reader);
    ASSERT_NE(indexed, nullptr);
    EXPECT_EQ(indexed->frame_offsets(), ref.offsets) << format;
    EXPECT_EQ(reader->frame_count(), 6);

    auto cached = io::open_trajectory(path);
    io::as_indexed(*cached)->set_frame_offsets(ref.offsets);
    std::vector<float> xyz(600);
    FrameInfo info;
    cached->seek(4);
    ASSERT_TRUE(cached->next(xyz.data(), info));
    EXPECT_EQ(info.index, 4);
    for (std::size_t i = 0; i < 600; ++i)
      ASSERT_NEAR(xyz[i], ref.xyz[4 * 600 + i], 1.2e-7 * std::abs(ref.xyz[4 * 600 + i]));

    auto fewer = ref.offsets;
    fewer.pop_back();  // a cache from when the file was shorter
    EXPECT_THROW(io::as_indexed(*io::open_trajectory(path))->set_frame_offsets(fewer), InputError);
    auto shifted = ref.offsets;
    shifted.back() += 4;
    EXPECT_THROW(io::as_indexed(*io::open_trajectory(path))->set_frame_offsets(shifted), InputError);
    fs::remove_all(path.parent_path());
  }
}

TEST(IoTrajectoryChain, FilesAreReadInOrderAsOneStream) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path a = write_with_mdanalysis("dcd", 30, 4, 11, "chain_a");
  const fs::path b = write_with_mdanalysis("xtc", 30, 3, 12, "chain_b");
  const fs::path c = write_with_mdanalysis("trr", 30, 5, 13, "chain_c");
  if (HasFatalFailure()) return;
  auto chain = io::open_trajectories({a, b, c});
  EXPECT_EQ(chain->atom_count(), 30u);
  EXPECT_EQ(chain->files().size(), 3u);
  const Frames frames = read_all(*chain);
  ASSERT_EQ(frames.xyz.size(), 12u);
  std::size_t n = 0;
  for (const auto& [path, count, file] : {std::tuple{a, 4, 0}, {b, 3, 1}, {c, 5, 2}}) {
    auto single = io::open_trajectory(path);
    const Frames alone = read_all(*single);
    for (int f = 0; f < count; ++f, ++n) {
      EXPECT_EQ(frames.xyz[n], alone.xyz[std::size_t(f)]);
      EXPECT_EQ(frames.info[n].file, std::size_t(file));
      EXPECT_EQ(frames.info[n].index, f);
      EXPECT_EQ(frames.info[n].serial, std::int64_t(n));
    }
  }
  // Seeking across files, and a selection over the whole stream (frames 1, 6, 11).
  auto seeker = io::open_trajectories({a, b, c});
  std::vector<float> xyz(90);
  FrameInfo info;
  for (std::int64_t f : {9, 5, 0, 11, 4}) {
    seeker->seek(f);
    ASSERT_TRUE(seeker->next(xyz.data(), info)) << f;
    EXPECT_EQ(xyz, frames.xyz[std::size_t(f)]) << f;
    EXPECT_EQ(info.serial, f);
  }
  EXPECT_EQ(seeker->frame_count(), 12);
  // Per-file indexes: the DCD needs none; the XTC's and TRR's as their own readers build them,
  // and installed from a cache they make the stream's length known without a pass.
  auto* indexed = io::as_indexed(*seeker);
  ASSERT_NE(indexed, nullptr);
  EXPECT_FALSE(indexed->needs_index(0));
  EXPECT_TRUE(indexed->needs_index(1));
  EXPECT_EQ(indexed->frame_offsets(1), io::as_indexed(*io::open_trajectory(b))->frame_offsets());
  auto cached = io::open_trajectories({a, b, c});
  EXPECT_FALSE(cached->frame_count());
  io::as_indexed(*cached)->set_frame_offsets(indexed->frame_offsets(1), 1);
  io::as_indexed(*cached)->set_frame_offsets(indexed->frame_offsets(2), 2);
  EXPECT_EQ(cached->frame_count(), 12);
  EXPECT_THROW(io::as_indexed(*cached)->set_frame_offsets(indexed->frame_offsets(2), 1), InputError);
  cached->seek(6);
  ASSERT_TRUE(cached->next(xyz.data(), info));
  EXPECT_EQ(xyz, frames.xyz[6]);
  EXPECT_EQ(info.file, 1u);
  auto picked = io::select_frames(io::open_trajectories({a, b, c}), io::parse_frame_selection("1::5"));
  const Frames sel = read_all(*picked);
  ASSERT_EQ(sel.xyz.size(), 3u);
  EXPECT_EQ(sel.xyz[1], frames.xyz[6]);
  EXPECT_EQ(sel.info[2].serial, 11);
  for (const auto& p : {a, b, c}) fs::remove_all(p.parent_path());
}

TEST(IoTrajectoryChain, AtomCountMismatchNamesBothFilesAndCounts) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path a = write_with_mdanalysis("dcd", 30, 2, 1, "mismatch_a");
  const fs::path b = write_with_mdanalysis("dcd", 31, 2, 2, "mismatch_b");
  if (HasFatalFailure()) return;
  try {
    io::open_trajectories({a, b});
    FAIL() << "different atom counts accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    for (const std::string want : {a.string(), b.string(), std::string("30"), std::string("31")})
      EXPECT_NE(m.find(want), std::string::npos) << m;
  }
  auto reader = io::open_trajectory(a);
  try {
    io::check_atom_count("top.psf", 29, *reader);
    FAIL() << "topology/trajectory mismatch accepted";
  } catch (const InputError& e) {
    const std::string m = e.what();
    for (const std::string want : {std::string("top.psf"), a.string(), std::string("29"),
                                   std::string("30")})
      EXPECT_NE(m.find(want), std::string::npos) << m;
  }
  EXPECT_NO_THROW(io::check_atom_count("top.psf", 30, *reader));
  for (const auto& p : {a, b}) fs::remove_all(p.parent_path());
}

// The real test files of the MDAnalysisTests package (adk PSF/DCD, GRO/XTC/TRR, bala
// PRMTOP/NetCDF) where it is installed: every frame, and the topology's charges.
TEST(IoTrajectoryRealFiles, MDAnalysisTestsFilesMatch) {
  DCSGRID_REQUIRE_MDANALYSIS();
  if (run_command("/usr/bin/python3 -c 'import MDAnalysisTests' 2>&1").status != 0)
    GTEST_SKIP() << "MDAnalysisTests is not installed for /usr/bin/python3: real files skipped";
  const fs::path dir = temp_dir("traj_real");
  run_mda("real " + dir.string());
  if (HasFatalFailure()) return;
  std::ifstream pairs(dir / "pairs.txt");
  int compared = 0;
  for (std::string name, topology, trajectory; pairs >> name >> topology >> trajectory;) {
    SCOPED_TRACE(name + ": " + trajectory);
    if (fs::path(trajectory).extension() == ".ncdf" && !io::netcdf_supported()) continue;
    auto reader = io::open_trajectory(trajectory);
    expect_frames_match(read_all(*reader), load_reference(dir / name), 0, false);
    if (io::is_topology_path(topology)) {
      const io::Topology top = io::read_topology(topology);
      std::ifstream charges(dir / (name + ".charges"));
      std::size_t i = 0;
      for (std::string atom, residue, resid, q; charges >> atom >> residue >> resid >> q; ++i) {
        ASSERT_LT(i, top.atoms.size());
        EXPECT_NEAR(top.atoms.q[i], std::stod(q), 1e-6) << "atom " << i;
        EXPECT_EQ(top.atom_names[i], atom) << "atom " << i;
      }
      EXPECT_EQ(i, top.atoms.size());
      io::check_atom_count(topology, top.atoms.size(), *reader);
    }
    ++compared;
  }
  EXPECT_GT(compared, 0) << "MDAnalysisTests holds none of the adk/bala files";
  fs::remove_all(dir);
}

TEST(IoTrajectory, FrameSelectionTexts) {
  const auto s = io::parse_frame_selection("3:90:2");
  EXPECT_EQ(s.start, 3);
  EXPECT_EQ(s.stop, 90);
  EXPECT_EQ(s.step, 2);
  EXPECT_FALSE(io::parse_frame_selection("::").stop);
  EXPECT_EQ(io::parse_frame_selection("7").stop, 8);
  for (const char* bad : {"", "a:b", "1:2:0", "5:2", "-1:", "1:2:3:4", "1.5:"})
    EXPECT_THROW(io::parse_frame_selection(bad), Error) << bad;
}

TEST(IoTrajectory, UnknownExtensionAndMissingFileAreInputErrors) {
  EXPECT_THROW(io::open_trajectory("x.pdb7"), InputError);
  EXPECT_THROW(io::open_trajectory("/nonexistent/x.dcd"), InputError);
  EXPECT_THROW(io::open_trajectory("/nonexistent/x.xtc"), InputError);
}

TEST(IoTrajectory, UnitCellFromVectors) {
  // A triclinic cell with known lengths and angles, built from them.
  const double a = 30, b = 40, c = 50, al = 80, be = 95, ga = 110, rad = M_PI / 180;
  const double cx = c * std::cos(be * rad),
               cy = c * (std::cos(al * rad) - std::cos(be * rad) * std::cos(ga * rad)) /
                    std::sin(ga * rad);
  const auto cell = io::cell_parameters_from_vectors(
      {{{a, 0, 0}, {b * std::cos(ga * rad), b * std::sin(ga * rad), 0},
        {cx, cy, std::sqrt(c * c - cx * cx - cy * cy)}}});
  ASSERT_TRUE(cell);
  const double want[6] = {a, b, c, al, be, ga};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR((*cell)[k], want[k], 1e-9);
  EXPECT_FALSE(io::cell_parameters_from_vectors({}));
}

}  // namespace
}  // namespace dcsgrid::test
