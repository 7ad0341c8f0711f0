// Shared by tests/test_io_trajectory*.cpp: MDAnalysis (through /usr/bin/python3 and
// tests/test_io_trajectory_mda.py) as the independent writer and reader.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace dcsgrid::test {

inline bool have_mdanalysis() {
  static const bool ok = run_command("/usr/bin/python3 -c 'import MDAnalysis' 2>&1").status == 0;
  return ok;
}

#define DCSGRID_REQUIRE_MDANALYSIS()                                                       \
  do {                                                                                     \
    if (!::dcsgrid::test::have_mdanalysis())                                               \
      GTEST_SKIP() << "MDAnalysis is not importable by /usr/bin/python3 (Debian "          \
                      "python3-mdanalysis): the independent reader is missing, test skipped"; \
  } while (0)

// Runs tests/test_io_trajectory_mda.py with `args`; fails the test on a non-zero exit.
inline void run_mda(const std::string& args) {
  const std::string script = (source_dir() / "tests" / "test_io_trajectory_mda.py").string();
  const auto result = run_command("/usr/bin/python3 -W ignore " + script + " " + args + " 2>&1");
  ASSERT_EQ(result.status, 0) << "test_io_trajectory_mda.py " << args << ":\n" << result.output;
}

inline std::vector<char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// Resident memory of this process, kB (Linux).
inline long resident_kb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// A CHARMM DCD written byte by byte, frame by frame (no whole trajectory in memory): atom i of
// frame f at x = f % 97 + 0.001·i + 0, y = ... + 1, z = ... + 2 (Å), no unit cell.
inline void write_synthetic_dcd(const std::filesystem::path& path, std::int32_t atoms, std::int32_t frames) {
  std::ofstream out(path, std::ios::binary);
  const auto put = [&](const void* p, std::size_t n) { out.write(static_cast<const char*>(p), std::streamsize(n)); };
  const auto record = [&](const void* p, std::int32_t n) { put(&n, 4), put(p, std::size_t(n)), put(&n, 4); };
  std::int32_t control[21] = {};
  std::memcpy(control, "CORD", 4);
  control[1] = frames, control[3] = 1, control[20] = 24;  // NSET, NSAVC, CHARMM version
  record(control, 84);
  char title[84] = {};
  title[0] = 1;
  record(title, 84);
  record(&atoms, 4);
  std::vector<float> axis(static_cast<std::size_t>(atoms));
  for (std::int32_t f = 0; f < frames; ++f)
    for (int k = 0; k < 3; ++k) {
      for (std::int32_t i = 0; i < atoms; ++i) axis[std::size_t(i)] = float(f % 97 + 0.001 * i + k);
      record(axis.data(), 4 * atoms);
    }
}

template <class T>
std::vector<T> read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

}  // namespace dcsgrid::test
