// Issue 21's limit reproducers, end to end: thread counts, grid arithmetic, far atoms, option
// bounds, outputs that cannot be written (a read-only folder, too little disk) refused before any
// compute, a constant map's statistics, and one broken model of a multi-model batch input.
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/io/map_io.hpp"
#include "dcsgrid/io/output_checks.hpp"
#include "helpers.hpp"
#include "test_analysis_batch_util.hpp"

namespace fs = std::filesystem;
using namespace dcsgrid;
using analysis::BatchFile;
using analysis::FrameStatus;
using test::run_command;

namespace {

// The dcsgrid command line for args, on the CPU and quiet.
std::string command_line(const std::string& args) {
  return test::dcsgrid_binary() + " " + args + " --device cpu -q";
}

// A tmpfs mounted over dir for the test's lifetime; needs root (skipped otherwise).
class Tmpfs {
 public:
  Tmpfs(const fs::path& dir, unsigned long flags, const std::string& options) : dir_(dir) {
    fs::create_directories(dir);
    mounted_ = ::geteuid() == 0 && ::mount("tmpfs", dir.c_str(), "tmpfs", flags, options.c_str()) == 0;
  }
  ~Tmpfs() {
    if (mounted_) ::umount(dir_.c_str());
  }
  bool mounted() const { return mounted_; }

 private:
  fs::path dir_;
  bool mounted_ = false;
};

class CliLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = test::temp_dir("cli-limits");
    test::write_text(dir / "three.xyz", "3\nions\nNa 0 0 0 1.0\nCl 3 0 0 -1.0\nO 1 1 0 0.5\n");
    input = (dir / "three.xyz").string();
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
  std::string input;
};

}  // namespace

// Issue 21 item 3: --threads 100000 overflowed libgomp's stack and left a temporary.
TEST_F(CliLimits, ThreadCountsBeyondTheBoundAreUsageErrorsLeavingNothing) {
  for (const std::string& command : {command_line(input + " -o " + (dir / "a.h5").string()),
                                     command_line("batch " + input + " -o " + (dir / "b.h5").string())})
    for (const char* threads : {"100000", "50000", "-1"}) {
      const auto r = run_command(command + " --threads " + threads);
      EXPECT_EQ(r.status, 2) << command << " --threads " << threads << ": " << r.output;
      EXPECT_NE(r.output.find("--threads"), std::string::npos) << r.output;
    }
  EXPECT_EQ(test::listing(dir), std::vector<std::string>{"three.xyz"});
}

// Item 5: huge padding, tiny spacing, an atom at 1.8e19 Å and dims whose product wraps gave 1x1x1
// or negative grids and exit 0. Each is now refused naming the axis or the sizes.
TEST_F(CliLimits, GridArithmeticBeyondItsLimitsIsRefused) {
  const std::string out = " -o " + (dir / "a.h5").string();
  auto r = run_command(command_line(input + out + " --padding 1e300"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("more than 2^30 points"), std::string::npos) << r.output;
  r = run_command(command_line(input + out + " --spacing 1e-300"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("more than 2^30 points"), std::string::npos) << r.output;
  test::write_text(dir / "far.xyz", "2\nfar\nNa 0 0 0 1\nCl 1e17 0 0 -1\n");
  r = run_command(command_line((dir / "far.xyz").string() + out + " --allow-far-atoms"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("more than 2^30 points"), std::string::npos) << r.output;
  test::write_text(dir / "far.xyz", "2\nfar\nNa 0 0 0 1\nCl 1.8e19 0 0 -1\n");  // the issue's
  r = run_command(command_line((dir / "far.xyz").string() + out + " --allow-far-atoms"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("far.xyz:4: this atom lies beyond"), std::string::npos) << r.output;
  // 2^30 · 2^30 · 16 = 2^64 points wrapped to 0: the message gives points and bytes and the limit.
  r = run_command(command_line(input + out + " --origin 0,0,0 --dims 1073741824,1073741824,16"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("1.84e+19 points"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("6.87e+10 GiB"), std::string::npos) << r.output;  // 2^66 bytes
  EXPECT_NE(r.output.find("2^60"), std::string::npos) << r.output;
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"far.xyz", "three.xyz"}));
}

// Item 5: 99999 typed for 9.999 would have streamed a 50002x50003x50002 grid to disk.
TEST_F(CliLimits, MistypedCoordinateIsNamedByLineAndMaxPointsHoldsWhenAllowed) {
  test::write_text(dir / "typo.pqr",
                   "ATOM      1  N   ALA A   1       1.000   2.000   3.000 -0.3000 1.8240\n"
                   "ATOM      2  CA  ALA A   1       2.000   2.000   3.000  0.1000 1.9080\n"
                   "ATOM      3  C   ALA A   1       3.000   2.000   3.000  0.2000 1.9080\n"
                   "ATOM      4  O   ALA A   1       99999   2.000   3.000  0.0000 1.6612\n");
  const std::string args = (dir / "typo.pqr").string() + " -o " + (dir / "a.h5").string();
  auto r = run_command(command_line(args));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("typo.pqr:4"), std::string::npos) << r.output;
  r = run_command(command_line(args + " --allow-far-atoms --max-points 1000000"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--max-points 1000000"), std::string::npos) << r.output;
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"three.xyz", "typo.pqr"}));
}

// Item 11: --model 0 printed DBL_MAX, 309 digits, as the bound.
TEST_F(CliLimits, OptionBoundsAreShort) {
  const std::string out = (dir / "a.h5").string();
  for (const std::string& command :
       {command_line(input + " -o " + out + " --model 0"), command_line(input + " -o " + out + " --max-points 0"),
        command_line("batch " + input + " -o " + out + " --model 0")}) {
    const auto r = run_command(command);
    EXPECT_EQ(r.status, 2) << command << ": " << r.output;
    EXPECT_EQ(r.output.find("179769313486"), std::string::npos) << command << ": " << r.output;
    EXPECT_LT(r.output.size(), 200u) << command << ": " << r.output;
  }
}

// Item 11: a read-only folder for DX/CCP4 outputs was found only after the compute. A direct sum
// of minutes (3,368 atoms on 0.2 Å) must be refused at once, for every output and for batch.
TEST_F(CliLimits, ReadOnlyFolderIsRefusedBeforeAnyCompute) {
  const fs::path ro = dir / "ro";
  Tmpfs mount(ro, MS_RDONLY, "size=64k");
  if (!mount.mounted()) {
    if (::geteuid() == 0) GTEST_SKIP() << "root without the right to mount a read-only tmpfs";
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  }
  const std::string slow = test::data_file("1hpv_pdb2pqr_amber.pqr.gz").string() + " --spacing 0.2";
  for (const std::string& outputs :
       {" -o " + (ro / "a.dx").string(), " -o " + (dir / "a.h5").string() + " -o " + (ro / "a.ccp4").string(),
        " -o " + (ro / "a.h5").string()}) {
    const auto r = run_command("timeout 60 " + command_line(slow + outputs));
    EXPECT_EQ(r.status, 1) << outputs << ": " << r.output;
    EXPECT_NE(r.output.find("cannot write " + ro.string()), std::string::npos) << r.output;
  }
  const auto b = run_command("timeout 60 " + command_line("batch " + slow + " -o " + (ro / "b.h5").string()));
  EXPECT_EQ(b.status, 1) << b.output;
  EXPECT_NE(b.output.find("cannot write " + ro.string()), std::string::npos) << b.output;
  if (!mount.mounted()) fs::permissions(ro, fs::perms::owner_all);
  EXPECT_TRUE(test::listing(ro).empty());
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"ro", "three.xyz"}));
}

// Limits before compute: a streamed HDF5 output larger than any disk (2^50 points, 2^52 bytes) is
// refused with the figures; with a 1 MiB file system, every format and batch are.
TEST_F(CliLimits, OutputsBeyondTheFreeSpaceAreRefusedWithTheFigures) {
  auto r = run_command(command_line(input + " -o " + (dir / "a.h5").string() +
                               " --origin 0,0,0 --dims 1048576,1048576,1024 --max-points 1152921504606846976"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("at least 4503599627370496 bytes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("free"), std::string::npos) << r.output;

  const fs::path small = dir / "small";
  Tmpfs mount(small, 0, "size=1m");
  if (!mount.mounted()) GTEST_SKIP() << "a 1 MiB tmpfs needs root (the 2^52-byte case ran)";
  // 81^3 points: 2.1 MB of float32, 1.06 MB of text at least.
  const std::string grid = " --origin 0,0,0 --dims 81,81,81 --spacing 0.1";
  for (const char* name : {"a.h5", "a.dx", "a.ccp4", "a.cube"}) {
    r = run_command(command_line(input + " -o " + (small / name).string() + grid));
    EXPECT_EQ(r.status, 1) << name << ": " << r.output;
    EXPECT_NE(r.output.find("the file system of " + small.string()), std::string::npos) << r.output;
  }
  r = run_command(command_line("batch " + input + " -o " + (small / "b.h5").string() + grid));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("at least 2125764 bytes"), std::string::npos) << r.output;  // 81^3·4
  EXPECT_TRUE(test::listing(small).empty());
}

// Item 11: a constant map of 1e20 broke info's histogram ("need finite lo < hi").
TEST_F(CliLimits, InfoOnAConstantMapOfHugeValues) {
  const GridSpec grid = grid_from_origin({0, 0, 0}, {4, 3, 2}, 1.0);
  const std::vector<float> data(grid.point_count(), 1e20f);
  io::MapMetadata meta;
  meta.units = "kT/e";
  io::write_dx(dir / "c.dx", grid, data.data(), meta);
  const auto r = run_command(test::dcsgrid_binary() + " info " + (dir / "c.dx").string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("min 1e+20, max 1e+20"), std::string::npos) << r.output;
}

// Item 11: one broken model of a multi-model input failed the whole file; now it is one failed
// frame (its message names the line) and the other models are computed.
TEST_F(CliLimits, BrokenModelIsOneFailedFrameOfItsBatch) {
  const AtomSet m1 = test::random_atoms(5, Box{{0, 0, 0}, {2, 2, 2}}, 31);
  const AtomSet m3 = test::random_atoms(6, Box{{1, 0, 0}, {3, 2, 2}}, 33);
  std::string text = test::pqr_text({m1, m1, m3});
  // Model 2's second atom gets an unreadable x: line 2 (MODEL 1) + 5 + 1 (ENDMDL) + 1 (MODEL 2) + 2.
  std::size_t line_start = 0;
  for (int l = 1; l < 10; ++l) line_start = text.find('\n', line_start) + 1;
  text.replace(line_start + 30, 8, "   x.000");
  test::write_text(dir / "models.pqr", text);
  const fs::path out = dir / "models.h5";
  const std::string grid = " --origin -2,-2,-2 --dims 15,13,13 --spacing 0.5";
  const auto r = run_command(command_line("batch " + (dir / "models.pqr").string() + " --models all -o " +
                                     out.string() + grid));
  EXPECT_EQ(r.status, 3) << r.output;  // written, some frames failed
  const BatchFile file(out);
  ASSERT_EQ(file.frames().size(), 3u);
  EXPECT_EQ(file.frames()[0].status, FrameStatus::complete);
  EXPECT_EQ(file.frames()[1].status, FrameStatus::failed);
  EXPECT_EQ(file.frames()[1].model, 2);
  EXPECT_NE(file.frames()[1].message.find("models.pqr:10"), std::string::npos) << file.frames()[1].message;
  EXPECT_EQ(file.frames()[2].status, FrameStatus::complete);
  EXPECT_EQ(file.frames()[2].model, 3);
  const GridSpec g = grid_from_origin({-2, -2, -2}, {15, 13, 13}, 0.5);
  std::vector<float> frame(g.point_count());
  file.read_frame(2, frame.data());
  const auto reference = test::reference_direct(test::as_stored(m3), g, make_pair_kernel(Physics{}));
  EXPECT_LT(test::relative_l2(frame, reference), 1e-5);
}

// A grid or atoms beyond ±1e18 Å made float32 squared distances overflow: NaN maps, exit 0
// (--origin 1e39, --center 1e30, two atoms at 3e19 Å around a box at the origin).
TEST_F(CliLimits, CoordinatesWhereFloat32DistancesOverflowAreRefused) {
  const std::string out = " -o " + (dir / "a.h5").string();
  auto r = run_command(command_line(input + out + " --origin 1e39,0,0 --dims 2,2,2"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("the grid reaches 1e+39 Å along x"), std::string::npos) << r.output;
  r = run_command(command_line(input + out + " --center 0,-1e30,0 --size 2,2,2"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("along y"), std::string::npos) << r.output;
  test::write_text(dir / "far.xyz", "2\nfar\nNa 3e19 0 0 1\nCl 0 0 3e19 -1\n");
  const std::string box = " --origin 0,0,0 --dims 2,2,2";
  r = run_command(command_line((dir / "far.xyz").string() + out + box));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("far.xyz:3: this atom lies beyond"), std::string::npos) << r.output;
  r = run_command(command_line("batch " + (dir / "far.xyz").string() + " -o " + (dir / "b.h5").string() + box));
  EXPECT_EQ(r.status, 3) << r.output;  // the frame fails, recorded
  const BatchFile file(dir / "b.h5");
  EXPECT_EQ(file.frames()[0].status, FrameStatus::failed);
  EXPECT_NE(file.frames()[0].message.find("atom 1 lies at (3e+19, 0, 0)"), std::string::npos)
      << file.frames()[0].message;
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"b.h5", "far.xyz", "three.xyz"}));
}

// Item 10: interrupted, a run leaves every old output as it was (all old, never some new) and no
// temporary; the outputs of a 3,368-atom direct sum on 0.2 Å (a minute on two cores) replace
// those of a quick run, and SIGINT comes after 1.5 s.
TEST_F(CliLimits, InterruptLeavesEveryOldOutputAsItWas) {
  const std::string outputs = " -o " + (dir / "pot.h5").string() + " -o " + (dir / "pot.dx").string();
  ASSERT_EQ(run_command(command_line(input + outputs + " --spacing 1")).status, 0);
  auto bytes = [&](const char* name) {
    std::ifstream in(dir / name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string h5 = bytes("pot.h5"), dx = bytes("pot.dx"), xmf = bytes("pot.xmf");
  const std::string slow = test::data_file("1hpv_pdb2pqr_amber.pqr.gz").string() + " --spacing 0.2";
  const auto r = run_command("timeout --preserve-status -s INT 1.5 " + command_line(slow + outputs));
  EXPECT_EQ(r.status, 130) << r.output;
  EXPECT_EQ(bytes("pot.h5"), h5);
  EXPECT_EQ(bytes("pot.dx"), dx);
  EXPECT_EQ(bytes("pot.xmf"), xmf);
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"pot.dx", "pot.h5", "pot.xmf", "three.xyz"}));
}

// Issue 35 group 12: a map written in full at the end (.dx, .dx.gz) that meets a full disk named
// the hidden temporary it was staged under; the message names the output and the cause.
TEST_F(CliLimits, DiskFullWhileWritingATextMapNamesTheOutput) {
  const fs::path small = dir / "small";
  Tmpfs mount(small, 0, "size=64k");
  if (!mount.mounted()) GTEST_SKIP() << "a 64 KiB tmpfs needs root";
  // 25^3 points pass the free-space check (2 bytes a value at least) but take ~10 as text;
  // gzipped maps have no least size, and 60^3 points do not fit compressed either.
  for (const auto& [name, dims] : {std::pair{"a.dx", "25,25,25"}, std::pair{"a.dx.gz", "60,60,60"}}) {
    const auto r = run_command(command_line(input + " -o " + (small / name).string() +
                                            " --origin -2,-2,-2 --spacing 0.2 --dims " + dims));
    EXPECT_EQ(r.status, 1) << name << ": " << r.output;
    EXPECT_NE(r.output.find("error: " + (small / name).string() + ": cannot "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find(".tmp-"), std::string::npos) << r.output;
    EXPECT_TRUE(test::listing(small).empty()) << name;
  }
}

// Issue 35 group 12: `info --store-stats` on a full disk said "Input/output error" (the copy the
// statistics are written into failed on tmpfs); it names the file and says the disk is full.
TEST_F(CliLimits, StoreStatsOnAFullDiskSaysSo) {
  const fs::path small = dir / "small";
  Tmpfs mount(small, 0, "size=256k");
  if (!mount.mounted()) GTEST_SKIP() << "a 256 KiB tmpfs needs root";
  const fs::path map = small / "m.h5";
  auto r = run_command(command_line(input + " -o " + map.string() + " --origin -2,-2,-2 --spacing 0.2 --dims 20,20,20"));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto before = fs::file_size(map);
  test::write_text(small / "filler", std::string(std::size_t(io::free_bytes(small)) - 8192, 'x'));
  r = run_command(test::dcsgrid_binary() + " info " + map.string() + " --store-stats");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("cannot add statistics to " + map.string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("disk full"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Input/output error"), std::string::npos) << r.output;
  EXPECT_EQ(fs::file_size(map), before);
  EXPECT_EQ(test::listing(small), (std::vector<std::string>{"filler", "m.h5", "m.xmf"}));
}

// Issue 35 group 9: names and file content with control bytes reached the terminal raw (a file
// named with an escape sequence; `batch @random.bin` wrote 117 kB with ESC bytes). Every echoed
// byte is now printable, and the binary list file is refused at its first bad byte.
TEST_F(CliLimits, MessagesNeverEchoControlBytes) {
  const fs::path odd = dir / "esc\x1b[31mred.pqr";
  test::write_text(odd, "REMARK fine\nATOM \x01\x1b[2J\n");
  auto r = run_command(command_line("'" + odd.string() + "' -o " + (dir / "a.h5").string()));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("esc\\x1B[31mred.pqr:2: binary data (byte 0x01 at byte offset 17)"),
            std::string::npos) << r.output;

  std::string random(200000, '\0');
  std::mt19937 bits(35);
  for (char& c : random) c = char(bits() & 0xFF);
  test::write_text(dir / "random.bin", random);
  r = run_command(command_line("batch @" + (dir / "random.bin").string() + " -o " + (dir / "b.h5").string()));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_LT(r.output.size(), 400u) << r.output;
  EXPECT_NE(r.output.find("random.bin:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(": binary data (byte 0x"), std::string::npos) << r.output;
  for (const char c : r.output) EXPECT_TRUE(c == '\n' || (unsigned char)c >= 0x20) << int(c);

  r = run_command("timeout 20 " + command_line("batch @/dev/zero -o " + (dir / "b.h5").string()));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("/dev/zero: is a character device"), std::string::npos) << r.output;
}
