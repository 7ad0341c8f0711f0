#include "io/text/text.hpp"

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
#include <cstdlib>
#include <cstring>
#include <memory>

#include "dcsgrid/core/environment.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/threads.hpp"
#include "io/text/decompress.hpp"

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

// Why a file cannot be read as a text input (an empty string when it can): a directory, or a
// device other than a terminal, which may never end (/dev/zero) or be a whole disk.
std::string unreadable_kind(const struct stat& st, int fd) {
  if (S_ISDIR(st.st_mode)) return "is a directory, not a file";
  if (S_ISCHR(st.st_mode) && !::isatty(fd))
    return "is a character device, not a file or a pipe (a device such as /dev/zero never ends)";
  if (S_ISBLK(st.st_mode)) return "is a block device, not a file or a pipe";
  return {};
}

// The bytes of a file, or of standard input for "-", read piece by piece.
class InputBytes final : public ByteSource {
 public:
  InputBytes(const std::filesystem::path& path, const std::string& name) : name_(name) {
    if (path != "-") {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) throw InputError(name, 0, "file not found");
        throw InputError(name, 0, std::string("cannot open: ") + std::strerror(errno));
      }
      if (const std::string why = unreadable_kind(st, -1); !why.empty()) throw InputError(name, 0, why);
      // A named pipe's open waits for its writer; a signal caught meanwhile interrupts the wait.
      while ((fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR) {
      }
      if (fd_ < 0) throw InputError(name, 0, std::string("cannot open: ") + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail("cannot read");
    if (const std::string why = unreadable_kind(st, fd_); !why.empty()) {
      close();
      throw InputError(name, 0, why);
    }
    if (S_ISREG(st.st_mode)) {
      // Standard input may be a file opened part of the way in: its text is the rest.
      const off_t at = ::lseek(fd_, 0, SEEK_CUR);
      if (at < 0) fail("cannot read");
      start_ = std::uint64_t(at);
      size_ = std::uint64_t(st.st_size) - std::min(start_, std::uint64_t(st.st_size));
    }
  }
  ~InputBytes() override { close(); }
  InputBytes(const InputBytes&) = delete;
  InputBytes& operator=(const InputBytes&) = delete;

  // The size of a regular file (0 for a pipe, whose size is not known ahead).
  std::uint64_t size() const { return size_; }
  std::size_t read(char* to, std::size_t n) override {
    for (;;) {
      const ssize_t got = ::read(fd_, to, n);
      if (got >= 0) return std::size_t(got);
      if (errno != EINTR) fail("cannot read");
    }
  }
  // Up to n bytes of a regular file from `offset` (from where its text starts) on, fewer only
  // where the file ends, read by every core in blocks: each thread first touches the memory it
  // reads into. Reading goes on after them.
  std::size_t read_in_parallel(char* to, std::size_t n, std::uint64_t offset) {
    constexpr std::size_t kBlock = std::size_t(8) << 20;
    const std::ptrdiff_t blocks = std::ptrdiff_t((n + kBlock - 1) / kBlock);
    std::size_t end = n;  // the first byte not read: where a file that shrank meanwhile ends
    int error = 0;
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 1) reduction(min : end) reduction(max : error)
    for (std::ptrdiff_t b = 0; b < blocks; ++b) {
      const std::size_t begin = std::size_t(b) * kBlock, want = std::min(kBlock, n - begin);
      std::size_t done = 0;
      while (done < want) {
        const ssize_t got = ::pread(fd_, to + begin + done, want - done, off_t(start_ + offset + begin + done));
        if (got > 0) {
          done += std::size_t(got);
        } else if (got == 0 || errno != EINTR) {
          if (got < 0) error = errno;
          break;
        }
      }
      if (done < want) end = std::min(end, begin + done);
    }
    if (error != 0) {
      errno = error;
      fail("cannot read");
    }
    if (::lseek(fd_, off_t(start_ + offset + end), SEEK_SET) < 0) fail("cannot read");
    return end;
  }
  // Up to n bytes, fewer only at the end.
  std::size_t read_fully(char* to, std::size_t n) {
    std::size_t done = 0;
    while (done < n)
      if (const std::size_t got = read(to + done, n - done); got > 0)
        done += got;
      else
        break;
    return done;
  }

 private:
  [[noreturn]] void fail(const char* what) {
    const int error = errno;
    close();
    throw InputError(name_, 0, std::string(what) + ": " + std::strerror(error));
  }
  void close() {
    if (fd_ > 0) ::close(fd_);
    fd_ = -1;
  }
  std::string name_;
  int fd_ = 0;  // standard input unless a path is opened
  std::uint64_t start_ = 0;  // a regular file's offset where reading began
  std::uint64_t size_ = 0;
};

// The text of an input as it arrives, judged piece by piece before more is read: binary bytes
// are refused at once (naming their byte offset and line), and the text may not outgrow the
// input limits (input_limits) nor, when decompressed, expand beyond their ratio.
class TextBuilder final : public ByteSink {
 public:
  // expected_size: a regular file's size (refused when beyond the limit), or a guess at the
  // decompressed size; 0 when unknown.
  TextBuilder(const std::string& name, bool decompressed, std::uint64_t expected_size)
      : name_(name), decompressed_(decompressed), limits_(input_limits()) {
    if (!decompressed && expected_size > limits_.max_text_bytes) refuse_size(expected_size);
    grow(std::size_t(std::min(expected_size, limits_.max_text_bytes)) + 1);
  }
  char* room(std::size_t n) override {
    if (used_ + n > text_.capacity()) grow(std::max(2 * text_.capacity(), used_ + n));
    text_.resize(used_ + n);
    return text_.data() + used_;
  }
  void wrote(std::size_t n, std::uint64_t compressed) override {
    check_bytes(used_, n);
    used_ += n;
    if (used_ > limits_.max_text_bytes) refuse_size(used_);
    if (decompressed_ && used_ > kExpansionFloor && used_ / limits_.max_expansion > compressed)
      throw InputError(name_, 0,
                       "decompresses to more than " + std::to_string(limits_.max_expansion) +
                           " times its size (" + std::to_string(used_) + " bytes from the first " +
                           std::to_string(compressed) +
                           "), as a decompression bomb does; DCSGRID_MAX_EXPANSION raises this bound");
  }
  TextBuffer take() {
    text_.resize(used_);
    return std::move(text_);
  }

 private:
  // Below this much text, no ratio is judged: small files of repeated lines compress well.
  static constexpr std::uint64_t kExpansionFloor = std::uint64_t(64) << 20;

  void grow(std::size_t capacity) { text_.reserve(std::min<std::uint64_t>(capacity, limits_.max_text_bytes + 1)); }
  [[noreturn]] void refuse_size(std::uint64_t bytes) const {
    throw InputError(name_, 0,
                     "holds " +
                         (bytes > used_ ? std::to_string(bytes) + " bytes of text, more than"
                                        : std::string("more than")) +
                         " the input limit of " + std::to_string(limits_.max_text_bytes) +
                         " bytes (DCSGRID_MAX_INPUT_BYTES raises it; by default half the memory)");
  }
  // A branch-free pass first (vectorized, and in parallel for large pieces); the search for the
  // culprit only when there is one.
  void check_bytes(std::size_t begin, std::size_t n) const {
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(text_.data()) + begin;
    const std::ptrdiff_t count = std::ptrdiff_t(n);
    unsigned char binary = 0;
#pragma omp parallel for simd num_threads(team_size()) reduction(| : binary) \
    if (count > (std::ptrdiff_t(1) << 22))
    for (std::ptrdiff_t i = 0; i < count; ++i) binary |= is_binary_byte(bytes[i]);
    if (!binary) return;
    const char* text = text_.data();
    const char* bad = std::find_if(text + begin, text + begin + n,
                                   [](char c) { return is_binary_byte((unsigned char)c); });
    const auto line = 1 + std::count(text, bad, '\n');
    char code[8];
    std::snprintf(code, sizeof code, "0x%02X", unsigned((unsigned char)*bad));
    throw InputError(name_, std::size_t(line),
                     std::string("binary data (byte ") + code + " at byte offset " +
                         std::to_string(bad - text) +
                         (decompressed_ ? " of the decompressed text), corrupt compressed data or "
                                          "not a text file of the expected format"
                                        : "), not a text file of the expected format"));
  }

  std::string name_;
  bool decompressed_;
  InputLimits limits_;
  TextBuffer text_;
  std::size_t used_ = 0;
};

// Refuses a file whose name announces a compression its content does not have (a plain text
// named .gz would otherwise be read silently, hiding a mix-up of files).
void check_compression_label(const std::filesystem::path& path, const std::string& name,
                             Compression found) {
  if (path == "-") return;
  const Compression named = compression_from_name(path.filename().string());
  if (named == Compression::none || named == found) return;
  const std::string kind = compression_name(named);
  throw InputError(name, 0,
                   "named as " + kind + " data but is not: it holds " +
                       (found == Compression::none ? std::string("uncompressed data")
                                                   : compression_name(found) + std::string(" data")) +
                       "; rename it to match its content, or compress it with " + kind);
}

// The plain text after `head`, read straight into the text: a small first piece, so that a
// binary file is refused before much of it is read; then the rest of a regular file's size at
// once, by every core; then, in pieces, what a file that grew meanwhile or a pipe still holds.
TextBuffer read_plain(InputBytes& input, const std::string& name, std::string_view head) {
  const std::uint64_t size = input.size();
  TextBuilder text(name, false, size);
  std::copy(head.begin(), head.end(), text.room(head.size()));
  text.wrote(head.size(), 0);
  std::uint64_t done = head.size();
  if (size > done) {
    const std::size_t first = std::size_t(std::min<std::uint64_t>(std::uint64_t(1) << 20, size - done));
    const std::size_t got = input.read_fully(text.room(first), first);
    text.wrote(got, 0);
    done += got;
    if (got == first && size > done) {
      const std::size_t rest = std::size_t(size - done);
      const std::size_t read = input.read_in_parallel(text.room(rest), rest, done);
      text.wrote(read, 0);
      done += read;
    }
  }
  // A regular file's pieces stop one byte past its size: the text never outgrows its buffer
  // unless the file grew. A pipe's pieces: 64 KiB doubled to 1 MiB.
  std::size_t piece = size ? std::size_t(64) << 20 : std::size_t(64) << 10;
  for (;;) {
    const std::size_t want =
        size && done <= size ? std::size_t(std::min<std::uint64_t>(piece, size + 1 - done)) : piece;
    const std::size_t got = input.read_fully(text.room(want), want);
    text.wrote(got, 0);
    done += got;
    if (got < want) break;
    if (!size) piece = std::min(2 * piece, std::size_t(1) << 20);
  }
  return text.take();
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

InputLimits input_limits() {
  const std::uint64_t memory = std::uint64_t(::sysconf(_SC_PHYS_PAGES)) * std::uint64_t(::sysconf(_SC_PAGE_SIZE));
  InputLimits limits;
  limits.max_text_bytes =
      size_from_environment("DCSGRID_MAX_INPUT_BYTES", std::max(memory / 2, std::uint64_t(1) << 30));
  limits.max_expansion = size_from_environment("DCSGRID_MAX_EXPANSION", limits.max_expansion);
  return limits;
}

TextFile load_text(const std::filesystem::path& path) {
  TextFile file{input_name(path), {}};
  InputBytes input(path, file.name);
  char head[6];  // enough for every compression's magic bytes
  const std::string_view first(head, input.read_fully(head, sizeof head));
  const Compression c = detect_compression(first);
  check_compression_label(path, file.name, c);
  if (c == Compression::none) {
    file.data = read_plain(input, file.name, first);
    return file;
  }
  TextBuilder text(file.name, true, 4 * input.size());
  decompress(c, file.name, first, input, text);
  file.data = text.take();
  return file;
}

void NumberedText::fail(const std::string& problem) const {
  throw InputError(text_.name, lines_.number(), problem);
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

std::vector<std::string_view> numbered_lines(std::string_view text, std::size_t last) {
  std::vector<std::string_view> out;
  out.reserve(last + 1);
  out.emplace_back();
  Lines lines(text);
  while (out.size() <= last && lines.next()) out.push_back(lines.line());
  out.resize(last + 1);
  return out;
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
  const std::string shown = printable(trim(field));
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
