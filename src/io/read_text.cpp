#include "read_text.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::io::detail {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Bytes that never occur in a text file: C0 controls other than tab, line feed, vertical tab,
// form feed, carriage return and the old DOS end-of-file mark (0x1A).
bool is_binary_byte(unsigned char c) {
  return c < 0x20 && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' && c != 0x1A;
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose_r(f); }
};

}  // namespace

TextFile load_text(const std::filesystem::path& path) {
  TextFile file{path.string(), {}};
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(file.name, 0, "file not found");
  if (std::filesystem::is_directory(path, ec))
    throw InputError(file.name, 0, "is a directory, not a file");

  // zlib reads plain files unchanged, so one path serves both.
  errno = 0;
  std::unique_ptr<gzFile_s, GzCloser> gz(gzopen(file.name.c_str(), "rb"));
  if (!gz)
    throw InputError(
        file.name, 0,
        std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
  gzbuffer(gz.get(), 1 << 20);
  const auto size_hint = std::filesystem::file_size(path, ec);
  if (!ec) file.data.reserve(size_hint + 1);
  constexpr std::size_t kChunk = 1 << 20;
  for (;;) {
    const std::size_t old_size = file.data.size();
    file.data.resize(old_size + kChunk);
    const int got = gzread(gz.get(), file.data.data() + old_size, kChunk);
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(gz.get(), &code);
      if (code == Z_BUF_ERROR)
        throw InputError(file.name, 0, "truncated gzip data (the file ends inside the stream)");
      throw InputError(file.name, 0, std::string("cannot read (corrupt gzip data?): ") + message);
    }
    file.data.resize(old_size + std::size_t(got));
    if (got == 0) break;
  }
  // gzclose_r reports a gzip stream that ended early.
  if (gzclose_r(gz.release()) != Z_OK)
    throw InputError(file.name, 0, "truncated gzip data (the file ends inside the stream)");

  // A branch-free pass first (it vectorizes); the search for the culprit only when there is one.
  bool binary = false;
  for (char c : file.data) binary |= is_binary_byte((unsigned char)c);
  if (binary) {
    const auto bad = std::find_if(file.data.begin(), file.data.end(),
                                  [](char c) { return is_binary_byte((unsigned char)c); });
    const auto line = 1 + std::count(file.data.begin(), bad, '\n');
    char code[8];
    std::snprintf(code, sizeof code, "0x%02X", unsigned((unsigned char)*bad));
    throw InputError(file.name, std::size_t(line),
                     std::string("binary data (byte ") + code + "), not a text structure file");
  }
  return file;
}

bool Lines::next() {
  if (pos_ >= text_.size()) return false;
  const std::size_t end = text_.find('\n', pos_);
  const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
  line_ = text_.substr(pos_, stop - pos_);
  if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
  pos_ = stop + 1;
  ++number_;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool starts_with_record(std::string_view line, std::string_view record) {
  if (line.size() < record.size()) return false;
  for (std::size_t i = 0; i < record.size(); ++i)
    if ((line[i] & ~0x20) != record[i]) return false;  // ASCII upper case
  return line.size() == record.size() || !std::isalnum((unsigned char)line[record.size()]);
}

NumberStatus parse_number(std::string_view field, double& value) {
  field = trim(field);
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);  // from_chars rejects '+'
  if (field.empty()) return NumberStatus::not_a_number;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size()) return NumberStatus::not_a_number;
  return std::isfinite(value) ? NumberStatus::ok : NumberStatus::not_finite;
}

std::string describe_bad_number(std::string_view what, std::string_view field,
                                NumberStatus status) {
  const std::string shown(trim(field));
  if (status == NumberStatus::not_finite)
    return std::string(what) + " is not finite: '" + shown + "'";
  if (shown.empty()) return std::string(what) + " is missing (blank field)";
  return std::string(what) + " is not a number: '" + shown + "'";
}

std::size_t split_fields(std::string_view line, std::string_view* fields, std::size_t max) {
  std::size_t count = 0, i = 0;
  const std::size_t n = line.size();
  while (i < n) {
    while (i < n && is_blank(line[i])) ++i;
    if (i == n) break;
    const std::size_t begin = i;
    while (i < n && !is_blank(line[i])) ++i;
    if (count < max) fields[count] = line.substr(begin, i - begin);
    ++count;
  }
  return count;
}

}  // namespace dcsgrid::io::detail
