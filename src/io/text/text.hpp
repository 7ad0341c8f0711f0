// Text access shared by the readers: whole files (plain, gzip, bzip2 or xz; standard input for
// "-"), line iteration with line numbers, and allocation-free field splitting and number parsing
// for the hot loops.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "dcsgrid/io/text/text_buffer.hpp"

namespace dcsgrid::io::detail {

struct TextFile {
  std::string name;  // as given, for messages
  TextBuffer data;
};

// Asks for 2 MiB pages over the whole 2 MiB pages inside [begin, begin + bytes), before the
// memory is first touched: the page faults of a fresh buffer in 4 KiB pages cost as much as
// parsing a third of its text. A hint, ignored where unsupported.
void advise_huge_pages(void* begin, std::size_t bytes);

// How messages name an input: the path as given, or kStandardInputName for "-".
inline constexpr const char* kStandardInputName = "<stdin>";
std::string input_name(const std::filesystem::path& path);

// Bounds on an input's text, judged as it is read (load_text), so that no input can take more
// memory than the limit before it is refused.
struct InputLimits {
  // The text (after decompression) an input may hold: $DCSGRID_MAX_INPUT_BYTES (a number of
  // bytes, optionally with K, M, G or T), by default half the physical memory (at least 1 GiB).
  std::uint64_t max_text_bytes = 0;
  // Compressed data may decompress to at most this many times the compressed bytes consumed,
  // once past 64 MiB of text: $DCSGRID_MAX_EXPANSION, by default 100 (structure files compress
  // 4 to 12 times; a decompression bomb a thousand).
  std::uint64_t max_expansion = 100;
};
// From the environment, read at each call; throws Error for a malformed value.
InputLimits input_limits();

// Reads a whole file ("-": standard input, a pipe or a terminal), decompressing gzip, bzip2 or xz
// data (recognized by content), judging the text as it streams. Throws InputError when it is
// missing, a directory or a device (/dev/zero never ends), unreadable, named .gz/.bz2/.xz but not
// such data, corrupt or truncated compressed data, binary (control bytes; the message names the
// byte offset and line), or beyond input_limits().
TextFile load_text(const std::filesystem::path& path);

// Lines of a text without their line ends ("\n" or "\r\n"), numbered from 1.
class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {}
  bool next();
  std::string_view line() const { return line_; }
  std::size_t number() const { return number_; }

 private:
  std::string_view text_, line_;
  std::size_t pos_ = 0, number_ = 0;
};

// A text file loaded whole (load_text) and read line by line, for readers whose every error
// names the file and the current line.
class NumberedText {
 public:
  explicit NumberedText(const std::filesystem::path& path) : text_(load_text(path)), lines_(text_.data) {}
  bool next() { return lines_.next(); }
  std::string_view line() const { return lines_.line(); }
  std::size_t bytes() const { return text_.data.size(); }
  // Throws InputError naming the file and the current line.
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  TextFile text_;
  Lines lines_;
};

// The lines of `text` numbered 1..last (index 0 and lines past the text's end are empty), for
// finding atoms' records again by their lines (Structure::lines).
std::vector<std::string_view> numbered_lines(std::string_view text, std::size_t last);

std::string_view trim(std::string_view s);
bool starts_with_record(std::string_view line, std::string_view record);  // "ATOM", "MODEL", ...

enum class NumberStatus { ok, not_a_number, not_finite, beyond_float32 };
// The whole field (blanks around it allowed) as a finite number that float32, the type the
// engines compute in, holds (|value| <= FLT_MAX; smaller than float32's range reads as 0 there).
NumberStatus parse_number(std::string_view field, double& value);
// "x is not a number: 'abc'" style text for an error message.
std::string describe_bad_number(std::string_view what, std::string_view field, NumberStatus status);

// Splits at blanks into fields[0..max); returns how many fields the line has (may exceed max).
std::size_t split_fields(std::string_view line, std::string_view* fields, std::size_t max);

}  // namespace dcsgrid::io::detail
