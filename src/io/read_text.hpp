// Text access shared by the readers: whole files (plain, gzip, bzip2 or xz; standard input for
// "-"), line iteration with line numbers, and allocation-free field splitting and number parsing
// for the hot loops.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace dcsgrid::io::detail {

struct TextFile {
  std::string name;  // as given, for messages
  std::string data;
};

// Asks for 2 MiB pages over the whole 2 MiB pages inside [begin, begin + bytes), before the
// memory is first touched: the page faults of a fresh buffer in 4 KiB pages cost as much as
// parsing a third of its text. A hint, ignored where unsupported.
void advise_huge_pages(void* begin, std::size_t bytes);

// How messages name an input: the path as given, or kStandardInputName for "-".
inline constexpr const char* kStandardInputName = "<stdin>";
std::string input_name(const std::filesystem::path& path);

// Reads a whole file ("-": standard input), decompressing gzip, bzip2 or xz data (recognized by
// content, whatever the name). Throws InputError when it is missing, unreadable, corrupt or
// truncated compressed data, or binary (control bytes; the message names the line).
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
