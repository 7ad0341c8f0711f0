// batch over MD trajectories: a PQR topology and DCD + XTC files written by MDAnalysis, every
// selected frame's map against a float64 direct sum at the coordinates MDAnalysis reads, the
// frame table (file, frame number, time), atom-count mismatches, and resume after an
// interruption giving the same bytes.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

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
