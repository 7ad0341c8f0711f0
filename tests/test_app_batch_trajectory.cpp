// batch over MD trajectories: a PQR topology and DCD + XTC files written by MDAnalysis, every
// selected frame's map against a float64 direct sum at the coordinates MDAnalysis reads, the
// frame table (file, frame number, time), atom-count mismatches, and resume after an
// interruption giving the same bytes, --grid-from-first, the frame index cache next to the
// output, and memory bounded over a long trajectory.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <cstring>
#include <iterator>
#include <limits>

#include "dcsgrid/app/batch.hpp"
#include "dcsgrid/core/error.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"
#include "test_io_trajectory_util.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;
using namespace dcsgrid::app;

namespace {

constexpr std::size_t kAtoms = 12;
constexpr int kFrames = 5;

struct Inputs {
  fs::path dir, topology, dcd, xtc;
  AtomSet charges;  // the topology's charges (coordinates unused)
};

// A PQR topology of kAtoms charges and two trajectories of kFrames frames each.
Inputs make_inputs(const std::string& tag) {
  Inputs in;
  in.dir = test::temp_dir(tag);
  in.charges = test::as_stored(test::random_atoms(kAtoms, Box{{0, 0, 0}, {10, 10, 10}}, 5));
  in.topology = in.dir / "top.pqr";
  test::write_pqr(in.topology, in.charges);
  in.dcd = in.dir / "a.dcd";
  in.xtc = in.dir / "b.xtc";
  test::run_mda("write dcd " + in.dcd.string() + " " + std::to_string(kAtoms) + " " +
                std::to_string(kFrames) + " 11");
  test::run_mda("write xtc " + in.xtc.string() + " " + std::to_string(kAtoms) + " " +
                std::to_string(kFrames) + " 12");
  return in;
}

// Frame f of a trajectory as MDAnalysis read it, with the topology's charges.
AtomSet frame_atoms(const fs::path& trajectory, int f, const AtomSet& charges) {
  const auto xyz = test::read_binary<double>(trajectory.string() + ".xyz");
  AtomSet atoms;
  for (std::size_t i = 0; i < kAtoms; ++i) {
    const double* p = &xyz[(std::size_t(f) * kAtoms + i) * 3];
    atoms.push_back(float(p[0]), float(p[1]), float(p[2]), charges.q[i]);
  }
  return atoms;
}

BatchOptions options(const Inputs& in, const fs::path& output) {
  BatchOptions o;
  o.inputs = {in.topology.string(), in.dcd.string(), in.xtc.string()};
  o.output = output;
  o.compute.device = "cpu";
  o.grid.box = grid_from_origin({-60, -60, -60}, {25, 27, 29}, 7.0);
  return o;
}

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(BatchTrajectory, SelectedFramesOfTwoFilesMatchTheFloat64Sum) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const Inputs in = make_inputs("batch-traj");
  if (HasFatalFailure()) return;
  BatchOptions o = options(in, in.dir / "frames.h5");
  o.frames = io::parse_frame_selection("1::3");  // stream frames 1, 4, 7 (a.dcd 1 and 4, b.xtc 2)
  const BatchResult r = run_batch(o);
  ASSERT_EQ(r.frames, 3u);
  EXPECT_EQ(r.computed, 3u);

  const analysis::BatchFile file(o.output);
  const std::vector<std::pair<fs::path, int>> expected = {{in.dcd, 1}, {in.dcd, 4}, {in.xtc, 2}};
  std::vector<float> map(file.grid().point_count());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& [source, frame] = expected[i];
    const analysis::FrameRecord& record = file.frames()[i];
    EXPECT_EQ(record.source, source.string()) << i;
    EXPECT_EQ(record.frame_index, frame) << i;
    const auto times = test::read_binary<double>(source.string() + ".time");
    EXPECT_NEAR(record.time_ps, times[std::size_t(frame)], 1e-3) << i;
    file.read_frame(i, map.data());
    const AtomSet atoms = frame_atoms(source, frame, in.charges);
    const auto ref = test::reference_direct(atoms, file.grid(), make_pair_kernel(o.compute.physics));
    EXPECT_LT(test::relative_l2(map, ref), 2e-6) << "frame " << i;
  }
  fs::remove_all(in.dir);
}

TEST(BatchTrajectory, AtomCountMismatchNamesBothFiles) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const Inputs in = make_inputs("batch-traj-count");
  if (HasFatalFailure()) return;
  test::write_pqr(in.topology, test::random_atoms(kAtoms + 1, Box{{0, 0, 0}, {5, 5, 5}}, 2));
  try {
    run_batch(options(in, in.dir / "frames.h5"));
    FAIL() << "a topology of another atom count was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("top.pqr"), std::string::npos) << m;
    EXPECT_NE(m.find("a.dcd"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(kAtoms + 1)), std::string::npos) << m;
  }
  EXPECT_FALSE(fs::exists(in.dir / "frames.h5"));
  fs::remove_all(in.dir);
}

TEST(BatchTrajectory, ResumeAfterInterruptionIsByteIdentical) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const Inputs in = make_inputs("batch-traj-resume");
  if (HasFatalFailure()) return;
  const BatchOptions whole = options(in, in.dir / "whole.h5");
  run_batch(whole);
  BatchOptions cut = options(in, in.dir / "cut.h5");
  cut.step_hook = [](std::size_t frame, analysis::WriteStep step) {
    if (frame == 6 && step == analysis::WriteStep::data_flushed) throw std::runtime_error("stop");
  };
  EXPECT_THROW(run_batch(cut), std::runtime_error);
  cut.step_hook = {};
  cut.resume = true;
  const BatchResult r = run_batch(cut);
  EXPECT_EQ(r.skipped + r.computed, std::size_t(2 * kFrames));
  EXPECT_GT(r.computed, 0u);
  EXPECT_EQ(contents(whole.output), contents(cut.output));
  fs::remove_all(in.dir);
}

namespace {

// Every frame of `source` (as MDAnalysis read it) with the topology's charges.
std::vector<AtomSet> all_frames(const fs::path& source, const AtomSet& charges) {
  std::vector<AtomSet> frames;
  for (int f = 0; f < kFrames; ++f) frames.push_back(frame_atoms(source, f, charges));
  return frames;
}

bool inside(const GridSpec& g, float x, float y, float z) {
  const double p[3] = {x, y, z};
  for (int a = 0; a < 3; ++a)
    if (p[a] < g.origin[a] || p[a] > g.origin[a] + g.spacing[a] * double(g.dims[a] - 1)) return false;
  return true;
}

std::size_t atoms_outside(const GridSpec& g, const AtomSet& atoms) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < atoms.size(); ++i) n += !inside(g, atoms.x[i], atoms.y[i], atoms.z[i]);
  return n;
}

std::vector<std::vector<float>> frame_maps(const fs::path& output) {
  const analysis::BatchFile file(output);
  std::vector<std::vector<float>> maps(file.frames().size(), std::vector<float>(file.grid().point_count()));
  for (std::size_t i = 0; i < maps.size(); ++i) file.read_frame(i, maps[i].data());
  return maps;
}

}  // namespace

// --grid-from-first: the grid is the first frame's box plus padding, later frames' atoms outside
// it still count at every point (float64 direct sum over all atoms); without it the grid holds
// every atom of every frame.
TEST(BatchTrajectory, GridFromFirstFrameAndAtomsOutsideIt) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const Inputs in = make_inputs("batch-traj-first");
  if (HasFatalFailure()) return;
  const std::vector<AtomSet> frames = all_frames(in.dcd, in.charges);
  BatchOptions o = options(in, in.dir / "first.h5");
  o.inputs = {in.topology.string(), in.dcd.string()};
  o.grid.box.reset();
  o.grid.spacing = 6.0;
  o.grid.padding = 1.0;
  o.grid_from_first = true;
  const BatchResult r = run_batch(o);
  ASSERT_EQ(r.frames, std::size_t(kFrames));
  const GridSpec expected = o.grid.resolve(bounding_box(frames[0]));
  EXPECT_EQ(r.grid.dims, expected.dims);
  for (int a = 0; a < 3; ++a) EXPECT_DOUBLE_EQ(r.grid.origin[a], expected.origin[a]) << a;
  std::size_t outside = 0;
  for (const AtomSet& atoms : frames) outside += atoms_outside(r.grid, atoms);
  ASSERT_GT(outside, 0u) << "the test needs later frames that leave the first frame's box";
  const auto maps = frame_maps(o.output);
  for (int f = 0; f < kFrames; ++f) {
    const auto ref = test::reference_direct(frames[std::size_t(f)], r.grid, make_pair_kernel(o.compute.physics));
    EXPECT_LT(test::relative_l2(maps[std::size_t(f)], ref), 2e-6) << "frame " << f;
  }

  o.grid_from_first = false;
  o.output = in.dir / "union.h5";
  const BatchResult u = run_batch(o);
  for (const AtomSet& atoms : frames) EXPECT_EQ(atoms_outside(u.grid, atoms), 0u);
  EXPECT_GT(u.grid.point_count(), r.grid.point_count());

  o.grid_from_first = true;
  o.grid.box = grid_from_origin({0, 0, 0}, {3, 3, 3}, 1.0);
  o.output = in.dir / "both.h5";
  EXPECT_THROW(run_batch(o), Error);  // a box and --grid-from-first: which grid is meant?
  fs::remove_all(in.dir);
}

// --grid-from-first skips the pass over the frames: one frame is decoded (for the box), the
// others are passed by their headers, yet the frame table (file, frame, time) is the one the
// full pass makes and MDAnalysis reads, for DCD, XTC and TRR through a frame selection; the maps
// match the float64 direct sum. A given box decodes no frame at all.
TEST(BatchTrajectory, GridFromFirstDecodesOneFrame) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const Inputs in = make_inputs("batch-traj-first-skip");
  if (HasFatalFailure()) return;
  const fs::path trr = in.dir / "c.trr";
  test::run_mda("write trr " + trr.string() + " " + std::to_string(kAtoms) + " " +
                std::to_string(kFrames) + " 13");
  BatchOptions o = options(in, in.dir / "first.h5");
  o.inputs.push_back(trr.string());
  o.frames = io::parse_frame_selection("1::2");  // a.dcd 1 3, b.xtc 0 2 4, c.trr 1 3
  o.grid.box.reset();
  o.grid.spacing = 6.0;
  o.grid_from_first = true;
  const BatchResult first = run_batch(o);
  EXPECT_EQ(first.scan_frames_decoded, 1u);
  EXPECT_EQ(first.to_json().at("scan_frames_decoded"), 1);

  BatchOptions full = o;
  full.grid_from_first = false;
  full.output = in.dir / "full.h5";
  const BatchResult union_run = run_batch(full);
  EXPECT_EQ(union_run.scan_frames_decoded, first.frames);

  BatchOptions boxed = full;
  boxed.grid.box = grid_from_origin({-60, -60, -60}, {5, 5, 5}, 20.0);
  boxed.output = in.dir / "boxed.h5";
  EXPECT_EQ(run_batch(boxed).scan_frames_decoded, 0u);

  const analysis::BatchFile a(o.output), b(full.output);
  ASSERT_EQ(a.frames().size(), 7u);
  ASSERT_EQ(b.frames().size(), a.frames().size());
  const std::vector<fs::path> sources = {in.dcd, in.xtc, trr};
  std::vector<float> map(a.grid().point_count());
  for (std::size_t i = 0; i < a.frames().size(); ++i) {
    const analysis::FrameRecord &skipped = a.frames()[i], &decoded = b.frames()[i];
    EXPECT_EQ(skipped.source, decoded.source) << i;
    EXPECT_EQ(skipped.frame_index, decoded.frame_index) << i;
    EXPECT_EQ(skipped.time_ps, decoded.time_ps) << i;
    const std::size_t serial = 1 + 2 * i;  // in the stream of three 5-frame files
    const fs::path& source = sources[serial / kFrames];
    const int frame = int(serial % kFrames);
    EXPECT_EQ(skipped.source, source.string()) << i;
    EXPECT_EQ(skipped.frame_index, frame) << i;
    const auto times = test::read_binary<double>(source.string() + ".time");
    EXPECT_NEAR(skipped.time_ps, times[std::size_t(frame)], 1e-3) << i;
    a.read_frame(i, map.data());
    const auto ref = test::reference_direct(frame_atoms(source, frame, in.charges), a.grid(),
                                            make_pair_kernel(o.compute.physics));
    EXPECT_LT(test::relative_l2(map, ref), 2e-6) << "frame " << i;
  }
  fs::remove_all(in.dir);
}

// The XTC frame index kept next to the output: written by the first run, used (not rewritten)
// by a re-run with a step, whose frames equal the sequential run's; rebuilt when the trajectory
// changes.
TEST(BatchTrajectory, FrameIndexCacheNextToTheOutput) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const Inputs in = make_inputs("batch-traj-index");
  if (HasFatalFailure()) return;
  BatchOptions o = options(in, in.dir / "frames.h5");
  o.inputs = {in.topology.string(), in.xtc.string()};
  run_batch(o);
  const auto sequential = frame_maps(o.output);
  const fs::path cache = in.dir / "frames.h5.frame-index";
  ASSERT_TRUE(fs::exists(cache));
  const auto old_time = fs::last_write_time(cache) - std::chrono::hours(1);
  fs::last_write_time(cache, old_time);

  o.overwrite = true;
  o.frames = io::parse_frame_selection("::2");
  const BatchResult stepped = run_batch(o);
  EXPECT_EQ(fs::last_write_time(cache), old_time) << "the cache was rebuilt, not used";
  const auto maps = frame_maps(o.output);
  ASSERT_EQ(maps.size(), std::size_t((kFrames + 1) / 2));
  for (std::size_t k = 0; k < maps.size(); ++k) EXPECT_EQ(maps[k], sequential[2 * k]) << k;
  EXPECT_EQ(stepped.computed, maps.size());

  test::run_mda("write xtc " + in.xtc.string() + " " + std::to_string(kAtoms) + " " +
                std::to_string(kFrames + 2) + " 13");  // another trajectory, longer
  if (HasFatalFailure()) return;
  o.frames = io::parse_frame_selection("::3");
  const BatchResult changed = run_batch(o);
  EXPECT_NE(fs::last_write_time(cache), old_time) << "a stale cache was kept";
  EXPECT_EQ(changed.frames, std::size_t((kFrames + 2 + 2) / 3));
  const analysis::BatchFile file(o.output);
  std::vector<float> map(file.grid().point_count());
  const std::size_t last = changed.frames - 1;
  file.read_frame(last, map.data());
  EXPECT_EQ(file.frames()[last].frame_index, std::int64_t(3 * last));
  const auto xyz = test::read_binary<double>(in.xtc.string() + ".xyz");
  AtomSet atoms;
  for (std::size_t i = 0; i < kAtoms; ++i) {
    const double* p = &xyz[(3 * last * kAtoms + i) * 3];
    atoms.push_back(float(p[0]), float(p[1]), float(p[2]), in.charges.q[i]);
  }
  const auto ref = test::reference_direct(atoms, file.grid(), make_pair_kernel(o.compute.physics));
  EXPECT_LT(test::relative_l2(map, ref), 2e-6);
  fs::remove_all(in.dir);
}

// Memory does not grow with the trajectory: a 48 MB DCD (1000 atoms × 4000 frames) through the
// whole batch, the resident set sampled after every write; after the first 400 frames it may grow
// by a few MB at most (the frame table's records), far less than the 43 MB of coordinates that
// pass after that.
// Issue 35 group 9: an XTC batch that failed after its frames were indexed (here a shard with no
// frame, found once the frames are counted) left the frame-index cache without a batch file.
TEST(BatchTrajectory, FailedBatchLeavesNoFrameIndexCache) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const Inputs in = make_inputs("batch-traj-index-fail");
  if (HasFatalFailure()) return;
  BatchOptions o = options(in, in.dir / "frames.h5");
  o.inputs = {in.topology.string(), in.xtc.string()};
  o.shard = Shard{0, kFrames + 1};  // frames [0, 5/6): none
  EXPECT_THROW(run_batch(o), Error);
  EXPECT_FALSE(fs::exists(o.output));
  EXPECT_FALSE(fs::exists(in.dir / "frames.h5.frame-index"));
  // A batch whose file exists keeps its cache, for --resume and other --frames.
  o.shard.reset();
  run_batch(o);
  EXPECT_TRUE(fs::exists(in.dir / "frames.h5.frame-index"));
  fs::remove_all(in.dir);
}

TEST(BatchTrajectory, LongTrajectoryInBoundedMemory) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "ASan keeps freed memory in quarantine: resident memory is no measure here";
#endif
  const fs::path dir = test::temp_dir("batch-traj-long");
  const std::int32_t atoms = 1000, frames = 4000;
  test::write_synthetic_dcd(dir / "long.dcd", atoms, frames);
  test::write_pqr(dir / "top.pqr", test::random_atoms(std::size_t(atoms), Box{{0, 0, 0}, {9, 9, 9}}, 3));
  BatchOptions o;
  o.inputs = {(dir / "top.pqr").string(), (dir / "long.dcd").string()};
  o.output = dir / "long.h5";
  o.compute.device = "cpu";
  o.stats = false;
  o.grid.box = grid_from_origin({-5, -5, -5}, {4, 4, 4}, 40.0);
  long baseline = -1, peak = 0;
  o.progress = [&](std::size_t done, std::size_t) {
    const long now = test::resident_kb();
    if (done >= std::size_t(frames) / 10 && baseline < 0) baseline = now;
    if (baseline > 0) peak = std::max(peak, now);
  };
  const BatchResult r = run_batch(o);
  EXPECT_EQ(r.computed, std::size_t(frames));
  ASSERT_GT(baseline, 0);
  EXPECT_LT(peak - baseline, 4096) << "resident set grew by " << (peak - baseline) << " kB";
  std::printf("resident set: %ld kB after 10%% of the frames, peak %ld kB\n", baseline, peak);
  fs::remove_all(dir);
}

// The frame table's memory does not depend on the path's length and stays small: a 3-atom DCD
// of many frames under a long folder name, no stats, a 2x2x2 grid, so that the table is what
// grows; the resident set's growth (the highest of the samples taken after every write and at
// the end, above the one before the run) divided by the frames. A short run first, so that the
// heap, HDF5 and the threads are set up before the baseline.
TEST(BatchTrajectory, FrameTableMemoryPerFrame) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "ASan keeps freed memory in quarantine: resident memory is no measure here";
#endif
  const fs::path dir = test::temp_dir("batch-traj-table") / std::string(150, 'd');
  fs::create_directories(dir);
  const std::int32_t frames = 50000;
  test::write_synthetic_dcd(dir / "warm.dcd", 3, 1000);
  test::write_synthetic_dcd(dir / "long.dcd", 3, frames);
  test::write_pqr(dir / "top.pqr", test::random_atoms(3, Box{{0, 0, 0}, {2, 2, 2}}, 3));
  BatchOptions o;
  o.inputs = {(dir / "top.pqr").string(), (dir / "warm.dcd").string()};
  o.output = dir / "warm.h5";
  o.compute.device = "cpu";
  o.stats = false;
  o.grid.box = grid_from_origin({-5, -5, -5}, {2, 2, 2}, 40.0);
  run_batch(o);
  o.inputs.back() = (dir / "long.dcd").string();
  o.output = dir / "long.h5";
  long peak = 0;
  o.progress = [&](std::size_t, std::size_t) { peak = std::max(peak, test::resident_kb()); };
  const long baseline = test::resident_kb();
  const BatchResult r = run_batch(o);
  peak = std::max(peak, test::resident_kb());
  EXPECT_EQ(r.computed, std::size_t(frames));
  const double bytes_per_frame = 1024.0 * double(peak - baseline) / frames;
  std::printf("resident set: %ld kB before, peak %ld kB: %.0f B a frame\n", baseline, peak, bytes_per_frame);
  EXPECT_LT(bytes_per_frame, 64.0);
  fs::remove_all(dir.parent_path());
}

// A trajectory cut inside its last frame, with --allow-truncated: the batch computes the frames
// before it, and the cut one is a row of status missing (reported, never computed).
TEST(BatchTrajectory, TruncatedLastFrameLeavesTheFramesBeforeIt) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const Inputs in = make_inputs("batch-traj-cut");
  if (HasFatalFailure()) return;
  const auto bytes = test::file_bytes(in.xtc);
  test::write_bytes(in.xtc, std::vector<char>(bytes.begin(), bytes.end() - 40));
  BatchOptions o = options(in, in.dir / "cut.h5");
  o.inputs = {in.topology.string(), in.xtc.string()};
  EXPECT_THROW(run_batch(o), Error);  // refused unless allowed (issue 35)
  o.allow_truncated = true;
  const BatchResult r = run_batch(o);
  EXPECT_EQ(r.frames, std::size_t(kFrames));
  EXPECT_EQ(r.computed, std::size_t(kFrames - 1));
  EXPECT_EQ(r.missing, 1u);
  const analysis::BatchFile file(o.output);
  EXPECT_EQ(file.frames()[kFrames - 2].frame_index, kFrames - 2);
  EXPECT_EQ(file.frames().back().frame_index, kFrames - 1);
  EXPECT_EQ(file.frames().back().status, analysis::FrameStatus::missing);
  fs::remove_all(in.dir);
}

namespace {

// A synthetic DCD (test_io_trajectory_util.hpp) of 3 atoms: a 196-byte header, then frames of
// three records (x, y, z) of 4 + 12 + 4 bytes.
constexpr std::size_t kDcdHeader = 196, kDcdFrame = 60;

struct SmallTrajectory {
  fs::path dir, topology, dcd;
};

SmallTrajectory small_trajectory(const std::string& tag, std::int32_t frames) {
  SmallTrajectory t{test::temp_dir(tag), {}, {}};
  t.topology = t.dir / "top.pqr";
  t.dcd = t.dir / "t.dcd";
  test::write_pqr(t.topology, test::random_atoms(3, Box{{0, 0, 0}, {2, 2, 2}}, 3));
  test::write_synthetic_dcd(t.dcd, 3, frames);
  return t;
}

BatchOptions small_options(const SmallTrajectory& t) {
  BatchOptions o;
  o.inputs = {t.topology.string(), t.dcd.string()};
  o.output = t.dir / "b.h5";
  o.compute.device = "cpu";
  o.grid.spacing = 1.0;
  return o;
}

std::string error_of(const BatchOptions& o) {
  try {
    run_batch(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Sets atom `atom`'s x in frame `frame` of a small DCD.
void set_x(const fs::path& dcd, int frame, int atom, float x) {
  std::vector<char> bytes = test::file_bytes(dcd);
  std::memcpy(&bytes[kDcdHeader + kDcdFrame * std::size_t(frame) + 4 + 4 * std::size_t(atom)], &x, 4);
  test::write_bytes(dcd, bytes);
}

}  // namespace

// Issue 35, group 6: a DCD cut mid-frame gave the frames before the cut with exit 0, and with
// `trunc.dcd full.dcd` the stream silently lost the cut file's tail. Now an error naming the file,
// the frame and its byte offset, unless --allow-truncated.
TEST(BatchTrajectory, TruncatedDcdIsAnErrorNamingFileFrameAndOffset) {
  const SmallTrajectory t = small_trajectory("batch-traj-trunc", 5);
  test::write_synthetic_dcd(t.dir / "full.dcd", 3, 5);
  const std::vector<char> bytes = test::file_bytes(t.dcd);
  test::write_bytes(t.dcd, std::vector<char>(bytes.begin(), bytes.end() - 10));
  BatchOptions o = small_options(t);
  o.inputs.push_back((t.dir / "full.dcd").string());
  const std::string e = error_of(o);
  EXPECT_NE(e.find(t.dcd.string() + ": frame 4 at byte offset " + std::to_string(kDcdHeader + 4 * kDcdFrame) +
                   " is truncated"),
            std::string::npos) << e;
  EXPECT_NE(e.find("--allow-truncated"), std::string::npos) << e;
  EXPECT_EQ(test::listing(t.dir), (std::vector<std::string>{"full.dcd", "t.dcd", "top.pqr"}));
  o.allow_truncated = true;
  o.grid.box = grid_from_origin({-2, -2, -2}, {4, 4, 4}, 1.0);  // one grid for the run below too
  const BatchResult r = run_batch(o);
  EXPECT_EQ(r.computed, 9u);
  EXPECT_EQ(r.missing, 1u);
  // The table never hides the gap: the cut-off frame is a row of its own, where the stream lost it.
  const analysis::BatchFile file(o.output);
  ASSERT_EQ(file.frames().size(), 10u);
  EXPECT_EQ(file.frames()[3].frame_index, 3);
  const analysis::FrameRecord cut = file.frames()[4];
  EXPECT_EQ(cut.source, t.dcd.string());
  EXPECT_EQ(cut.frame_index, 4);
  EXPECT_EQ(cut.status, analysis::FrameStatus::missing);
  EXPECT_NE(cut.message.find("frame 4 at byte offset " + std::to_string(kDcdHeader + 4 * kDcdFrame)),
            std::string::npos) << cut.message;
  EXPECT_EQ(file.frames().source(5).path, (t.dir / "full.dcd").string());
  EXPECT_EQ(file.frames()[5].frame_index, 0);
  // The rows after the gap hold full.dcd's frames: the same maps as a batch of full.dcd alone.
  BatchOptions alone = o;
  alone.inputs = {t.topology.string(), (t.dir / "full.dcd").string()};
  alone.output = t.dir / "alone.h5";
  run_batch(alone);
  const auto with_gap = frame_maps(o.output), full = frame_maps(alone.output);
  for (std::size_t f = 0; f < full.size(); ++f) EXPECT_EQ(with_gap[5 + f], full[f]) << "frame " << f;
  // A part of a batch counts its frames in the stream: refused while frames are missing.
  o.output = t.dir / "part.h5";
  o.shard = Shard{0, 2};
  EXPECT_NE(error_of(o).find("cut-off frame"), std::string::npos) << error_of(o);
  fs::remove_all(t.dir);
}

// Issue 35, group 7: an atom 5,000 Å away in a DCD frame grew the grid instead of being refused,
// and an inf or 1e30 coordinate stopped the batch with "the box with padding spans inf Å", naming
// no file, frame or atom. Now the main command's checks, with the file, frame and atom.
TEST(BatchTrajectory, FarOrOverflowingCoordinateNamesFileFrameAndAtom) {
  const SmallTrajectory t = small_trajectory("batch-traj-far", 4);
  BatchOptions o = small_options(t);
  set_x(t.dcd, 2, 1, 5000.0f);
  std::string e = error_of(o);
  EXPECT_NE(e.find(t.dcd.string() + " (frame 2): atom 2 at (5000, "), std::string::npos) << e;
  EXPECT_NE(e.find("from every other atom"), std::string::npos) << e;
  for (const float bad : {std::numeric_limits<float>::infinity(), 1e30f}) {
    set_x(t.dcd, 2, 1, bad);
    e = error_of(o);
    EXPECT_NE(e.find(t.dcd.string() + " (frame 2): atom 2 at ("), std::string::npos) << e;
    EXPECT_NE(e.find("lies beyond ±1e18 Å"), std::string::npos) << e;
  }
  // With a box, frames are decoded only when computed: the frame fails with the same message.
  o.grid.box = grid_from_origin({-2, -2, -2}, {4, 4, 4}, 1.0);
  const BatchResult r = run_batch(o);
  EXPECT_EQ(r.failed, 1u);
  EXPECT_NE(r.failures.at(0).message.find("(frame 2): atom 2 at"), std::string::npos) << r.failures.at(0).message;
  fs::remove_all(t.dir);
}
