// batch --shard I/N and merge: the parts of a sharded batch, merged through an HDF5 virtual
// dataset or by copying, equal one whole run value for value (maps, frame table, stats), for
// structure files (with a failed frame) and for a trajectory stream whose blocks cross a file
// boundary; h5py reads the merged /potential as an ordinary array; parts that do not belong
// together are refused with messages that name the files.
#include <gtest/gtest.h>

#include <cmath>

#include "dcsgrid/analysis/batch_merge.hpp"
#include "dcsgrid/app/batch.hpp"
#include "dcsgrid/core/error.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"
#include "test_batch_compare.hpp"
#include "test_io_trajectory_util.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;
using namespace dcsgrid::app;
using analysis::BatchFile;
using analysis::FrameRecord;
using analysis::FrameStatus;

namespace {

using test::expect_same_batch;
using test::frame_data;

// Runs the batch in `count` shards part_<i>.h5 in dir and returns their paths.
std::vector<fs::path> run_shards(BatchOptions o, const fs::path& dir, std::size_t count) {
  std::vector<fs::path> parts;
  for (std::size_t i = 0; i < count; ++i) {
    o.shard = Shard{i, count};
    o.output = dir / ("part_" + std::to_string(i) + ".h5");
    run_batch(o);
    parts.push_back(o.output);
  }
  return parts;
}

// h5py (Debian's, an independent reader) reads merged/potential as an ordinary array equal to the
// whole run's complete frames; run from another folder, so the parts are found from the file's.
void expect_h5py_reads_the_same(const fs::path& whole, const fs::path& merged, bool is_virtual) {
  const std::string script =
      "import sys, h5py, numpy as np\n"
      "w = h5py.File(sys.argv[1], 'r'); m = h5py.File(sys.argv[2], 'r')\n"
      "assert m['potential'].is_virtual == (sys.argv[3] == '1'), 'is_virtual'\n"
      "done = w['frames/status'][:] == 1\n"
      "a = w['potential'][:][done]; b = m['potential'][:][done]\n"
      "assert np.all(np.isfinite(b)), 'a part was not found'\n"
      "assert a.tobytes() == b.tobytes(), 'values differ'\n"
      "assert (w['frames/source'][:] == m['frames/source'][:]).all(), 'sources differ'\n"
      "print('h5py ok', b.shape)\n";
  const std::string python = test::python_with("h5py, numpy");
  if (python.empty()) GTEST_SKIP() << "no python3 with h5py and numpy: the independent read is skipped";
  const fs::path py = whole.parent_path() / "check_merged.py";
  test::write_text(py, script);
  const auto r = test::run_command("cd / && " + python + " " + py.string() + " " + whole.string() +
                                   " " + merged.string() + (is_virtual ? " 1" : " 0") + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.output;
}

std::string error_of(const analysis::MergeOptions& o) {
  try {
    analysis::merge_batch_parts(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

class BatchShard : public ::testing::Test {
 protected:
  void SetUp() override { dir = test::temp_dir("batch-shard"); }
  void TearDown() override { fs::remove_all(dir); }

  // Five structure files of different sizes and places (the grid is their union box, which every
  // shard must find alike), the fourth unreadable.
  BatchOptions structure_batch() {
    BatchOptions o;
    for (int i = 0; i < 5; ++i) {
      const fs::path path = dir / ("f" + std::to_string(i) + ".pqr");
      if (i == 3)
        test::write_text(path, "ATOM      1  C   MOL A   1       1.000   2.000   x.000  0.5 1.7\n");
      else
        test::write_pqr(path, test::random_atoms(4 + 3 * std::size_t(i),
                                                 Box{{0, 0, double(i)}, {3, 2, 2.0 + i}}, 40 + i));
      o.inputs.push_back(path.string());
    }
    o.compute.device = "cpu";
    o.compute.threads = 1;
    o.grid.spacing = 0.7;
    o.grid.padding = 2;
    return o;
  }

  fs::path dir;
};

}  // namespace

TEST_F(BatchShard, StructureShardsMergedVirtualAndCopiedEqualOneRun) {
  BatchOptions o = structure_batch();
  o.output = dir / "whole.h5";
  const BatchResult whole = run_batch(o);
  ASSERT_EQ(whole.failed, 1u);

  const std::vector<fs::path> parts = run_shards(o, dir, 3);
  {
    const BatchFile part(parts[1]);  // frames 1 and 2 of 5 (blocks 0-0, 1-2, 3-4)
    ASSERT_TRUE(part.shard().has_value());
    EXPECT_EQ(part.shard()->first_frame, 1u);
    EXPECT_EQ(part.shard()->total_frames, 5u);
    ASSERT_EQ(part.frames().size(), 2u);
    EXPECT_EQ(part.frames()[0].source, o.inputs[1]);
  }
  // Given in another order: merge sorts them by shard.
  const std::vector<fs::path> shuffled = {parts[2], parts[0], parts[1]};
  const analysis::MergeResult merged = analysis::merge_batch_parts({shuffled, dir / "merged.h5"});
  EXPECT_EQ(merged.frames, 5u);
  EXPECT_EQ(merged.complete, 4u);
  EXPECT_EQ(merged.failed, 1u);
  expect_same_batch(dir / "whole.h5", dir / "merged.h5");
  EXPECT_FALSE(BatchFile(dir / "merged.h5").shard().has_value());
  EXPECT_GE(test::hdf5_superblock_version(dir / "merged.h5"), 2);  // the 1.10 format
  expect_h5py_reads_the_same(dir / "whole.h5", dir / "merged.h5", true);

  analysis::merge_batch_parts({parts, dir / "copied.h5", true});
  expect_same_batch(dir / "whole.h5", dir / "copied.h5");
  expect_h5py_reads_the_same(dir / "whole.h5", dir / "copied.h5", false);
  // The copy stands alone; the virtual file reads NaN where a part went missing.
  fs::rename(parts[0], dir / "moved.h5");
  expect_same_batch(dir / "whole.h5", dir / "copied.h5");
  EXPECT_TRUE(std::isnan(frame_data(BatchFile(dir / "merged.h5"), 0)[0]));
}

TEST_F(BatchShard, ResumedPartMergesLikeOneRun) {
  BatchOptions o = structure_batch();
  o.output = dir / "whole.h5";
  run_batch(o);
  std::vector<fs::path> parts = run_shards(o, dir, 2);
  // The repaired input: a resume of part 1 (frames 2-4) computes frame 3 there, as in the whole.
  test::write_pqr(o.inputs[3], test::random_atoms(6, Box{{0, 0, 0}, {1, 1, 1}}, 9));
  BatchOptions resume = o;
  resume.resume = true;
  run_batch(resume);
  resume.shard = Shard{1, 2};
  resume.output = parts[1];
  const BatchResult r = run_batch(resume);
  EXPECT_EQ(r.computed, 1u);
  EXPECT_EQ(r.skipped, 2u);
  analysis::merge_batch_parts({parts, dir / "merged.h5"});
  expect_same_batch(dir / "whole.h5", dir / "merged.h5");
  EXPECT_EQ(BatchFile(dir / "merged.h5").frames()[3].status, FrameStatus::complete);
}

TEST_F(BatchShard, TrajectoryShardsCrossingFilesEqualOneRun) {
  DCSGRID_REQUIRE_MDANALYSIS();
  const AtomSet charges = test::as_stored(test::random_atoms(9, Box{{0, 0, 0}, {8, 8, 8}}, 3));
  test::write_pqr(dir / "top.pqr", charges);
  test::run_mda("write dcd " + (dir / "a.dcd").string() + " 9 4 21");
  test::run_mda("write xtc " + (dir / "b.xtc").string() + " 9 3 22");
  BatchOptions o;
  o.inputs = {(dir / "top.pqr").string(), (dir / "a.dcd").string(), (dir / "b.xtc").string()};
  o.compute.device = "cpu";
  o.compute.threads = 1;
  o.grid.spacing = 3;
  o.grid.padding = 3;
  o.output = dir / "whole.h5";
  run_batch(o);
  const std::vector<fs::path> parts = run_shards(o, dir, 3);  // frames 0-1, 2-3 (a 2,3), 4-6 (b)
  EXPECT_EQ(BatchFile(parts[2]).frames().front().frame_index, 0);  // b.xtc's first frame
  analysis::merge_batch_parts({parts, dir / "merged.h5"});
  expect_same_batch(dir / "whole.h5", dir / "merged.h5");
}

TEST_F(BatchShard, PartsThatDoNotBelongTogetherAreRefused) {
  BatchOptions o = structure_batch();
  const std::vector<fs::path> parts = run_shards(o, dir, 3);
  const fs::path out = dir / "merged.h5";
  EXPECT_NE(error_of({{parts[0], parts[2]}, out}).find("shard 1/3 is missing"), std::string::npos);
  EXPECT_NE(error_of({{parts[0], parts[1], parts[1], parts[2]}, out}).find("are both shard 1/3"),
            std::string::npos);
  o.compute.physics.dielectric = 4;  // another batch's part 1
  o.shard = Shard{1, 3};
  o.output = dir / "other_1.h5";
  run_batch(o);
  const std::string other = error_of({{parts[0], o.output, parts[2]}, out});
  EXPECT_NE(other.find("different options ('physics' differs)"), std::string::npos) << other;
  EXPECT_NE(other.find("other_1.h5"), std::string::npos) << other;
  o.shard.reset();
  o.output = dir / "plain.h5";
  run_batch(o);
  EXPECT_NE(error_of({{o.output}, out}).find("plain.h5: not a part of a sharded batch"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(out));
  // Shards of 2 of a 3-shard batch, and --shard values that name no part.
  BatchOptions two = structure_batch();
  two.output = dir / "two_0.h5";
  two.shard = Shard{0, 2};
  run_batch(two);
  EXPECT_NE(error_of({{parts[0], two.output}, out}).find("parts of different batches"),
            std::string::npos);
  EXPECT_THROW(parse_shard("3/3"), Error);
  EXPECT_THROW(parse_shard("1/0"), Error);
  EXPECT_THROW(parse_shard("1/2x"), Error);
  EXPECT_EQ(parse_shard("2/5").index, 2u);
  two.shard = Shard{0, 6};  // 5 frames: shard 0 of 6 holds [0, 5/6) = none
  two.output = dir / "empty.h5";
  EXPECT_THROW(run_batch(two), Error);
}
