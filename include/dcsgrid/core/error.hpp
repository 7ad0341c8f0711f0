// Error types. Every failure a user can cause is an Error whose message names what went wrong
// and, for input files, the file and line.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dcsgrid {

// User-controlled text (a file name, a field of a file) made safe to echo in a message: every
// byte that is not printable ASCII or part of a valid UTF-8 character outside the C1 controls is
// written as \xNN, so no terminal escape sequence or line break reaches the user's terminal, and
// text beyond max_bytes is cut, saying how long it was. Printable text comes back unchanged, so
// applying it twice (to a message that already holds an escaped name) changes nothing more.
inline constexpr std::size_t kEchoedBytes = 256;      // a name or a field
inline constexpr std::size_t kMaxMessageBytes = 16384;  // a whole message, as printed
std::string printable(std::string_view text, std::size_t max_bytes = kEchoedBytes);

// A failure the user can fix: bad input, bad options, a full disk. The CLI prints it and exits 1.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A problem at a place in an input file. line is 1-based; 0 means the file as a whole. The
// message shows the file's name through printable(); `file` keeps it as given.
struct InputError : Error {
  InputError(const std::string& file, std::size_t line, const std::string& problem)
      : Error(line ? printable(file) + ":" + std::to_string(line) + ": " + problem
                   : printable(file) + ": " + problem),
        file(file), line(line), problem(problem) {}
  std::string file;
  std::size_t line;
  std::string problem;
};

}  // namespace dcsgrid
