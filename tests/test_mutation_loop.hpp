// Byte-level damage of a file in a loop, each read in a forked child with a time limit, so that a
// crash or a hang is reported as a test failure (naming the mutation) instead of ending the suite.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace dcsgrid::test {

// Runs body in a forked child (its return value is the exit status) with a time limit. Returns ""
// when the child exited 0, else what happened (a signal, a hang, a non-zero status).
inline std::string run_in_child(const std::function<int()>& body, unsigned seconds) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return std::string("fork failed: ") + std::strerror(errno);
  if (pid == 0) {
    alarm(seconds);
    int code = 1;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: unexpected exception: %s\n", e.what());
    }
    std::exit(code);  // runs the exit hooks (HDF5's among them): part of what is tested
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    return WTERMSIG(status) == SIGALRM ? "hung (killed after " + std::to_string(seconds) + " s)"
                                        : "killed by signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0) return "exit status " + std::to_string(WEXITSTATUS(status));
  return "";
}

inline std::vector<char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One damaged copy: a flipped bit, a zeroed range or a truncation, with the byte range it touched.
struct Mutation {
  std::string label;
  std::vector<char> bytes;
  std::size_t begin = 0, end = 0;  // damaged bytes [begin, end) (truncation: to the old end)
};

// count mutations of original, reproducible from seed: 70% single bit flips, 15% zeroed ranges
// of 1..64 bytes, 15% truncations.
inline std::vector<Mutation> mutations(const std::vector<char>& original, std::size_t count,
                                       std::uint64_t seed) {
  std::mt19937_64 random(seed);
  auto below = [&](std::size_t n) { return std::size_t(random() % n); };
  std::vector<Mutation> out;
  for (std::size_t i = 0; i < count; ++i) {
    Mutation m{"", original, 0, 0};
    const std::size_t at = below(original.size()), kind = below(100);
    if (kind < 70) {
      const int bit = int(below(8));
      m.bytes[at] = char(m.bytes[at] ^ (1 << bit));
      m = {"bit " + std::to_string(bit) + " of byte " + std::to_string(at) + " flipped", m.bytes, at, at + 1};
    } else if (kind < 85) {
      const std::size_t end = std::min(original.size(), at + 1 + below(64));
      std::fill(m.bytes.begin() + std::ptrdiff_t(at), m.bytes.begin() + std::ptrdiff_t(end), '\0');
      m = {"bytes " + std::to_string(at) + ".." + std::to_string(end - 1) + " zeroed", m.bytes, at, end};
    } else {
      m.bytes.resize(at);
      m = {"truncated to " + std::to_string(at) + " bytes", m.bytes, at, original.size()};
    }
    out.push_back(std::move(m));
  }
  return out;
}

// How many mutations a loop runs: `usual`, or DCSGRID_MUTATIONS when set (long runs by hand).
inline std::size_t mutation_count(std::size_t usual) {
  const char* text = std::getenv("DCSGRID_MUTATIONS");
  return text && std::atol(text) > 0 ? std::size_t(std::atol(text)) : usual;
}

// Writes each mutation to `path` and runs check(mutation) in a child (limit: seconds each); check
// returns 0 for a correct read or a clean error. Returns one line per mutation that failed.
inline std::vector<std::string> run_mutations(const std::vector<Mutation>& list,
                                              const std::filesystem::path& path,
                                              const std::function<int(const Mutation&)>& check,
                                              unsigned seconds = 20) {
  std::vector<std::string> failures;
  for (const Mutation& m : list) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(m.bytes.data(), std::streamsize(m.bytes.size()));
    }
    const std::string failure = run_in_child([&] { return check(m); }, seconds);
    if (!failure.empty()) failures.push_back(m.label + ": " + failure);
  }
  return failures;
}

}  // namespace dcsgrid::test
