// Issue 21's and 35's limit reproducers, end to end: thread counts, grid arithmetic, far atoms,
// option bounds, outputs that cannot be written (a read-only folder, too little disk) refused
// before any compute, a constant map's statistics, one broken model of a multi-model batch input,
// non-finite options, and the message options every command takes.
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <nlohmann/json.hpp>

#include "dcsgrid/analysis/batch_file.hpp"
#include "dcsgrid/io/maps/io.hpp"
#include "dcsgrid/io/files/output_lock.hpp"
#include "dcsgrid/io/files/output_checks.hpp"
#include "helpers.hpp"
#include "lock_holder.hpp"
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

// Issue 21 item 3: --threads 100000 overflowed libgomp's stack and left a temporary. Issue 35
// group 1: the 4096 cap let a 2-core batch run 50 times slower, and OMP_NUM_THREADS=100000 (not
// capped at all) crashed the main job and info. One bound now holds for all: the run goes on with
// at most kThreadsPerHardwareThread threads a hardware thread, and says so.
TEST_F(CliLimits, ThreadCountsBeyondTheBoundAreCutWithAWarningLeavingNoTemporary) {
  const std::string a = (dir / "a.h5").string(), b = (dir / "b.h5").string();
  const std::string main = command_line(input + " -o " + a);
  const std::string batch = command_line("batch " + input + " -o " + b + " --overwrite");
  for (const std::string& command : {main, batch}) {
    for (const std::string threads : {"100000", "50000"}) {
      const auto r = run_command(command + " --threads " + threads);
      EXPECT_EQ(r.status, 0) << command << " --threads " << threads << ": " << r.output;
      EXPECT_NE(r.output.find("--threads " + threads + ": more than 4 threads per hardware thread"),
                std::string::npos)
          << r.output;
    }
    const auto r = run_command(command + " --threads -1");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("--threads"), std::string::npos) << r.output;
  }
  const std::string info = test::dcsgrid_binary() + " info ";
  for (const std::string& command : {main, batch, info + a, info + b}) {
    const auto r = run_command("OMP_NUM_THREADS=100000 " + command);
    EXPECT_EQ(r.status, 0) << command << ": " << r.output;
    if (command.find(info) != 0)  // info may read stored statistics and start no team
      EXPECT_NE(r.output.find("OMP_NUM_THREADS 100000 (OpenMP's default team): more than 4"),
                std::string::npos)
          << r.output;
  }
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"a.h5", "a.xmf", "b.h5", "three.xyz"}));
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

// Issue 35 group 8: `compare --grid-tolerance nan` skipped the grid check, as CLI11's range check
// lets NaN through. Every floating option of every command refuses NaN and infinities, a usage
// error naming the option.
TEST_F(CliLimits, NonFiniteFloatingOptionsAreUsageErrors) {
  const std::string bin = test::dcsgrid_binary() + " ";
  const std::string main = bin + input + " -o " + (dir / "a.h5").string() + " ";
  const std::string batch = bin + "batch " + input + " -o " + (dir / "b.h5").string() + " ";
  const std::string two_maps = input + " " + input + " ";
  struct Case {
    std::string command, option, items;  // items: a list option's items before the bad one
  };
  std::vector<Case> cases;
  for (const std::string& command : {main, batch}) {
    for (const char* option : {"--spacing", "--padding", "--dielectric", "--ionic-strength",
                               "--temperature", "--min-distance", "--cutoff", "--switch-start",
                               "--msm-cutoff", "--msm-spacing", "--pme-cutoff", "--pme-tolerance",
                               "--pme-spacing", "--smooth"})
      cases.push_back({command, option, ""});
    cases.push_back({command + "--size 1,1,1 ", "--center", "0,1,"});
    cases.push_back({command + "--center 0,0,0 ", "--size", "0,1,"});
    cases.push_back({command + "--dims 2,2,2 ", "--origin", "0,1,"});
  }
  cases.push_back({batch, "--histogram-range", "0,"});
  cases.push_back({bin + "compare " + two_maps, "--grid-tolerance", ""});
  cases.push_back({bin + "compare " + two_maps, "--shells", "0,1,"});
  cases.push_back({bin + "similarity " + two_maps, "--mask-distance", ""});
  for (const Case& c : cases)
    for (const std::string value : {"nan", "inf", "-inf", "NaN"}) {
      const std::string arg = c.option + "=" + c.items + value;
      const auto r = run_command(c.command + arg + " --device cpu");
      EXPECT_EQ(r.status, 2) << c.command << arg << ": " << r.output;
      EXPECT_NE(r.output.find(c.option + ": " + value + " is not a finite number"), std::string::npos)
          << c.command << arg << ": " << r.output;
    }
  // The issue's case, against two real maps, and the bounds the option keeps.
  ASSERT_EQ(run_command(command_line(input + " -o " + (dir / "a.h5").string())).status, 0);
  const std::string map = (dir / "a.h5").string(), compare = bin + "compare " + map + " " + map;
  EXPECT_EQ(run_command(compare + " --grid-tolerance 0.5").status, 0);
  const auto r = run_command(compare + " --grid-tolerance 2");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--grid-tolerance: 2 is not in [0, 1]"), std::string::npos) << r.output;
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"a.h5", "a.xmf", "three.xyz"}));
}

// Issue 35 group 8: --size 1e30,1e30,1e30 printed "grid dimension x is -9223372036854775807" (an
// out-of-range double to integer conversion); the message now gives the size asked for.
TEST_F(CliLimits, HugeBoxSizeIsRefusedNamingTheSize) {
  const auto r = run_command(command_line(input + " -o " + (dir / "a.h5").string() +
                                          " --center 0,0,0 --size 1e30,1e30,1e30"));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("--size 1e+30 Å along x: 2e+30 points at spacing 0.5 Å, more than 2^30"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("-9223372036854775807"), std::string::npos) << r.output;
  EXPECT_EQ(test::listing(dir), std::vector<std::string>{"three.xyz"});
}

// Issue 35 group 12: `compare -q` was refused while the main command took -q. Every command takes
// -q, -v and --json alike, from one registration.
TEST_F(CliLimits, EveryCommandTakesQuietVerboseAndJson) {
  const std::string bin = test::dcsgrid_binary();
  for (const char* command : {"", " info", " compare", " batch", " merge", " sample", " similarity"}) {
    const auto help = run_command(bin + command + " --help");
    EXPECT_EQ(help.status, 0) << command << ": " << help.output;
    for (const char* flag : {"-q,--quiet", "-v,--verbose", "--json"})
      EXPECT_NE(help.output.find(flag), std::string::npos) << command << " lacks " << flag;
  }
  const std::string map = (dir / "a.h5").string();
  ASSERT_EQ(run_command(command_line(input + " -o " + map)).status, 0);
  auto r = run_command(bin + " compare " + map + " " + map + " -q -v");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rel. L2"), std::string::npos) << r.output;  // the result stays
  r = run_command(bin + " compare " + map + " " + map + " -q --json 2>/dev/null");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["test"], map);
  r = run_command(bin + " info " + map + " -q -vv --json 2>/dev/null");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(nlohmann::json::parse(r.output).contains("stats")) << r.output;
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
  EXPECT_NE(file.frames()[0].message.find("far.xyz:3: this atom lies beyond"), std::string::npos)
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

// Issue 35, group 5: charges of 1e36-3e38 (finite in float32) gave maps of inf/NaN with exit 0.
// Now refused before any output, naming the largest charge; --allow-non-finite computes them and
// warns of the values that are not finite.
TEST_F(CliLimits, ChargesThatOverflowFloat32SumsAreRefused) {
  test::write_text(dir / "huge.xyz", "2\nhuge\nNa 0 0 0 1e36\nCl 3 0 0 -3e38\n");
  const std::string args = (dir / "huge.xyz").string() + " -o " + (dir / "a.h5").string() +
                           " --origin -2,-2,-2 --dims 8,8,8 --spacing 1";
  auto r = run_command(command_line(args));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("largest -3e+38 e on atom 2"), std::string::npos) << r.output;
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"huge.xyz", "three.xyz"}));
  r = run_command(command_line(args + " --allow-non-finite"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("values are not finite (kept: --allow-non-finite)"), std::string::npos) << r.output;
}

// Issue 35, group 3: a second batch on a path that another process is writing (here the lock is
// held by a child process, as a running batch holds it) is refused with that process's id, even
// with --overwrite, and the file stays as it was. The child ends without releasing it (as kill -9
// would): the next batch takes the lock over and leaves no lock file.
TEST_F(CliLimits, SecondBatchWriterOfOnePathIsRefused) {
  const fs::path out = dir / "b.h5";
  const std::string batch = command_line("batch " + input + " -o " + out.string());
  ASSERT_EQ(run_command(batch).status, 0);
  const auto before = fs::last_write_time(out);
  test::LockHolder holder(out, false);  // ends without releasing, as a killed writer would
  const pid_t writer = holder.pid();
  ASSERT_GT(writer, 0);
  for (const std::string extra : {"", " --overwrite", " --resume"}) {
    const auto r = run_command(batch + extra);
    EXPECT_EQ(r.status, 1) << extra << r.output;
    EXPECT_NE(r.output.find("is being written by another process (process " + std::to_string(writer) + ")"),
              std::string::npos) << extra << r.output;
  }
  holder.end();
  EXPECT_EQ(fs::last_write_time(out), before);
  EXPECT_EQ(run_command(batch + " --overwrite").status, 0);
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"b.h5", "three.xyz"}));
}

// Issue 35, group 7: batch skipped the main command's far-atom check (an atom 4,950 Å away grew
// the grid to 1674x21x20). The frame now fails, named by file and line, and the grid stays small.
TEST_F(CliLimits, BatchRefusesAFarAtomAsTheMainCommandDoes) {
  test::write_text(dir / "far.xyz", "3\nfar\nNa 0 0 0 1\nCl 3 0 0 -1\nO 4950 0 0 0.5\n");
  test::write_text(dir / "list.txt", "three.xyz\nfar.xyz\n");
  const fs::path out = dir / "b.h5";
  auto r = run_command(command_line("batch @" + (dir / "list.txt").string() + " -o " + out.string()));
  EXPECT_EQ(r.status, 3) << r.output;
  const BatchFile file(out);
  EXPECT_LT(file.grid().nx(), 100) << file.grid().describe();  // 47: three.xyz plus padding
  EXPECT_EQ(file.frames()[0].status, FrameStatus::complete);
  EXPECT_EQ(file.frames()[1].status, FrameStatus::failed);
  EXPECT_NE(file.frames()[1].message.find("far.xyz:5: this atom lies 4947 Å from every other atom"),
            std::string::npos) << file.frames()[1].message;
  r = run_command(command_line("batch @" + (dir / "list.txt").string() + " -o " + out.string() +
                               " --overwrite --allow-far-atoms"));
  EXPECT_EQ(r.status, 0) << r.output;
}

// Issue 35, group 2, end to end: the input copied to pot.xmf was replaced by pot.h5's sidecar.
TEST_F(CliLimits, SidecarThatIsTheInputIsRefused) {
  fs::copy_file(input, dir / "pot.xmf");
  const auto r = run_command(command_line((dir / "pot.xmf").string() + " --format xyz -o " +
                                          (dir / "pot.h5").string()));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("(the sidecar of " + (dir / "pot.h5").string() + ") is the input"),
            std::string::npos) << r.output;
  EXPECT_EQ(test::listing(dir), (std::vector<std::string>{"pot.xmf", "three.xyz"}));
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
