// Error types. Every failure a user can cause is an Error whose message names what went wrong
// and, for input files, the file and line.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace dcsgrid {

// A failure the user can fix: bad input, bad options, a full disk. The CLI prints it and exits 1.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A problem at a place in an input file. line is 1-based; 0 means the file as a whole.
struct InputError : Error {
  InputError(const std::string& file, std::size_t line, const std::string& problem)
      : Error(line ? file + ":" + std::to_string(line) + ": " + problem : file + ": " + problem),
        file(file), line(line), problem(problem) {}
  std::string file;
  std::size_t line;
  std::string problem;
};

}  // namespace dcsgrid
