// Shared by tests/test_io_trajectory*.cpp: MDAnalysis (through /usr/bin/python3 and
// tests/test_io_trajectory_mda.py) as the independent writer and reader.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
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

template <class T>
std::vector<T> read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

}  // namespace dcsgrid::test
