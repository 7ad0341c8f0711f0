// mpirun -n 2 and -n 3 dcsgrid batch: the ranks' one batch file equals the serial run bit for bit
// (maps, frame table, stats) with a frame that fails on whichever rank takes it; a job stopped
// by SIGTERM and resumed by another job gives the same file. mpirun -n 1, 2 and 3 of the main job
// (each rank its block of planes, written into the one file through parallel HDF5): every method's
// map, alone or together, equals the serial run's bit for bit, with the stored comparisons, OpenDX
// and cube beside, compressed or not, cutoff's ranks holding only their halo's atoms, ranks on
// the GPU, and ranks without planes; an error ends the job with its message and no file, and so does a stop. A plain
// run is one process; commands other than these refuse several ranks. Skipped in builds without MPI.
#include <gtest/gtest.h>

#include <string>

#include "dcsgrid/analysis/batch_file.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"
#include "test_batch_compare.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;
using analysis::BatchFile;
using analysis::FrameStatus;

namespace {

#ifdef DCSGRID_HAVE_MPI
constexpr bool kBuiltWithMpi = true;
#else
constexpr bool kBuiltWithMpi = false;
#endif

// OpenMPI refuses root unless told; told here, for these commands only.
const std::string kMpirun =
    "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
    "mpirun --oversubscribe ";

class CliMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kBuiltWithMpi) GTEST_SKIP() << "this build has no MPI (DCSGRID_MPI): MPI tests skipped";
    if (test::run_command("command -v mpirun").status != 0)
      GTEST_SKIP() << "mpirun is not on PATH (Debian openmpi-bin): MPI tests skipped";
    dir = test::temp_dir("cli-mpi");
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }

  // `frames` small structures of different sizes (so ranks take different shares), `atoms` more
  // in each, frame `bad` unreadable; returns them as one argument string.
  std::string write_inputs(int frames, int bad, std::size_t atoms = 0) {
    std::string args;
    for (int i = 0; i < frames; ++i) {
      const fs::path path = dir / ("f" + std::to_string(i) + ".pqr");
      if (i == bad)
        test::write_text(path, "ATOM      1  C   MOL A   1       1.000   2.000   x.000  0.5 1.7\n");
      else
        test::write_pqr(path, test::random_atoms(atoms + 5 + std::size_t(i % 4) * 40,
                                                 Box{{0, 0, 0}, {6, 5, 4.0 + i % 3}}, 60 + i));
      args += path.string() + " ";
    }
    return args;
  }

  test::CommandResult batch(const std::string& launcher, const std::string& args,
                            const std::string& spacing = "0.8") {
    return test::run_command(launcher + test::dcsgrid_binary() + " batch --device cpu --threads 1 --spacing " +
                             spacing + " --padding 3 " + args);
  }

  fs::path dir;
};

}  // namespace

TEST_F(CliMpi, BatchOverTwoAndThreeRanksEqualsTheSerialRun) {
  const std::string inputs = write_inputs(9, 4);
  auto r = batch("", inputs + "-o " + (dir / "serial.h5").string());
  ASSERT_EQ(r.status, 3) << r.output;  // written, one frame failed
  for (const int ranks : {2, 3}) {
    const fs::path out = dir / ("ranks" + std::to_string(ranks) + ".h5");
    r = batch(kMpirun + "-n " + std::to_string(ranks) + " ", inputs + "-o " + out.string());
    EXPECT_NE(r.output.find("computed 8, failed 1"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("f4.pqr:1: z coordinate is not a number"), std::string::npos) << r.output;
    test::expect_same_batch(dir / "serial.h5", out);
    EXPECT_GE(test::hdf5_superblock_version(out), 2);  // the 1.10 format, written through MPI-IO
    EXPECT_NE(BatchFile(out).frames()[4].message.find("f4.pqr:1"), std::string::npos);
  }
}

TEST_F(CliMpi, StoppedJobResumedByAnotherJobEqualsTheSerialRun) {
  const std::string inputs = write_inputs(40, -1, 4000);
  const fs::path out = dir / "ranks.h5";
  const std::string spacing = "0.25";  // 0.1 M points × 4,000 atoms: about 0.07 s a frame on 2 cores, so 1.5 s stops part-way
  auto r = batch("", inputs + "-o " + (dir / "serial.h5").string() + " -q", spacing);
  ASSERT_EQ(r.status, 0) << r.output;
  // Stopped part-way (how far depends on the machine: any point must do).
  r = batch("timeout -s TERM 1.5 " + kMpirun + "-n 2 ", inputs + "-o " + out.string() + " -q", spacing);
  // mpirun may return while its ranks still finish frames: count only once none of them is left.
  const auto ranks_left = test::run_command("for i in $(seq 300); do pgrep -f -- 'd[c]sgrid batch .*" +
                                            out.string() + "' >/dev/null || exit 0; sleep 0.1; done; exit 1");
  ASSERT_EQ(ranks_left.status, 0) << "ranks of the stopped job still run after 30 s";
  ASSERT_TRUE(fs::exists(out)) << r.output;
  std::size_t complete = 0;
  {
    const BatchFile stopped(out);  // frames() refers into the file object, whose lock the resume needs back
    for (const auto& f : stopped.frames()) complete += f.status == FrameStatus::complete;
  }
  std::printf("stopped after %zu of 40 frames (status %d)\n", complete, r.status);
  r = batch(kMpirun + "-n 3 ", inputs + "-o " + out.string() + " --resume --json", spacing);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("\"skipped\": " + std::to_string(complete)), std::string::npos) << r.output;
  test::expect_same_batch(dir / "serial.h5", out);
}

namespace {

// Runs of 1, 2 and 3 ranks against the serial run: the listed HDF5 datasets equal bit for bit and
// with the same attributes, "attr:NAME" root attributes equal (read by h5py, independent of our
// reader; skipped without it), and the text map (other_ext) equal line for line.
void expect_ranks_equal_serial(const fs::path& dir, const std::string& job, const std::string& tag,
                               const std::vector<std::string>& datasets, const std::string& other_ext) {
  const auto outputs = [&](const std::string& name) {
    std::string args = " -o " + (dir / (name + ".h5")).string();
    if (!other_ext.empty()) args += " -o " + (dir / (name + other_ext)).string();
    return args + " 2>&1";
  };
  const std::string python = test::python_with("h5py");
  if (python.empty()) GTEST_SKIP() << "no python3 with h5py: the independent comparison is skipped";
  auto r = test::run_command(test::dcsgrid_binary() + job + outputs(tag + "-serial"));
  ASSERT_EQ(r.status, 0) << r.output;
  const fs::path py = dir / "same_datasets.py";
  test::write_text(py,
                   "import sys, h5py\n"
                   "a = h5py.File(sys.argv[1], 'r'); b = h5py.File(sys.argv[2], 'r')\n"
                   "for d in sys.argv[3:]:\n"
                   "    if d.startswith('attr:'):\n"
                   "        assert a.attrs[d[5:]] == b.attrs[d[5:]], d + ' differs'\n"
                   "        continue\n"
                   "    assert a[d][:].tobytes() == b[d][:].tobytes(), d + ' differs'\n"
                   "    assert set(a[d].attrs) == set(b[d].attrs), d + ' attributes differ'\n");
  // Text maps: the same but for the command line they record (which names the output).
  const fs::path text_py = dir / "same_text.py";
  test::write_text(text_py,
                   "import sys\n"
                   "a, b = ([l for l in open(f) if 'command_line' not in l] for f in sys.argv[1:3])\n"
                   "assert a == b\n");
  std::string names;
  for (const auto& d : datasets) names += " " + d;
  for (const int ranks : {1, 2, 3}) {
    const std::string name = tag + "-ranks" + std::to_string(ranks);
    r = test::run_command(kMpirun + "-n " + std::to_string(ranks) + " " + test::dcsgrid_binary() + job +
                          outputs(name));
    ASSERT_EQ(r.status, 0) << r.output;
    r = test::run_command(python + " " + py.string() + " " + (dir / (tag + "-serial.h5")).string() +
                          " " + (dir / (name + ".h5")).string() + names + " 2>&1");
    EXPECT_EQ(r.status, 0) << tag << ", " << ranks << " ranks: " << r.output;
    if (!other_ext.empty())
      EXPECT_EQ(test::run_command(python + " " + text_py.string() + " " +
                                  (dir / (tag + "-serial" + other_ext)).string() + " " +
                                  (dir / (name + other_ext)).string() + " 2>&1").status, 0)
          << tag << ", " << ranks << " ranks: " << other_ext << " differs";
  }
}

}  // namespace

TEST_F(CliMpi, MapOverRanksEqualsTheSerialRunForEveryMethod) {
  const fs::path input = dir / "protein.pqr";
  test::write_pqr(input, test::random_atoms(600, Box{{0, 0, 0}, {12, 10, 9}}, 77));
  const std::string job = " " + input.string() +
                          " --device cpu --threads 1 --spacing 0.6 --method direct,cutoff,msm -q";
  // Every map and the stored comparisons (rank 0's, from the maps read back).
  expect_ranks_equal_serial(dir, job, "all",
                            {"potential", "potential_cutoff", "potential_msm",
                             "attr:comparison_cutoff_vs_direct", "attr:comparison_msm_vs_direct"}, "");
  // An error ends every rank, with the message, and leaves no file (nor a temporary).
  const auto r = test::run_command(kMpirun + "-n 2 " + test::dcsgrid_binary() + job + " -o " +
                        (dir / "bad.h5").string() + " -o " + (dir / "bad.dx").string() + " 2>&1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("bad.dx is not .h5"), std::string::npos) << r.output;
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string().find("bad"), std::string::npos) << entry.path();
}

// GPU ranks (all sharing the one device here): the GPU cutoff engine's bins are one lattice for
// every slab and keep input order within a bin (binning.hpp), so each rank's block of planes, cut
// anywhere and computed from its halo's atoms alone, equals the serial GPU run bit for bit.
TEST_F(CliMpi, MapOverGpuRanksEqualsTheSerialRunForEveryMethod) {
  DCSGRID_REQUIRE_GPU();
  const fs::path input = dir / "gpu.pqr";
  test::write_pqr(input, test::random_atoms(20000, Box{{0, 0, 0}, {30, 28, 90}}, 5));
  expect_ranks_equal_serial(dir,
                            " " + input.string() + " --device gpu --spacing 0.5 --cutoff 10 "
                            "--method direct,cutoff,msm -q",
                            "gpu", {"potential", "potential_cutoff", "potential_msm"}, "");
}

// Cutoff alone: each rank gets only its planes' atoms plus the halo, here a small part of a long
// box (6 Å cutoff, 70 Å along z), and a box that leaves atoms outside the grid; compressed HDF5
// (filtered datasets in parallel HDF5) and OpenDX (gathered to rank 0) beside it.
TEST_F(CliMpi, CutoffOverRanksWithTheirHaloAloneEqualsTheSerialRun) {
  const fs::path input = dir / "long.pqr";
  test::write_pqr(input, test::random_atoms(3000, Box{{0, 0, 0}, {14, 12, 70}}, 91));
  expect_ranks_equal_serial(dir,
                            " " + input.string() + " --device cpu --threads 1 --spacing 0.7 --method cutoff "
                            "--cutoff 6 --center 7 6 33 --size 12 10 60 --compress -q",
                            "cutoff", {"potential"}, ".dx");
  // Rank 0 says (-vv) how many atoms it sent: the middle rank of three, its 20 Å of planes and
  // 2 × 6 Å of halo out of the 70 Å box (about 1,380 atoms), gets well under the 3,000.
  const auto r = test::run_command(kMpirun + "-n 3 " + test::dcsgrid_binary() + " " + input.string() +
                                   " --device cpu --threads 1 --spacing 0.7 --method cutoff --cutoff 6 --center 7 6 33 "
                                   "--size 12 10 60 -vv -o " + (dir / "verbose.h5").string() + " 2>&1");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string said = "rank 1 computes from ";
  const std::size_t at = r.output.find(said);
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_LT(std::stoul(r.output.substr(at + said.size())), 1600u) << r.output;
}

// msm alone (every rank gets every atom and builds the long-range grids) and direct alone.
TEST_F(CliMpi, MsmAndDirectAloneOverRanksEqualTheSerialRun) {
  const fs::path input = dir / "tall.pqr";
  test::write_pqr(input, test::random_atoms(800, Box{{0, 0, 0}, {10, 9, 30}}, 17));
  const std::string common = " " + input.string() + " --device cpu --threads 1 --spacing 0.8 -q --method ";
  expect_ranks_equal_serial(dir, common + "msm", "msm", {"potential"}, ".cube");
  expect_ranks_equal_serial(dir, common + "direct", "direct", {"potential"}, "");
}

// Three ranks on a grid of two planes: rank 0 has none (an empty block) and still takes part.
TEST_F(CliMpi, RanksWithoutPlanesTakePart) {
  const fs::path input = dir / "small.pqr";
  test::write_pqr(input, test::random_atoms(300, Box{{0, 0, 0}, {8, 6, 20}}, 3));
  expect_ranks_equal_serial(dir, " " + input.string() + " --device cpu --threads 1 --origin 0 0 9 --dims 9 7 2 "
                            "--spacing 1 --method cutoff --cutoff 5 -q", "thin", {"potential"}, ".dx");
}

// A job stopped while every rank writes into the file they share leaves no file under its name.
// (Every rank removes the temporary on SIGTERM; mpirun follows with SIGKILL a second later, and
// signalled itself it sometimes kills the ranks at once, before they can: so the temporary is not
// checked here.)
TEST_F(CliMpi, MapJobStoppedPartWayLeavesNoFile) {
  const fs::path input = dir / "many.pqr";
  test::write_pqr(input, test::random_atoms(20000, Box{{0, 0, 0}, {20, 20, 20}}, 5));
  // Over 10^11 pair terms: 10 s or more on one thread a rank, stopped after 1.5 s (10^10 finished
  // within 1.5 s on an idle 2-core machine, and the file was there).
  const auto r = test::run_command("timeout -s TERM 1.5 " + kMpirun + "-n 2 " + test::dcsgrid_binary() + " " +
                                   input.string() + " --device cpu --threads 1 --spacing 0.2 --method direct -q -o " +
                                   (dir / "stopped.h5").string() + " 2>&1");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir / "stopped.h5"));
  EXPECT_FALSE(fs::exists(dir / "stopped.xmf"));
}

TEST_F(CliMpi, PlainRunIsOneProcessAndOtherCommandsRefuseRanks) {
  const std::string inputs = write_inputs(2, -1);
  auto r = batch("", inputs + "-o " + (dir / "plain.h5").string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("ranks"), std::string::npos) << r.output;  // no MPI outside mpirun
  r = test::run_command(kMpirun + "-n 2 " + test::dcsgrid_binary() + " info " +
                        (dir / "plain.h5").string() + " 2>&1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("only the main job and 'dcsgrid batch' share their work out"),
            std::string::npos) << r.output;
}
