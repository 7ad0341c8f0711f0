// --gpus on the command line: CUDA sees only the GPUs listed (core/gpu_ids.hpp), and messages and
// reports keep the user's numbers for them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "helpers.hpp"

namespace fs = std::filesystem;

namespace dcsgrid::test {
namespace {

class CliGpus : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = temp_dir("cli_gpus");
    std::ofstream(dir / "one.xyz") << "1\npoint charge\nNa 0 0 0 1.0\n";
  }
  void TearDown() override { fs::remove_all(dir); }
  // `dcsgrid one.xyz -o pot.h5 --device DEVICE ARGS` with the environment assignment `env` before it.
  CommandResult run(const std::string& env, const std::string& args, const std::string& device = "gpu") const {
    return run_command(env + " " + dcsgrid_binary() + " " + (dir / "one.xyz").string() + " -o " +
                       (dir / "pot.h5").string() + " --origin 1,1,1 --dims 8,8,8 --spacing 1 --device " + device +
                       " " + args);
  }
  fs::path dir;
};

// Checked before CUDA starts, so on any machine, GPU or not.
TEST_F(CliGpus, RefusesRepeatsAndIdsBeyondAListAlreadySet) {
  auto r = run("", "--gpus 1,1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--gpus: GPU 1 is listed twice"), std::string::npos) << r.output;
  r = run("CUDA_VISIBLE_DEVICES=0", "--gpus 1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--gpus: there is no GPU 1 (CUDA_VISIBLE_DEVICES='0' lists 1, numbered from 0)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir / "pot.h5"));
}

// The report names the GPU by the user's number: the last GPU of the machine (GPU 0 on a machine
// with one), and a number past the last is refused by that number.
TEST_F(CliGpus, ReportsAndRefusesGpusByTheUsersNumbers) {
  DCSGRID_REQUIRE_GPU();
  const CommandResult listed = run_command("nvidia-smi -L | grep -c '^GPU '");
  const int count = listed.status == 0 ? std::stoi(listed.output) : 1;
  const std::string last = std::to_string(count - 1);
  auto r = run("", "--gpus " + last + " --json -q > " + (dir / "run.json").string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(dir / "run.json");
  const nlohmann::json devices = nlohmann::json::parse(in).at("passes").at(0).at("devices");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].at("device").get<std::string>().rfind("GPU " + last + " (", 0), 0u) << devices.dump();
  fs::remove(dir / "pot.h5");
  for (const std::string device : {"gpu", "auto"}) {  // auto does not fall back to the CPU
    r = run("", "--gpus " + std::to_string(count), device);
    EXPECT_NE(r.status, 0) << device;
    EXPECT_NE(r.output.find("--gpus: there is no GPU " + std::to_string(count) + " on this machine"),
              std::string::npos)
        << r.output;
    r = run("", "--gpus 0," + std::to_string(count), device);
    EXPECT_NE(r.status, 0) << device;
    EXPECT_NE(r.output.find("--gpus: there is no GPU " + std::to_string(count) + " on this machine"),
              std::string::npos)
        << r.output;
  }
  EXPECT_FALSE(fs::exists(dir / "pot.h5"));
}

}  // namespace
}  // namespace dcsgrid::test
