// File helpers for the reader and charge tests: whole files in and out (gzip too), lines, and
// the independent column parsing the tests check the readers against.
#pragma once
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::test {

// The text of a file, gunzipped when it is gzip data.
inline std::string read_text(const std::filesystem::path& path) {
  gzFile f = gzopen(path.string().c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path.string());
  std::string text;
  char buf[65536];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, std::size_t(n));
  gzclose(f);
  return text;
}

// The bytes of a file as they are (no decompression).
inline std::string read_binary(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline void write_gz(const std::filesystem::path& path, const std::string& text) {
  gzFile f = gzopen(path.string().c_str(), "wb9");
  if (!f || gzwrite(f, text.data(), unsigned(text.size())) != int(text.size()))
    throw std::runtime_error("cannot write " + path.string());
  gzclose(f);
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline bool is_atom_line(const std::string& line) {
  return line.rfind("ATOM", 0) == 0 || line.rfind("HETATM", 0) == 0;
}

inline std::vector<std::string> atom_lines(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& l : lines_of(text))
    if (is_atom_line(l)) out.push_back(l);
  return out;
}

inline std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Fixed PDB columns, 1-based inclusive, as a number.
inline double column_number(const std::string& line, std::size_t first, std::size_t last) {
  return std::stod(line.substr(first - 1, last - first + 1));
}

inline void expect_same_atoms(const AtomSet& a, const AtomSet& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);
  EXPECT_EQ(a.z, b.z);
  EXPECT_EQ(a.q, b.q);
}

// Reading `path` fails with an InputError naming it, `line` (0: the file as a whole) and a
// problem that contains `problem`.
inline void expect_read_error(const std::filesystem::path& path, std::size_t line,
                              const std::string& problem, const io::ReadOptions& options = {}) {
  try {
    io::read_structure(path, options);
    ADD_FAILURE() << path << " was read without an error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file, path.string()) << e.what();
    EXPECT_EQ(e.line, line) << e.what();
    EXPECT_NE(e.problem.find(problem), std::string::npos)
        << "expected '" << problem << "' in: " << e.what();
  }
}

}  // namespace dcsgrid::test
