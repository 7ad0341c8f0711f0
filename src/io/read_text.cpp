#include "read_text.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "decompress.hpp"

namespace dcsgrid::io::detail {
namespace {

// Space, tab, CR and the other control bytes a text may hold (load_text refuses the rest): one
// comparison, which the field splitting of every atom line pays for each byte.
bool is_blank(char c) { return (unsigned char)c <= ' '; }

// Bytes that never occur in a text file: C0 controls other than tab, line feed, vertical tab,
// form feed, carriage return and the old DOS end-of-file mark (0x1A).
unsigned char is_binary_byte(unsigned char c) {
  return (c < 0x20) & (c != '\t') & (c != '\n') & (c != '\v') & (c != '\f') & (c != '\r') &
         (c != 0x1A);
}

// The raw bytes of a file, or of standard input for "-".
std::string read_bytes(const std::filesystem::path& path, const std::string& name) {
  int fd = 0;
  if (path != "-") {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw InputError(name, 0, "file not found");
    if (std::filesystem::is_directory(path, ec))
      throw InputError(name, 0, "is a directory, not a file");
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(name, 0, std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat st {};
  std::string bytes;
  // A regular file is read in one piece; a pipe grows the buffer as it comes.
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    bytes.reserve(std::size_t(st.st_size) + 1);
    advise_huge_pages(bytes.data(), bytes.capacity());
    bytes.resize(std::size_t(st.st_size) + 1);
  }
  std::size_t size = 0;
  for (;;) {
    if (size == bytes.size()) bytes.resize(std::max<std::size_t>(2 * bytes.size(), 1 << 20));
    const ssize_t got = ::read(fd, bytes.data() + size, bytes.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      if (fd != 0) ::close(fd);
      throw InputError(name, 0, std::string("cannot read: ") + std::strerror(error));
    }
    if (got == 0) break;
    size += std::size_t(got);
  }
  if (fd != 0) ::close(fd);
  bytes.resize(size);
  return bytes;
}

void check_text(const TextFile& file) {
  // A branch-free pass first (vectorized, and in parallel for large texts); the search for the
  // culprit only when there is one.
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(file.data.data());
  const std::ptrdiff_t n = std::ptrdiff_t(file.data.size());
  unsigned char binary = 0;
#pragma omp parallel for simd num_threads(team_size()) reduction(| : binary) \
    if (n > (std::ptrdiff_t(1) << 22))
  for (std::ptrdiff_t i = 0; i < n; ++i) binary |= is_binary_byte(bytes[i]);
  if (!binary) return;
  const auto bad = std::find_if(file.data.begin(), file.data.end(),
                                [](char c) { return is_binary_byte((unsigned char)c); });
  const auto line = 1 + std::count(file.data.begin(), bad, '\n');
  char code[8];
  std::snprintf(code, sizeof code, "0x%02X", unsigned((unsigned char)*bad));
  throw InputError(file.name, std::size_t(line),
                   std::string("binary data (byte ") + code + "), not a text structure file");
}

}  // namespace

void advise_huge_pages(void* begin, std::size_t bytes) {
  constexpr std::uintptr_t kHuge = std::uintptr_t(1) << 21;
  const auto start = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t first = (start + kHuge - 1) & ~(kHuge - 1),
                       last = (start + bytes) & ~(kHuge - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

std::string input_name(const std::filesystem::path& path) {
  return path == "-" ? std::string(kStandardInputName) : path.string();
}

TextFile load_text(const std::filesystem::path& path) {
  TextFile file{input_name(path), read_bytes(path, input_name(path))};
  if (const Compression c = detect_compression(file.data); c != Compression::none)
    file.data = decompress(file.data, c, file.name);
  check_text(file);
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

namespace {

// from_chars reports a value beyond double's range without telling which side; a number whose
// exponent is negative, or with no exponent and a zero integer part, is a tiny one.
bool underflows(std::string_view field) {
  const std::size_t e = field.find_first_of("eE");
  if (e != std::string_view::npos) return e + 1 < field.size() && field[e + 1] == '-';
  const std::size_t point = std::min(field.find('.'), field.size());
  return field.substr(0, point).find_first_not_of("+-0") == std::string_view::npos;
}

// Fixed-point numbers of at most 15 digits ("-12.345"), the form structure files write: their
// digits as an integer and a power of ten are both exact doubles, so one division gives the
// correctly rounded value, the one from_chars gives, at a fraction of its cost. False for any
// other form (exponents, more digits), left to from_chars.
bool parse_fixed_point(std::string_view field, double& value) {
  static constexpr double kPowers[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                         1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const bool negative = field.front() == '-';
  std::size_t i = negative ? 1 : 0;
  std::uint64_t digits = 0;
  int count = 0, decimals = -1;
  for (; i < field.size(); ++i) {
    const char c = field[i];
    if (c == '.' && decimals < 0) {
      decimals = 0;
      continue;
    }
    const unsigned d = unsigned(c) - unsigned('0');
    if (d > 9 || ++count > 15) return false;
    digits = digits * 10 + d;
    if (decimals >= 0) ++decimals;
  }
  if (count == 0) return false;
  value = double(digits) / kPowers[decimals < 0 ? 0 : decimals];
  if (negative) value = -value;
  return true;
}

}  // namespace

NumberStatus parse_number(std::string_view field, double& value) {
  field = trim(field);
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);  // from_chars rejects '+'
  if (field.empty()) return NumberStatus::not_a_number;
  if (parse_fixed_point(field, value)) return NumberStatus::ok;  // within float32: < 1e15
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (end != field.data() + field.size()) return NumberStatus::not_a_number;
  if (ec == std::errc::result_out_of_range) {
    if (!underflows(field)) return NumberStatus::beyond_float32;
    value = 0;
    return NumberStatus::ok;
  }
  if (ec != std::errc()) return NumberStatus::not_a_number;
  if (!std::isfinite(value)) return NumberStatus::not_finite;
  return std::fabs(value) <= double(FLT_MAX) ? NumberStatus::ok : NumberStatus::beyond_float32;
}

std::string describe_bad_number(std::string_view what, std::string_view field,
                                NumberStatus status) {
  const std::string shown(trim(field));
  if (status == NumberStatus::not_finite)
    return std::string(what) + " is not finite: '" + shown + "'";
  if (status == NumberStatus::beyond_float32)
    return std::string(what) + " is beyond the float32 range (|value| > 3.4e38): '" + shown + "'";
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
