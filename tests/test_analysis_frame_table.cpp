// The compact frame table (analysis::FrameTable) and its round trip through a batch file's
// /frames group, written and read in blocks of rows: every row against the values the test made,
// through BatchFile and through h5py (an independent HDF5 reader), over several blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/analysis/frame_table.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"

using namespace dcsgrid;
using namespace dcsgrid::analysis;
namespace fs = std::filesystem;

namespace {

// The record of row i of the test tables: three long paths in runs (the first again at the end),
// trajectory numbers and times, and every status with its outcome.
FrameRecord row(std::size_t i, std::size_t n) {
  FrameRecord r;
  const std::size_t file = i < n / 3 ? 0 : i < 2 * n / 3 ? 1 : i < n - 5 ? 2 : 0;
  r.source = "/data/" + std::string(200, char('a' + file)) + "/traj" + std::to_string(file) + ".dcd";
  r.input_sha256 = std::string(64, char('0' + file));
  r.model = int(i % 7) + 1;
  r.frame_index = std::int64_t(3 * i);
  r.time_ps = i % 11 == 0 ? std::nan("") : 0.5 * double(i);
  r.status = FrameStatus(i % 3);
  if (r.status != FrameStatus::pending) {
    r.atom_count = 1000 + i % 2;
    r.total_charge = i % 2 ? -3.0 : 0.25;
  }
  if (r.status == FrameStatus::failed) r.message = "frame " + std::to_string(i) + " failed: " + std::string(300, 'x');
  return r;
}

void expect_same(const FrameRecord& got, const FrameRecord& want, std::size_t i) {
  EXPECT_EQ(got.source, want.source) << "row " << i;
  EXPECT_EQ(got.input_sha256, want.input_sha256) << "row " << i;
  EXPECT_EQ(got.model, want.model) << "row " << i;
  EXPECT_EQ(got.frame_index, want.frame_index) << "row " << i;
  EXPECT_TRUE(got.time_ps == want.time_ps || (std::isnan(got.time_ps) && std::isnan(want.time_ps)))
      << "row " << i << ": " << got.time_ps;
  EXPECT_EQ(got.status, want.status) << "row " << i;
  EXPECT_EQ(got.atom_count, want.atom_count) << "row " << i;
  EXPECT_EQ(got.total_charge, want.total_charge) << "row " << i;
  EXPECT_EQ(got.message, want.message.substr(0, 255)) << "row " << i;
}

BatchLayout layout_of(std::size_t n) {
  BatchLayout layout;
  layout.grid.origin = {0, 0, 0};
  layout.grid.spacing = {1, 1, 1};
  layout.grid.dims = {2, 2, 2};
  for (std::size_t i = 0; i < n; ++i) layout.frames.push_back(row(i, n));
  return layout;
}

std::string find_h5py() {
  for (const char* candidate : {"/usr/bin/python3", "python3"})
    if (test::run_command(std::string(candidate) + " -c 'import h5py, numpy'").status == 0) return candidate;
  return {};
}

}  // namespace

TEST(FrameTable, HoldsEachSourceOnceAndGivesRowsBackWhole) {
  const std::size_t n = 60;
  FrameTable table;
  for (std::size_t i = 0; i < n; ++i) table.push_back(row(i, n));
  ASSERT_EQ(table.size(), n);
  EXPECT_EQ(table.sources().size(), 4u);  // three runs of files, then the first file again
  for (std::size_t i = 0; i < n; ++i) expect_same(table[i], row(i, n), i);
  EXPECT_EQ(table.count(FrameStatus::complete), n / 3);
  EXPECT_EQ(table.count(FrameStatus::failed), n / 3);

  // A message is kept for failed frames only; an outcome replaces the one before.
  table.set_outcome(2, FrameStatus::complete, 5, -0.0);
  EXPECT_EQ(table.message(2), "");
  EXPECT_EQ(table.atom_count(2), 5u);
  EXPECT_TRUE(std::signbit(table.total_charge(2)));  // -0.0 is not taken for the 0.0 of others
  table.set_outcome(3, FrameStatus::failed, 0, 0, "bad");
  EXPECT_EQ(table[3].message, "bad");
  table.set_outcome(3, FrameStatus::pending, 0, 0, "ignored");
  EXPECT_EQ(table[3].message, "");

  const FrameTable part = table.slice(10, 25);
  ASSERT_EQ(part.size(), 15u);
  FrameTable joined = table.slice(0, 10);
  joined.append(part);
  joined.append(table.slice(25, n));
  ASSERT_EQ(joined.size(), n);
  std::size_t rows = 0;
  for (const FrameRecord& r : joined) expect_same(r, table[rows], rows), ++rows;
  EXPECT_EQ(rows, n);
}

// 2,500 rows: two whole blocks of 1,024 and a part, read back by BatchFile and by h5py.
TEST(FrameTable, BatchFileWritesAndReadsEveryRowInBlocks) {
  const fs::path dir = test::temp_dir("frame-table-blocks");
  const std::size_t n = 2500;
  BatchFile::create(dir / "t.h5", layout_of(n));
  {
    const BatchFile file(dir / "t.h5");
    ASSERT_EQ(file.frames().size(), n);
    EXPECT_EQ(file.frames().sources().size(), 4u);
    for (std::size_t i = 0; i < n; ++i) expect_same(file.frames()[i], row(i, n), i);
  }
  const std::string python = find_h5py();
  if (python.empty()) GTEST_SKIP() << "no python3 with h5py and numpy: the independent read is skipped";
  // The expected rows as text, one a line: source sha model frame time status atoms charge message.
  {
    std::ofstream out(dir / "rows.txt");
    for (std::size_t i = 0; i < n; ++i) {
      const FrameRecord r = row(i, n);
      char numbers[160];
      std::snprintf(numbers, sizeof numbers, "%d %lld %.17g %d %zu %.17g", r.model,
                    static_cast<long long>(r.frame_index), r.time_ps, int(r.status), r.atom_count,
                    r.total_charge);
      out << r.source << ' ' << r.input_sha256 << ' ' << numbers << ' ' << r.message.substr(0, 255) << '\n';
    }
  }
  test::write_text(dir / "check.py",
                   "import sys, math, h5py\n"
                   "f = h5py.File(sys.argv[1], 'r')['frames']\n"
                   "cols = {k: f[k][:] for k in f}\n"
                   "lines = open(sys.argv[2]).read().split('\\n')[:-1]\n"
                   "assert len(lines) == len(cols['status']), (len(lines), len(cols['status']))\n"
                   "for i, line in enumerate(lines):\n"
                   "    p = line.split(' ', 8)\n"
                   "    got = [cols['source'][i].decode(), cols['input_sha256'][i].decode(),\n"
                   "           int(cols['model'][i]), int(cols['frame_index'][i])]\n"
                   "    assert got == [p[0], p[1], int(p[2]), int(p[3])], (i, got, p[:4])\n"
                   "    t = float(p[4]); tt = float(cols['time_ps'][i])\n"
                   "    assert tt == t or (math.isnan(t) and math.isnan(tt)), (i, tt, t)\n"
                   "    assert int(cols['status'][i]) == int(p[5]), i\n"
                   "    assert int(cols['atom_count'][i]) == int(p[6]), i\n"
                   "    assert float(cols['total_charge'][i]) == float(p[7]), i\n"
                   "    assert cols['message'][i].decode() == p[8], (i, cols['message'][i])\n"
                   "print('h5py ok', len(lines))\n");
  const auto r = test::run_command(python + " " + (dir / "check.py").string() + " " +
                                   (dir / "t.h5").string() + " " + (dir / "rows.txt").string() + " 2>&1");
  EXPECT_EQ(r.status, 0) << r.output;
  fs::remove_all(dir);
}

// Writes change the shared table and the file alike: a complete frame's outcome and its source's
// checksum as set for a resume, a failure's message; a reopened file reads what was written.
TEST(FrameTable, WritesUpdateTheTableAndTheFile) {
  const fs::path dir = test::temp_dir("frame-table-writes");
  const std::size_t n = 40;
  BatchFile::create(dir / "w.h5", layout_of(n));
  const std::vector<float> map(8, 1.5f);
  {
    BatchFile file(dir / "w.h5", true);
    const std::uint32_t source = file.frames().source_of(0);
    file.set_source_sha256(source, std::string(64, 'f'));
    FrameRecord outcome;
    outcome.atom_count = 77;
    outcome.total_charge = -1.25;
    file.write_frame(0, map.data(), outcome, nullptr);
    outcome.message = "it broke";
    file.write_failure(3, outcome);
    EXPECT_EQ(file.frames().status(0), FrameStatus::complete);
    EXPECT_EQ(file.frames().atom_count(0), 77u);
    EXPECT_EQ(file.frames()[3].message, "it broke");
    EXPECT_EQ(file.frames().status(3), FrameStatus::failed);
  }
  const BatchFile file(dir / "w.h5");
  FrameRecord want = row(0, n);
  want.input_sha256 = std::string(64, 'f');
  want.status = FrameStatus::complete;
  want.atom_count = 77;
  want.total_charge = -1.25;
  expect_same(file.frames()[0], want, 0);
  want = row(3, n);
  want.input_sha256 = std::string(64, 'f');  // its source's checksum now, as for frame 0
  want.status = FrameStatus::failed;
  want.atom_count = 77;
  want.total_charge = -1.25;
  want.message = "it broke";
  expect_same(file.frames()[3], want, 3);
  expect_same(file.frames()[1], row(1, n), 1);  // untouched
  fs::remove_all(dir);
}

// One group of frames out of order and with gaps between them (as an MPI rank's writer gets
// them): each frame gets its own map, stats row, table row and status, written one HDF5 call a
// column; the rows between them stay as created; each frame passes the four write steps in order.
TEST(FrameTable, AGroupOutOfOrderWithGapsWritesEachFramesOwnRows) {
  const fs::path dir = test::temp_dir("frame-table-group");
  const std::size_t n = 40;
  BatchLayout layout = layout_of(n);
  layout.histogram_bins = 3;
  BatchFile::create(dir / "g.h5", layout);
  const std::vector<std::size_t> group = {21, 3, 12, 6};  // pending rows (i % 3 == 0); 9 between
  std::vector<std::vector<float>> maps;
  std::vector<MapStats> stats;
  std::vector<BatchFile::FrameWrite> writes;
  for (std::size_t k : group) {
    maps.push_back(std::vector<float>(8, float(k) + 0.5f));
    MapStats s;
    s.count = 8;
    s.min = s.max = s.mean = double(k) + 0.5;
    s.edges = {0.0, 1.0, 2.0, double(k)};
    s.counts = {k, 2 * k, 3 * k};
    s.below = k + 1;
    stats.push_back(s);
  }
  for (std::size_t g = 0; g < group.size(); ++g) {
    FrameRecord outcome;
    outcome.atom_count = 500 + group[g];
    outcome.total_charge = -0.5 * double(group[g]);
    writes.push_back({group[g], maps[g].data(), outcome, &stats[g]});
  }
  std::map<std::size_t, std::vector<WriteStep>> steps;
  {
    BatchFile file(dir / "g.h5", true);
    file.write_frames(writes, [&](std::size_t i, WriteStep s) { steps[i].push_back(s); });
  }
  const std::vector<WriteStep> in_order = {WriteStep::data_written, WriteStep::data_flushed,
                                           WriteStep::status_written, WriteStep::status_flushed};
  const BatchFile file(dir / "g.h5");
  const std::vector<MapStats> stored = file.stats();
  for (std::size_t g = 0; g < group.size(); ++g) {
    const std::size_t k = group[g];
    EXPECT_EQ(steps[k], in_order) << "frame " << k;
    FrameRecord want = row(k, n);
    want.status = FrameStatus::complete;
    want.atom_count = 500 + k;
    want.total_charge = -0.5 * double(k);
    expect_same(file.frames()[k], want, k);
    std::vector<float> back(8, -1.0f);
    file.read_frame(k, back.data());
    EXPECT_EQ(back, maps[g]) << "frame " << k;
    EXPECT_EQ(stored[k].min, double(k) + 0.5) << "frame " << k;
    EXPECT_EQ(stored[k].counts, (std::vector<std::uint64_t>{k, 2 * k, 3 * k})) << "frame " << k;
    EXPECT_EQ(stored[k].below, k + 1) << "frame " << k;
    EXPECT_EQ(stored[k].edges.back(), double(k)) << "frame " << k;
  }
  for (std::size_t k : {0, 9, 15, 24}) {  // around and between the group's frames
    expect_same(file.frames()[k], row(k, n), k);
    EXPECT_TRUE(std::isnan(stored[k].min)) << "frame " << k;
  }
  fs::remove_all(dir);
}
