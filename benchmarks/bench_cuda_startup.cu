// What a short GPU run pays the CUDA driver before and after its work: cuInit (through
// cudaGetDeviceCount), the primary context, pinning host memory, and the process's exit, for
// each number of hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS; the driver's default, 8, is
// the baseline). Each measurement is a fresh process (this program run again with --child), the
// queue counts interleaved round by round so that a drifting machine weighs on all alike.
//   bench_cuda_startup [--rounds 8] [--queues 8,2,1] [--pin-mib 16]
// Writes cuda_startup.json (report.hpp).
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "dcsgrid/core/cuda_support.hpp"
#include "report.hpp"

namespace dcsgrid::bench {
namespace {

double monotonic_seconds() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// The child: prints the monotonic times of its steps on one line, then returns from main.
int child(std::size_t pin_bytes) {
  const double start = monotonic_seconds();
  int devices = 0;
  DCSGRID_CUDA_CHECK(cudaGetDeviceCount(&devices));
  const double initialised = monotonic_seconds();
  DCSGRID_CUDA_CHECK(cudaFree(nullptr));
  const double context = monotonic_seconds();
  void* pinned = nullptr;
  DCSGRID_CUDA_CHECK(cudaMallocHost(&pinned, pin_bytes));
  const double pin = monotonic_seconds();
  DCSGRID_CUDA_CHECK(cudaFreeHost(pinned));
  std::printf("%.9f %.9f %.9f %.9f %.9f\n", start, initialised, context, pin, monotonic_seconds());
  std::fflush(stdout);
  return 0;
}

struct Sample {
  double to_main, init, context, pin, exit, wall;
};

// Runs this program as a child with `queues` work queues; its steps' durations.
Sample run_child(const std::string& self, int queues, std::size_t pin_mib) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  const double begin = monotonic_seconds();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(queues).c_str(), 1);
    const std::string pin = std::to_string(pin_mib);
    execl(self.c_str(), self.c_str(), "--child", pin.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string line;
  char buf[256];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;) line.append(buf, std::size_t(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const double end = monotonic_seconds();
  double t[5];
  std::istringstream in(line);
  for (double& v : t) in >> v;
  if (!in || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the child failed: " + line);
  return {t[0] - begin, t[1] - t[0], t[2] - t[1], t[3] - t[2], end - t[4], end - begin};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int run(int argc, char** argv) {
  int rounds = 8;
  std::vector<int> queues = {8, 2, 1};
  std::size_t pin_mib = 16;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--child") try {
        return child(std::stoul(argv[i + 1]) << 20);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
      }
    if (flag == "--rounds") rounds = std::stoi(argv[i + 1]);
    if (flag == "--pin-mib") pin_mib = std::stoul(argv[i + 1]);
    if (flag == "--queues") {
      queues.clear();
      std::istringstream list(argv[i + 1]);
      for (std::string q; std::getline(list, q, ',');) queues.push_back(std::stoi(q));
    }
  }
  // This process stays off CUDA: a process that holds the driver makes the others' cuInit cheap.
  const std::string self = "/proc/self/exe";
  std::map<int, std::vector<Sample>> samples;
  try {
    for (int r = 0; r < rounds; ++r)
      for (const int q : queues) samples[q].push_back(run_child(self, q, pin_mib));
  } catch (const std::exception& e) {
    std::printf("no usable CUDA device, nothing measured (%s)\n", e.what());
    return 0;
  }

  Report report("cuda_startup", {"queues", "to main s", "cuInit s", "context s",
                                 "pin " + std::to_string(pin_mib) + " MiB s", "exit s",
                                 "wall s", "wall min s", "wall vs 8 queues"});
  const auto wall_of = [&](int q) {
    std::vector<double> w;
    for (const Sample& s : samples[q]) w.push_back(s.wall);
    return w;
  };
  const double baseline = samples.count(8) ? median(wall_of(8)) : 0;
  for (const int q : queues) {
    const auto pick = [&](double Sample::*field) {
      std::vector<double> v;
      for (const Sample& s : samples[q]) v.push_back(s.*field);
      return median(v);
    };
    const std::vector<double> wall = wall_of(q);
    report.add_row({q, pick(&Sample::to_main), pick(&Sample::init), pick(&Sample::context),
                    pick(&Sample::pin), pick(&Sample::exit), median(wall),
                    *std::min_element(wall.begin(), wall.end()),
                    baseline > 0 ? median(wall) / baseline : 0.0});
  }
  report.set_context("rounds", rounds);
  report.set_context("statistic", "medians over the rounds (wall min: the fastest)");
  report.set_context("machine", cpu_description());
  report.finish();
  return 0;
}

}  // namespace
}  // namespace dcsgrid::bench

int main(int argc, char** argv) { return dcsgrid::bench::run(argc, argv); }
