// run_batch: frames against the engine run directly, the shared grid, list files, failed frames,
// fail-fast, resume checks, stats and ensemble maps in the file, and recovery after kill -9 at
// every step of the writer (real SIGKILL in a child process, then resume: byte-identical).
#include <gtest/gtest.h>

#include <fstream>
#include <omp.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

#include "app/batch/resume.hpp"
#include "dcsgrid/app/batch.hpp"
#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/analysis/ensemble.hpp"
#include "dcsgrid/analysis/stats.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/engine/cpu_backend.hpp"
#include "dcsgrid/engine/cuda_backend.hpp"
#include "dcsgrid/io/hdf5/open.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/files/sha256.hpp"
#include "dcsgrid/io/structure/read.hpp"
#include "dcsgrid/io/maps/reader.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"
#include "test_io_trajectory_util.hpp"

using namespace dcsgrid;
using namespace dcsgrid::analysis;
using namespace dcsgrid::app;
namespace fs = std::filesystem;

namespace {

// Three small structures in different places, written as PQR files in dir.
std::vector<std::string> write_frames(const fs::path& dir, int count = 3, std::uint64_t seed = 1,
                                      std::size_t atoms_per_frame = 12) {
  std::vector<std::string> files;
  for (int f = 0; f < count; ++f) {
    const double shift = 1.5 * f;
    const AtomSet atoms =
        test::random_atoms(atoms_per_frame, Box{{shift, 0, -1}, {shift + 4, 3, 2}}, seed + f);
    const fs::path path = dir / ("frame" + std::to_string(f) + ".pqr");
    test::write_pqr(path, atoms);
    files.push_back(path.string());
  }
  return files;
}

// write_frames' frames, frame `bad` of them an unreadable PQR.
std::vector<std::string> write_frames_one_bad(const fs::path& dir, int count, std::uint64_t seed,
                                              std::size_t atoms_per_frame, int bad) {
  std::vector<std::string> files = write_frames(dir, count, seed, atoms_per_frame);
  test::write_text(files[std::size_t(bad)], "ATOM      1  C   MOL A   1       1.000   2.000   x.000  0.5 1.7\n");
  return files;
}

BatchOptions cpu_options(const std::vector<std::string>& inputs, const fs::path& output) {
  BatchOptions o;
  o.inputs = inputs;
  o.output = output;
  o.compute.device = "cpu";
  o.grid.spacing = 0.5;
  o.grid.padding = 2.0;
  o.histogram.bins = 16;
  return o;
}

#ifdef DCSGRID_HAVE_CUDA
BatchOptions gpu_options(const std::vector<std::string>& inputs, const fs::path& output) {
  BatchOptions o = cpu_options(inputs, output);
  o.compute.device = "gpu";
  return o;
}
#endif

std::vector<float> frame_data(const BatchFile& file, std::size_t i) {
  std::vector<float> out(file.grid().point_count());
  file.read_frame(i, out.data());
  return out;
}

// The potential of one input file on grid, from the CPU engine called directly.
std::vector<float> direct_map(const std::string& file, const GridSpec& grid, const Physics& physics) {
  const io::Structure s = io::read_structure(file);
  engine::PotentialRequest request;
  request.atoms = &s.atoms;
  request.grid = grid;
  request.physics = physics;
  auto backend = engine::make_cpu_backend();
  return engine::compute_grid(*backend, request);
}

// Everything a batch file stores for its complete frames, for exact comparison.
struct Contents {
  std::vector<FrameStatus> status;
  std::vector<std::vector<float>> frames;
  std::vector<std::size_t> atoms;
  std::vector<double> charges;
  std::vector<MapStats> stats;
};
Contents contents(const fs::path& path) {
  Contents c;
  BatchFile file(path);
  for (std::size_t i = 0; i < file.frames().size(); ++i) {
    const FrameRecord& r = file.frames()[i];
    c.status.push_back(r.status);
    c.frames.push_back(r.status == FrameStatus::complete ? frame_data(file, i) : std::vector<float>{});
    c.atoms.push_back(r.atom_count);
    c.charges.push_back(r.total_charge);
  }
  if (auto stored = read_stored_stats(path)) c.stats = stored->maps;
  return c;
}

void expect_same_bytes(const Contents& a, const Contents& b) {
  ASSERT_EQ(a.status, b.status);
  ASSERT_EQ(a.frames.size(), b.frames.size());
  for (std::size_t i = 0; i < a.frames.size(); ++i) {
    ASSERT_EQ(a.frames[i].size(), b.frames[i].size());
    if (a.frames[i].empty()) continue;  // a failed frame has no map
    EXPECT_EQ(0, std::memcmp(a.frames[i].data(), b.frames[i].data(), a.frames[i].size() * sizeof(float)))
        << "frame " << i;
  }
  EXPECT_EQ(a.atoms, b.atoms);
  EXPECT_EQ(a.charges, b.charges);
  ASSERT_EQ(a.stats.size(), b.stats.size());
  for (std::size_t i = 0; i < a.stats.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(&a.stats[i].min, &b.stats[i].min, sizeof(double)));
    EXPECT_EQ(0, std::memcmp(&a.stats[i].stddev, &b.stats[i].stddev, sizeof(double)));
    EXPECT_EQ(a.stats[i].counts, b.stats[i].counts);
    EXPECT_EQ(a.stats[i].edges, b.stats[i].edges);
  }
}

}  // namespace

TEST(Batch, FramesMatchTheEngineOnTheUnionGrid) {
  const fs::path dir = test::temp_dir("batch-basic");
  const auto files = write_frames(dir);
  BatchOptions o = cpu_options(files, dir / "out.h5");
  o.ensemble = true;
  const BatchResult r = run_batch(o);
  EXPECT_EQ(r.frames, 3u);
  EXPECT_EQ(r.computed, 3u);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_GT(r.frames_per_second, 0);
  EXPECT_EQ(r.to_json()["computed"], 3);

  BatchFile file(o.output);
  const GridSpec& g = file.grid();
  // The grid covers every frame's atoms plus the padding.
  for (const auto& f : files) {
    const Box b = bounding_box(io::read_structure(f).atoms);
    for (int a = 0; a < 3; ++a) {
      EXPECT_LE(g.origin[a], b.lo[a] - o.grid.padding + 1e-6);
      EXPECT_GE(g.far_corner()[a], b.hi[a] + o.grid.padding - 1e-6);
    }
  }
  std::vector<std::vector<float>> maps;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const FrameRecord& rec = file.frames()[i];
    EXPECT_EQ(rec.status, FrameStatus::complete);
    EXPECT_EQ(rec.source, files[i]);
    EXPECT_EQ(rec.atom_count, 12u);
    EXPECT_EQ(rec.input_sha256, io::sha256_file(files[i]));
    const io::Structure s = io::read_structure(files[i]);
    EXPECT_NEAR(rec.total_charge, s.atoms.total_charge(), 1e-12);
    maps.push_back(frame_data(file, i));
    EXPECT_EQ(maps.back(), direct_map(files[i], g, o.compute.physics)) << "frame " << i;
    // And the engine itself against float64.
    const auto ref = test::reference_direct(s.atoms, g, make_pair_kernel(o.compute.physics));
    EXPECT_LT(test::relative_l2(maps.back(), ref), 1e-5);
  }
  // Stats stored per frame equal map_stats of the frame.
  const auto stored = read_stored_stats(o.output);
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->maps.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const MapStats s = map_stats(maps[i], o.histogram);
    EXPECT_EQ(stored->maps[i].min, s.min);
    EXPECT_EQ(stored->maps[i].max, s.max);
    EXPECT_EQ(stored->maps[i].mean, s.mean);
    EXPECT_EQ(stored->maps[i].stddev, s.stddev);
    EXPECT_EQ(stored->maps[i].counts, s.counts);
    EXPECT_EQ(stored->maps[i].edges, s.edges);
  }
  // Ensemble maps were written (their values are checked in EnsembleMapsAgainstNaiveLoop).
  EXPECT_EQ(file.ensemble_frames(), 3u);
  io::MapReader reader(o.output);
  EXPECT_EQ(reader.size(), 3u);
  EXPECT_EQ(reader.label(1), o.output.string() + "#1");
}

TEST(Batch, EnsembleMapsAgainstNaiveLoop) {
  const fs::path dir = test::temp_dir("batch-ensemble");
  const auto files = write_frames(dir, 4, 7);
  BatchOptions o = cpu_options(files, dir / "out.h5");
  o.ensemble = true;
  run_batch(o);
  BatchFile file(o.output);
  const std::size_t n = file.grid().point_count();
  std::vector<std::vector<float>> maps;
  for (std::size_t i = 0; i < 4; ++i) maps.push_back(frame_data(file, i));
  // Written into the batch file, and to separate files by compute_ensemble: both agree with a
  // two-pass float64 computation.
  const EnsembleResult e = compute_ensemble({o.output, dir / "mean.h5", dir / "std.h5"});
  EXPECT_EQ(e.frames, 4u);
  const io::MapFile mean = io::read_hdf5(dir / "mean.h5"), stddev = io::read_hdf5(dir / "std.h5");
  ASSERT_EQ(mean.data.size(), n);
  EXPECT_TRUE(mean.grid.same_as(file.grid()));
  double max_std = 0;
  for (std::size_t p = 0; p < n; ++p) {
    double m = 0;
    for (const auto& map : maps) m += map[p];
    m /= 4;
    double v = 0;
    for (const auto& map : maps) v += (map[p] - m) * (map[p] - m);
    const double s = std::sqrt(v / 4);
    max_std = std::max(max_std, s);
    ASSERT_NEAR(mean.data[p], m, 1e-6 * (1 + std::abs(m))) << p;
    ASSERT_NEAR(stddev.data[p], s, 1e-5 * (1 + s)) << p;
  }
  EXPECT_NEAR(e.max_std, max_std, 1e-5 * max_std);
}

// --threads reaches the compute stage, which runs on a thread of its own (OpenMP's count is per
// thread: it computed on every core whatever --threads said, and every MPI rank did too).
TEST(Batch, ThreadCountReachesTheComputeStage) {
  if (omp_get_num_procs() < 2) GTEST_SKIP() << "one core: every thread count is 1";
  const fs::path dir = test::temp_dir("batch-threads");
  BatchOptions o = cpu_options(write_frames(dir, 2), dir / "out.h5");
  o.compute.threads = 1;
  const BatchResult r = run_batch(o);
  EXPECT_EQ(r.device, "CPU, 1 threads");
  fs::remove_all(dir);
}

// Frames dealt to several workers (backends on threads of their own) come out as one worker's: the
// file is the same byte for byte, a failed frame included, whichever worker took which frame.
TEST(Batch, FramesDealtToSeveralWorkersGiveTheSameFile) {
  const fs::path dir = test::temp_dir("batch-workers");
  const std::vector<std::string> files = write_frames_one_bad(dir, 7, 5, 60, 3);
  BatchOptions one = cpu_options(files, dir / "one.h5");
  const BatchResult r1 = run_batch(one);
  EXPECT_EQ(r1.computed, 6u);
  EXPECT_EQ(r1.failed, 1u);
  BatchOptions three = cpu_options(files, dir / "three.h5");
  three.frame_workers = 3;
  const BatchResult r3 = run_batch(three);
  EXPECT_EQ(r3.computed, 6u);
  EXPECT_EQ(r3.failed, 1u);
  expect_same_bytes(contents(one.output), contents(three.output));
  fs::remove_all(dir);
}

// --average: the mean and standard deviation maps equal those computed here in float64 from the
// frames of a batch file of the same inputs, a failed frame left out; frames dealt to two workers.
TEST(Batch, AverageIsTheMeanOfTheBatchFilesFrames) {
  const fs::path dir = test::temp_dir("batch-average");
  const std::vector<std::string> files = write_frames_one_bad(dir, 6, 11, 40, 2);
  BatchOptions all = cpu_options(files, dir / "all.h5");
  run_batch(all);
  BatchOptions average = cpu_options(files, dir / "mean.h5");
  average.average = average.average_std = true;
  average.frame_workers = 2;
  const BatchResult r = run_batch(average);
  EXPECT_EQ(r.computed, 5u);
  EXPECT_EQ(r.failed, 1u);
  const io::MapFile mean = io::read_map(dir / "mean.h5");
  io::MapSelector std_dataset;
  std_dataset.dataset = "potential_std";
  const io::MapFile stddev = io::read_map(dir / "mean.h5", std_dataset);
  BatchFile file(all.output);
  ASSERT_TRUE(mean.grid.same_as(file.grid()));
  const std::size_t n = file.grid().point_count();
  std::vector<double> sum(n), squares(n);
  for (std::size_t f = 0; f < file.frames().size(); ++f) {
    if (file.frames()[f].status != FrameStatus::complete) continue;
    const std::vector<float> v = frame_data(file, f);
    for (std::size_t p = 0; p < n; ++p) sum[p] += v[p], squares[p] += double(v[p]) * v[p];
  }
  for (std::size_t p = 0; p < n; ++p) {
    const double m = sum[p] / 5, s = std::sqrt(std::max(0.0, squares[p] / 5 - m * m));
    ASSERT_NEAR(mean.data[p], m, 1e-6 * (std::abs(m) + 1e-3)) << p;
    ASSERT_NEAR(stddev.data[p], s, 1e-5 * (s + std::abs(m)) + 1e-7) << p;
  }
  fs::remove_all(dir);
}

// batch --average takes the frames in frame order through the pipeline (whose order
// test_app_batch_pipeline checks), with four workers as with one: the mean and standard deviation
// are the same bit for bit. The first frame is the largest (3,000 atoms against 12), so that
// with four workers later frames finish before it and wait for it.
TEST(Batch, AverageIsTheSameBitForBitWhateverTheWorkers) {
  const fs::path dir = test::temp_dir("batch-average-order");
  std::vector<std::string> files = write_frames(dir, 40, 21, 12);
  test::write_pqr(files[0], test::random_atoms(3000, Box{{0, 0, -1}, {62, 3, 2}}, 20));
  std::vector<io::MapFile> means, stds;
  for (const std::size_t workers : {1, 4}) {
    BatchOptions o = cpu_options(files, dir / ("mean" + std::to_string(workers) + ".h5"));
    o.average = o.average_std = true;
    o.frame_workers = workers;
    ASSERT_EQ(run_batch(o).computed, 40u);
    io::MapSelector std_dataset;
    std_dataset.dataset = "potential_std";
    means.push_back(io::read_map(o.output));
    stds.push_back(io::read_map(o.output, std_dataset));
  }
  ASSERT_EQ(means[0].data.size(), means[1].data.size());
  EXPECT_TRUE(means[0].data == means[1].data);
  EXPECT_TRUE(stds[0].data == stds[1].data);
  fs::remove_all(dir);
}

// batch --average stopped by a failed frame (--fail-fast) keeps its sums beside the output; a run
// without --resume refuses to lose them; --resume computes only the frames not yet summed, and
// while a frame still fails writes the mean of the others and keeps the sums, so that a last
// --resume, after the frame's file is mended, retries it alone and writes the mean of all.
TEST(Batch, StoppedAverageResumesFromItsSums) {
  const fs::path dir = test::temp_dir("batch-average-resume");
  const std::vector<std::string> files = write_frames(dir, 6, 17, 40);
  BatchOptions all = cpu_options(files, dir / "all.h5");
  run_batch(all);
  BatchFile file(all.output);
  const std::vector<char> good_bytes = test::file_bytes(files[3]);
  const std::string good(good_bytes.begin(), good_bytes.end());
  test::write_text(files[3], "ATOM      1  C   MOL A   1       1.000   2.000   x.000  0.5 1.7\n");

  BatchOptions average = cpu_options(files, dir / "mean.dx");
  average.average = average.fail_fast = true;
  average.frame_workers = 1;
  average.grid.box = file.grid();  // the frames' box, as the mended frame gives it
  const fs::path sums = dir / "mean.dx.sums.h5";
  try {
    run_batch(average);
    FAIL() << "the failed frame did not stop the run";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the sums of 3 frames are kept in " + sums.string()), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::exists(sums));
  EXPECT_FALSE(fs::exists(average.output));
  average.fail_fast = false;
  try {
    run_batch(average);
    FAIL() << "a run without --resume replaced the stopped run's sums";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("use --resume to continue it or --overwrite"), std::string::npos) << e.what();
  }
  // A summed frame's input changed since (the checksums the stopped run saved were taken on a
  // thread beside the frames): its sum no longer stands for it, and the resume is refused.
  average.resume = true;
  const std::vector<char> first_bytes = test::file_bytes(files[0]);
  const std::string first(first_bytes.begin(), first_bytes.end());
  test::write_text(files[0], first + "REMARK changed\n");
  const std::string changed = test::error_message([&] { run_batch(average); });  // "" if it ran
  EXPECT_NE(changed.find("input " + files[0] + " changed since its frame 0 was summed"), std::string::npos)
      << changed;
  test::write_text(files[0], first);

  const BatchResult still_failing = run_batch(average);
  EXPECT_EQ(still_failing.computed, 2u);  // frames 4 and 5
  EXPECT_EQ(still_failing.failed, 1u);
  EXPECT_TRUE(fs::exists(average.output) && fs::exists(sums));
  test::write_text(files[3], good);
  const BatchResult r = run_batch(average);
  EXPECT_EQ(r.computed, 1u);  // frame 3
  EXPECT_FALSE(fs::exists(sums));
  const io::MapFile mean = io::read_map(average.output);
  const std::size_t n = file.grid().point_count();
  std::vector<double> expected(n);
  for (std::size_t f = 0; f < 6; ++f) {
    const std::vector<float> v = frame_data(file, f);
    for (std::size_t p = 0; p < n; ++p) expected[p] += v[p] / 6.0;
  }
  for (std::size_t p = 0; p < n; ++p)
    ASSERT_NEAR(mean.data[p], expected[p], 1e-6 * (std::abs(expected[p]) + 1e-3)) << p;
  fs::remove_all(dir);
}

// The mean cannot be written (its path became a directory while the frames ran): the summed
// frames are kept, and --resume, once the path is free, writes the mean without computing again.
TEST(Batch, AverageThatCannotBeWrittenKeepsItsSums) {
  const fs::path dir = test::temp_dir("batch-average-unwritable");
  const std::vector<std::string> files = write_frames(dir, 4, 23, 40);
  BatchOptions average = cpu_options(files, dir / "mean.dx");
  average.average = true;
  average.progress = [&](std::size_t done, std::size_t total) {
    if (done == total) fs::create_directories(average.output);
  };
  const fs::path sums = dir / "mean.dx.sums.h5";
  const std::string unwritable = test::error_message([&] { run_batch(average); });  // "" if it ran
  EXPECT_NE(unwritable.find("the sums of 4 frames are kept in " + sums.string()), std::string::npos) << unwritable;
  EXPECT_TRUE(fs::exists(sums));
  fs::remove(average.output);
  average.progress = nullptr;
  average.resume = true;
  const BatchResult r = run_batch(average);
  EXPECT_EQ(r.computed, 0u);
  EXPECT_TRUE(fs::is_regular_file(average.output));
  EXPECT_FALSE(fs::exists(sums));
  BatchOptions all = cpu_options(files, dir / "all.h5");
  run_batch(all);
  BatchFile file(all.output);
  const io::MapFile mean = io::read_map(average.output);
  const std::size_t n = file.grid().point_count();
  ASSERT_EQ(mean.data.size(), n);
  for (std::size_t p = 0; p < n; ++p) {
    double expected = 0;
    for (std::size_t f = 0; f < 4; ++f) expected += frame_data(file, f)[p] / 4.0;
    ASSERT_NEAR(mean.data[p], expected, 1e-6 * (std::abs(expected) + 1e-3)) << p;
  }
  fs::remove_all(dir);
}

TEST(Batch, ListFilesExplicitGridAndModels) {
  const fs::path dir = test::temp_dir("batch-list");
  const auto files = write_frames(dir, 2);
  fs::create_directories(dir / "sub");
  test::write_text(dir / "sub" / "list.txt",
                   "# frames\n../frame1.pqr   \n\n" + files[0] + "  # absolute\n");
  const auto expanded = expand_inputs({"@" + (dir / "sub" / "list.txt").string()});
  ASSERT_EQ(expanded.size(), 2u);
  EXPECT_EQ(fs::weakly_canonical(expanded[0]), fs::weakly_canonical(files[1]));
  EXPECT_EQ(expanded[1], files[0]);
  EXPECT_THROW(expand_inputs({"@" + (dir / "missing.txt").string()}), InputError);

  // A two-model file with models_all, an explicit grid.
  const AtomSet m1 = test::random_atoms(5, Box{{0, 0, 0}, {2, 2, 2}}, 11);
  const AtomSet m2 = test::random_atoms(7, Box{{1, 0, 0}, {3, 2, 2}}, 12);
  test::write_text(dir / "models.pqr", test::pqr_text({m1, m2}));
  BatchOptions o = cpu_options({(dir / "models.pqr").string(), files[0]}, dir / "out.h5");
  o.models_all = true;
  o.grid.box = grid_from_origin({-3, -3, -3}, {13, 11, 11}, 0.75);
  const BatchResult r = run_batch(o);
  EXPECT_EQ(r.frames, 3u);
  BatchFile file(o.output);
  EXPECT_TRUE(file.grid().same_as(*o.grid.box));
  EXPECT_EQ(file.frames()[0].model, 1);
  EXPECT_EQ(file.frames()[1].model, 2);
  EXPECT_EQ(file.frames()[1].atom_count, 7u);
  EXPECT_EQ(file.frames()[2].source, files[0]);
  const auto ref = test::reference_direct(test::as_stored(m2), *o.grid.box, make_pair_kernel(o.compute.physics));
  EXPECT_LT(test::relative_l2(frame_data(file, 1), ref), 1e-5);
}

TEST(Batch, FailedFramesAreRecordedAndFailFastStops) {
  const fs::path dir = test::temp_dir("batch-fail");
  auto files = write_frames(dir, 3);
  test::write_text(dir / "bad.pqr", "ATOM      1  C   MOL A   1       1.000   2.000   x.000  0.5 1.7\n");
  files.insert(files.begin() + 1, (dir / "bad.pqr").string());
  files.push_back((dir / "missing.pqr").string());
  BatchOptions o = cpu_options(files, dir / "out.h5");
  const BatchResult r = run_batch(o);
  EXPECT_EQ(r.computed, 3u);
  EXPECT_EQ(r.failed, 2u);
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[0].source, files[1]);
  EXPECT_NE(r.failures[0].message.find("bad.pqr:1"), std::string::npos) << r.failures[0].message;
  BatchFile file(o.output);
  EXPECT_EQ(file.frames()[1].status, FrameStatus::failed);
  EXPECT_EQ(file.frames()[1].message, r.failures[0].message.substr(0, 255));
  EXPECT_EQ(file.frames()[4].status, FrameStatus::failed);
  EXPECT_EQ(file.frames()[2].status, FrameStatus::complete);
  EXPECT_EQ(io::MapReader(o.output).size(), 3u);

  o.output = dir / "fast.h5";
  o.fail_fast = true;
  try {
    run_batch(o);
    FAIL() << "fail_fast did not stop the batch";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.pqr"), std::string::npos) << e.what();
  }
  BatchFile fast(o.output);
  EXPECT_EQ(fast.frames()[0].status, FrameStatus::complete);
  EXPECT_EQ(fast.frames()[1].status, FrameStatus::failed);
  EXPECT_EQ(fast.frames()[3].status, FrameStatus::pending);  // never written
}

TEST(Batch, ResumeChecksOptionsAndInputs) {
  const fs::path dir = test::temp_dir("batch-resume-check");
  const auto files = write_frames(dir, 3);
  BatchOptions o = cpu_options(files, dir / "out.h5");
  run_batch(o);
  EXPECT_THROW(run_batch(o), Error);  // exists, neither resume nor overwrite

  BatchOptions changed = o;
  changed.resume = true;
  changed.compute.physics.dielectric = 4;
  try {
    run_batch(changed);
    FAIL() << "a resume with another dielectric was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("physics"), std::string::npos) << e.what();
  }
  changed = o;
  changed.resume = true;
  changed.inputs.pop_back();
  EXPECT_THROW(run_batch(changed), Error);

  // Nothing left to do: a resume computes nothing.
  BatchOptions again = o;
  again.resume = true;
  const BatchResult r = run_batch(again);
  EXPECT_EQ(r.computed, 0u);
  EXPECT_EQ(r.skipped, 3u);

  // An input of a complete frame changed on disk.
  test::write_pqr(files[2], test::random_atoms(3, Box{{0, 0, 0}, {1, 1, 1}}, 99));
  try {
    run_batch(again);
    FAIL() << "a changed input was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("frame2.pqr"), std::string::npos) << e.what();
  }
  BatchOptions over = o;
  over.overwrite = true;
  EXPECT_EQ(run_batch(over).computed, 3u);
}

// The fingerprint a resume checks holds the options of the group the method reads (its description's
// `options`), under the names older files recorded, and no other method's: pb's options count too
// (a resume with another solvent dielectric was accepted before), direct's run ignores --cutoff.
TEST(Batch, FingerprintHoldsTheMethodsOwnOptions) {
  const std::vector<std::string> files{"a.pqr"};
  BatchOptions o;
  o.compute.methods = {engine::Method::direct};
  const nlohmann::json direct = options_fingerprint(o, files);
  o.compute.cutoff.radius += 1;
  EXPECT_EQ(options_fingerprint(o, files).dump(), direct.dump());  // as JSON text: NaN ends are null
  EXPECT_FALSE(direct.contains("cutoff") || direct.contains("msm") || direct.contains("pb"));

  o.compute.methods = {engine::Method::cutoff};
  const nlohmann::json cutoff = options_fingerprint(o, files);
  EXPECT_EQ(cutoff["cutoff"]["radius"], o.compute.cutoff.radius);
  EXPECT_FALSE(cutoff.contains("msm"));

  o.compute.methods = {engine::Method::msm};
  EXPECT_EQ(options_fingerprint(o, files)["msm"]["order"], o.compute.msm.order);

  o.compute.methods = {engine::Method::pme};
  EXPECT_EQ(options_fingerprint(o, files)["periodic"]["pme_order"], o.compute.periodic.pme_order);

  o.compute.methods = {engine::Method::pb};
  const nlohmann::json pb = options_fingerprint(o, files);
  o.compute.pb.sdie = 40;
  const nlohmann::json other_solvent = options_fingerprint(o, files);
  ASSERT_TRUE(pb.contains("pb"));
  EXPECT_NE(pb["pb"], other_solvent["pb"]);
}

// An interruption inside the process (the hook throws while frame 2 is half written), then a
// resume: the file equals an uninterrupted run byte for byte. Frames written in one group with
// frame 2 (their data flushed together) are not complete either: only whole groups complete.
TEST(Batch, ResumeAfterInterruptionIsByteIdentical) {
  const fs::path dir = test::temp_dir("batch-resume");
  const auto files = write_frames(dir, 4);
  BatchOptions o = cpu_options(files, dir / "reference.h5");
  run_batch(o);

  BatchOptions cut = cpu_options(files, dir / "cut.h5");
  cut.step_hook = [](std::size_t frame, WriteStep step) {
    if (frame == 2 && step == WriteStep::data_flushed) throw std::runtime_error("interrupted");
  };
  EXPECT_THROW(run_batch(cut), std::runtime_error);
  std::size_t complete = 0;
  {
    BatchFile file(cut.output);
    EXPECT_EQ(file.frames()[2].status, FrameStatus::pending);
    EXPECT_EQ(file.frames()[3].status, FrameStatus::pending);
    for (const auto& f : file.frames()) complete += f.status == FrameStatus::complete;
  }
  cut.step_hook = {};
  cut.resume = true;
  const BatchResult r = run_batch(cut);
  EXPECT_EQ(r.skipped, complete);
  EXPECT_EQ(r.computed, 4u - complete);
  expect_same_bytes(contents(o.output), contents(cut.output));
}

#ifdef DCSGRID_HAVE_CUDA
// The GPU backend in the pipeline: frames agree with the float64 reference, and an interrupted
// batch resumed on the GPU equals an uninterrupted GPU batch byte for byte (the engine is
// deterministic).
TEST(BatchGpu, FramesAndResume) {
  DCSGRID_REQUIRE_GPU();
  const fs::path dir = test::temp_dir("batch-gpu");
  const auto files = write_frames(dir, 4, 3, 200);
  BatchOptions o = gpu_options(files, dir / "reference.h5");
  const BatchResult r = run_batch(o);
  EXPECT_EQ(r.computed, 4u);
  EXPECT_NE(r.device.find("cuda"), std::string::npos) << r.device;
  {
    BatchFile file(o.output);
    for (std::size_t i = 0; i < files.size(); ++i) {
      const io::Structure s = io::read_structure(files[i]);
      const auto ref = test::reference_direct(s.atoms, file.grid(), make_pair_kernel(o.compute.physics));
      EXPECT_LT(test::relative_l2(frame_data(file, i), ref), 1e-5) << "frame " << i;
    }
  }
  BatchOptions cut = o;
  cut.output = dir / "cut.h5";
  cut.step_hook = [](std::size_t frame, WriteStep step) {
    if (frame == 1 && step == WriteStep::data_flushed) throw std::runtime_error("interrupted");
  };
  EXPECT_THROW(run_batch(cut), std::runtime_error);
  // Frames written in one group share their flushes: frame 0 is complete only if it was written
  // in a group before frame 1's (how the frames group depends on the machine's timing).
  std::size_t complete = 0;
  {
    BatchFile file(cut.output);
    EXPECT_EQ(file.frames()[1].status, FrameStatus::pending);
    for (const auto& f : file.frames()) complete += f.status == FrameStatus::complete;
  }
  cut.step_hook = {};
  cut.resume = true;
  EXPECT_EQ(run_batch(cut).computed, 4u - complete);
  expect_same_bytes(contents(o.output), contents(cut.output));
}

// Frames computed whole on the GPU and copied to the host once, their statistics taken there: each
// map equals the slab path's (a fresh GPU backend's run) bit for bit, and each frame's stored
// statistics equal map_stats of its stored map bit for bit (grids of two statistics blocks and a
// tail, so the device's lanes, tails and block order are all used).
TEST(BatchGpu, MapsPassThroughTheDeviceWithTheirStatistics) {
  DCSGRID_REQUIRE_GPU();
  const fs::path dir = test::temp_dir("batch-gpu-through");
  const auto files = write_frames(dir, 5, 11, 400);
  BatchOptions o = gpu_options(files, dir / "through.h5");
  o.grid.spacing = 0.2;
  o.histogram.bins = 33;
  o.frame_workers = 2;
  const BatchResult r = run_batch(o);
  EXPECT_EQ(r.computed, 5u);
  EXPECT_TRUE(r.maps_through_device);
  BatchFile file(o.output);
  ASSERT_GT(file.grid().point_count(), std::size_t(65536));
  const std::vector<analysis::MapStats> stored = file.stats();
  const auto backend = engine::make_backend("gpu", {0});
  for (std::size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(i);
    const io::Structure s = io::read_structure(files[i]);
    engine::PotentialRequest request;
    request.atoms = &s.atoms;
    request.grid = file.grid();
    request.physics = o.compute.physics;
    request.method = engine::Method::direct;
    const std::vector<float> map = frame_data(file, i);
    EXPECT_TRUE(map == engine::compute_grid(*backend, request));
    const analysis::MapStats host = analysis::map_stats(map, o.histogram);
    const analysis::MapStats& got = stored.at(i);
    EXPECT_EQ(got.count, host.count);
    EXPECT_EQ(got.non_finite, host.non_finite);
    for (const auto& [a, b] : {std::pair{got.min, host.min}, {got.max, host.max}, {got.mean, host.mean},
                               {got.stddev, host.stddev}})
      EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << a << " vs " << b;
    EXPECT_EQ(got.counts, host.counts);
    EXPECT_EQ(got.below, host.below);
    EXPECT_EQ(got.above, host.above);
  }
  fs::remove_all(dir);
}

// Frames dealt to two workers on every GPU (two backends sharing each one): the same file as one
// worker on GPU 0, and every GPU named.
TEST(BatchGpu, WorkersOnEveryGpuGiveTheSameFile) {
  DCSGRID_REQUIRE_GPU();
  const fs::path dir = test::temp_dir("batch-gpu-workers");
  const auto files = write_frames(dir, 9, 7, 300);
  BatchOptions one = gpu_options(files, dir / "one.h5");
  one.compute.gpus = {0};
  run_batch(one);
  BatchOptions every = gpu_options(files, dir / "every.h5");
  const int gpus = engine::cuda_device_count();
  every.frame_workers = 2 * std::size_t(gpus);
  const BatchResult r = run_batch(every);
  EXPECT_EQ(r.computed, 9u);
  for (int g = 0; g < gpus; ++g)
    EXPECT_NE(r.device.find("GPU " + std::to_string(g)), std::string::npos) << r.device;
  expect_same_bytes(contents(one.output), contents(every.output));
  fs::remove_all(dir);
}

// batch --average on a GPU: the frames stay there and are added into float64 sums there. Against
// the frames of a GPU batch file of the same inputs (the engine is deterministic), summed here as
// the sums promise, term by term: the mean is the same bit for bit, the standard deviation within
// the rounding of its last steps (the host's subtraction of m² may be fused). A failed frame is
// left out; two workers share the GPU.
TEST(BatchGpu, AverageAddsTheFramesOnTheDevice) {
  DCSGRID_REQUIRE_GPU();
  const fs::path dir = test::temp_dir("batch-gpu-average");
  const std::vector<std::string> files = write_frames_one_bad(dir, 7, 13, 150, 2);
  BatchOptions all = gpu_options(files, dir / "all.h5");
  run_batch(all);
  BatchOptions average = gpu_options(files, dir / "mean.h5");
  average.average = average.average_std = true;
  average.frame_workers = 2;
  const BatchResult r = run_batch(average);
  EXPECT_TRUE(r.maps_on_device);
  EXPECT_EQ(r.computed, 6u);
  EXPECT_EQ(r.failed, 1u);
  io::MapSelector std_dataset;
  std_dataset.dataset = "potential_std";
  const io::MapFile mean = io::read_map(average.output), stddev = io::read_map(average.output, std_dataset);
  BatchFile file(all.output);
  const std::size_t n = file.grid().point_count();
  ASSERT_EQ(mean.data.size(), n);
  std::vector<float> shift;
  std::vector<double> sum(n), squares(n);
  double frames = 0;
  for (std::size_t f = 0; f < file.frames().size(); ++f) {
    if (file.frames()[f].status != FrameStatus::complete) continue;
    const std::vector<float> v = frame_data(file, f);
    if (shift.empty()) shift = v;
    for (std::size_t p = 0; p < n; ++p) {
      const double d = double(v[p]) - double(shift[p]);
      volatile double d2 = d * d;  // rounded before the add: not fused, as on the device
      sum[p] += d;
      squares[p] += d2;
    }
    ++frames;
  }
  for (std::size_t p = 0; p < n; ++p) {
    const double d = sum[p] / frames;
    ASSERT_EQ(mean.data[p], float(shift[p] + d)) << p;
    const double s = std::sqrt(std::max(0.0, squares[p] / frames - d * d));
    ASSERT_NEAR(stddev.data[p], s, 1e-6 * s + 1e-12) << p;
  }
  fs::remove_all(dir);
}

// Workers on every GPU (two a GPU) average into the same sums as one worker on GPU 0: the maps of
// other GPUs are copied to the sums' GPU, and every frame is added in frame order.
TEST(BatchGpu, AverageOnEveryGpuIsOneGpusBitForBit) {
  DCSGRID_REQUIRE_GPU();
  const fs::path dir = test::temp_dir("batch-gpu-average-gpus");
  const std::vector<std::string> files = write_frames(dir, 9, 29, 200);
  std::vector<io::MapFile> means, stds;
  for (const bool every : {false, true}) {
    BatchOptions o = gpu_options(files, dir / (every ? "every.h5" : "one.h5"));
    o.average = o.average_std = true;
    if (every) o.frame_workers = 2 * std::size_t(engine::cuda_device_count());
    else o.compute.gpus = {0};
    const BatchResult r = run_batch(o);
    EXPECT_TRUE(r.maps_on_device);
    ASSERT_EQ(r.computed, 9u);
    io::MapSelector std_dataset;
    std_dataset.dataset = "potential_std";
    means.push_back(io::read_map(o.output));
    stds.push_back(io::read_map(o.output, std_dataset));
  }
  EXPECT_TRUE(means[0].data == means[1].data);
  EXPECT_TRUE(stds[0].data == stds[1].data);
  fs::remove_all(dir);
}

// A GPU average stopped by a failed frame and resumed continues its sums on the device from the
// saved ones: the same mean and standard deviation, bit for bit, as one run that was never stopped.
TEST(BatchGpu, ResumedAverageIsTheUninterruptedOne) {
  DCSGRID_REQUIRE_GPU();
  const fs::path dir = test::temp_dir("batch-gpu-average-resume");
  const std::vector<std::string> files = write_frames(dir, 6, 19, 150);
  const std::vector<char> good = test::file_bytes(files[3]);
  BatchOptions whole = gpu_options(files, dir / "whole.h5");
  whole.average = whole.average_std = true;
  ASSERT_TRUE(run_batch(whole).maps_on_device);
  BatchOptions stopped = whole;
  stopped.output = dir / "stopped.h5";
  stopped.fail_fast = true;
  stopped.frame_workers = 1;
  stopped.grid.box = io::read_map(whole.output).grid;  // the box the mended frame gives
  test::write_text(files[3], "ATOM      1  C   MOL A   1       1.000   2.000   x.000  0.5 1.7\n");
  EXPECT_THROW(run_batch(stopped), Error);
  ASSERT_TRUE(fs::exists(dir / "stopped.h5.sums.h5"));
  test::write_text(files[3], std::string(good.begin(), good.end()));
  stopped.fail_fast = false;
  stopped.resume = true;
  const BatchResult r = run_batch(stopped);
  EXPECT_EQ(r.computed, 3u);
  EXPECT_TRUE(r.maps_on_device);
  io::MapSelector std_dataset;
  std_dataset.dataset = "potential_std";
  EXPECT_TRUE(io::read_map(whole.output).data == io::read_map(stopped.output).data);
  EXPECT_TRUE(io::read_map(whole.output, std_dataset).data == io::read_map(stopped.output, std_dataset).data);
  fs::remove_all(dir);
}
#endif

// ---- kill -9 ----------------------------------------------------------------------------------
// The child: this test binary run again with only the disabled test below, which reads its job
// from the environment and is killed by SIGKILL from its own hook.

namespace {

constexpr const char* kChildVariable = "DCSGRID_TEST_BATCH_CHILD";

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t next = s.find(sep, pos);
    out.push_back(s.substr(pos, next - pos));
    if (next == std::string::npos) return out;
    pos = next + 1;
  }
}

// Starts the child with job "output|kill_frame|kill_step|input1,input2,...[|spacing]". The environment
// and arguments are built before fork, so the child only calls execve.
pid_t start_child(const std::string& job) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
  env_text.push_back(std::string(kChildVariable) + "=" + job);
  std::vector<char*> env;
  for (auto& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  std::string args_text[] = {"child", "--gtest_filter=BatchCrashChild.DISABLED_Run",
                             "--gtest_also_run_disabled_tests", "--gtest_brief=1"};
  std::vector<char*> args;
  for (auto& a : args_text) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execve("/proc/self/exe", args.data(), env.data());
    _exit(127);
  }
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// Runs the child to its end; its wait status.
int run_child(const std::string& job) { return wait_child(start_child(job)); }

}  // namespace

TEST(BatchCrashChild, DISABLED_Run) {
  const char* job = std::getenv(kChildVariable);
  if (!job) GTEST_SKIP() << "runs only as the child of BatchCrash tests";
  const auto parts = split(job, '|');
  ASSERT_GE(parts.size(), 4u);
  BatchOptions o = cpu_options(split(parts[3], ','), parts[0]);
  if (parts.size() > 4) o.grid.spacing = std::stod(parts[4]);  // for trajectories' wide boxes
  o.resume = true;
  const std::size_t kill_frame = std::stoul(parts[1]);
  const int kill_step = std::stoi(parts[2]);
  o.step_hook = [&](std::size_t frame, WriteStep step) {
    if (frame == kill_frame && int(step) == kill_step) raise(SIGKILL);
  };
  run_batch(o);
}

TEST(BatchCrash, KillNineAtEveryWriteStepThenResume) {
  const fs::path dir = test::temp_dir("batch-kill");
  const auto files = write_frames(dir, 4);
  std::string inputs;
  for (const auto& f : files) inputs += (inputs.empty() ? "" : ",") + f;
  const fs::path reference = dir / "reference.h5";
  ASSERT_EQ(run_child(reference.string() + "|99|0|" + inputs), 0);  // no kill: the reference

  for (WriteStep step : {WriteStep::data_written, WriteStep::data_flushed, WriteStep::status_written,
                         WriteStep::status_flushed}) {
    SCOPED_TRACE("killed at step " + std::to_string(int(step)));
    const fs::path out = dir / ("killed" + std::to_string(int(step)) + ".h5");
    const int status = run_child(out.string() + "|1|" + std::to_string(int(step)) + "|" + inputs);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
    // The 1.10 format (checksummed), left marked open for writing: the resume must clear it.
    EXPECT_GE(test::hdf5_superblock_version(out), 2);
    EXPECT_TRUE(io::hdf5::marked_open_for_write(out));
    {
      BatchFile file(out);  // opens after the kill, read-only: the mark is ignored
      if (step == WriteStep::status_flushed) EXPECT_EQ(file.frames()[1].status, FrameStatus::complete);
      if (step <= WriteStep::data_flushed) EXPECT_EQ(file.frames()[1].status, FrameStatus::pending);
      // Frames are written in order, in groups that complete whole: the complete ones come first.
      for (std::size_t i = 1; i < 4; ++i)
        if (file.frames()[i].status == FrameStatus::complete)
          EXPECT_EQ(file.frames()[i - 1].status, FrameStatus::complete) << "frame " << i;
      // The complete frames are already the reference's.
      BatchFile ref(reference);
      for (std::size_t i = 0; i < 4; ++i)
        if (file.frames()[i].status == FrameStatus::complete)
          EXPECT_EQ(frame_data(file, i), frame_data(ref, i)) << "frame " << i;
    }
    // Resume in a second child (so this process never forks after using OpenMP).
    ASSERT_EQ(run_child(out.string() + "|99|0|" + inputs), 0);
    expect_same_bytes(contents(reference), contents(out));
    EXPECT_FALSE(io::hdf5::marked_open_for_write(out));
  }
}

// Killed from outside after a random delay, wherever it is (scan, create, pipeline, writes).
TEST(BatchCrash, KillNineAtRandomMomentsThenResume) {
  const fs::path dir = test::temp_dir("batch-kill-random");
  const auto files = write_frames(dir, 12, 5, 300);
  std::string inputs;
  for (const auto& f : files) inputs += (inputs.empty() ? "" : ",") + f;
  const fs::path reference = dir / "reference.h5";
  ASSERT_EQ(run_child(reference.string() + "|999|0|" + inputs), 0);
  for (int delay_ms : {15, 40, 80, 120, 200}) {
    const fs::path out = dir / ("random" + std::to_string(delay_ms) + ".h5");
    const std::string job = out.string() + "|999|0|" + inputs;
    const pid_t pid = start_child(job);
    usleep(useconds_t(delay_ms) * 1000);
    kill(pid, SIGKILL);
    wait_child(pid);
    if (fs::exists(out)) {  // a file that exists must open
      BatchFile opened(out);
      std::size_t complete = 0;
      for (const auto& f : opened.frames()) complete += f.status == FrameStatus::complete;
      std::printf("killed at %d ms: %zu of 12 frames complete\n", delay_ms, complete);
    }
    ASSERT_EQ(run_child(job), 0) << "resume after a kill at " << delay_ms << " ms";
    expect_same_bytes(contents(reference), contents(out));
  }
}

// A trajectory batch (PQR topology, then a DCD and an XTC read as one stream) killed by SIGKILL
// mid-stream, at a write step of a frame of the XTC and at random moments, then resumed: the
// frames are found again by file and index and the file is byte-identical to an uninterrupted run.
TEST(BatchCrash, KillNineMidTrajectoryThenResume) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const fs::path dir = test::temp_dir("batch-kill-traj");
  const std::size_t atoms = 30;
  test::write_pqr(dir / "top.pqr", test::random_atoms(atoms, Box{{0, 0, 0}, {8, 8, 8}}, 9));
  for (const char* name : {"a.dcd", "b.xtc"}) {
    const fs::path path = dir / name;
    test::run_mda("write " + path.extension().string().substr(1) + " " + path.string() + " " +
                  std::to_string(atoms) + " 8 " + std::to_string(name[0]));
    if (HasFatalFailure()) return;
  }
  const std::string inputs = (dir / "top.pqr").string() + "," + (dir / "a.dcd").string() + "," +
                             (dir / "b.xtc").string();
  const std::string spacing = "|6";
  const fs::path reference = dir / "reference.h5";
  ASSERT_EQ(run_child(reference.string() + "|99|0|" + inputs + spacing), 0);
  {
    BatchFile ref(reference);
    ASSERT_EQ(ref.frames().size(), 16u);
    EXPECT_EQ(ref.frames()[10].source, (dir / "b.xtc").string());
    EXPECT_EQ(ref.frames()[10].frame_index, 2);
  }
  const fs::path stepped = dir / "stepped.h5";
  const int status = run_child(stepped.string() + "|10|" +
                               std::to_string(int(WriteStep::data_flushed)) + "|" + inputs + spacing);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  EXPECT_EQ(BatchFile(stepped).frames()[10].status, FrameStatus::pending);
  ASSERT_EQ(run_child(stepped.string() + "|99|0|" + inputs + spacing), 0);
  expect_same_bytes(contents(reference), contents(stepped));

  for (int delay_ms : {30, 90, 200}) {
    const fs::path out = dir / ("random" + std::to_string(delay_ms) + ".h5");
    const std::string job = out.string() + "|99|0|" + inputs + spacing;
    const pid_t pid = start_child(job);
    usleep(useconds_t(delay_ms) * 1000);
    kill(pid, SIGKILL);
    wait_child(pid);
    ASSERT_EQ(run_child(job), 0) << "resume after a kill at " << delay_ms << " ms";
    expect_same_bytes(contents(reference), contents(out));
  }
  fs::remove_all(dir);
}
