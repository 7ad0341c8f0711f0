#include "map_output_file.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::io {

OutputFile::OutputFile(const std::filesystem::path& disk_path, std::filesystem::path shown)
    : shown_(std::move(shown)) {
  file_ = std::fopen(disk_path.c_str(), "wb");
  if (!file_) fail("cannot create the file");
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
}

void OutputFile::write(const void* bytes, std::size_t size) {
  if (size && std::fwrite(bytes, 1, size, file_) != size) fail("cannot write");
}

void OutputFile::close() {
  const bool flushed = std::fflush(file_) == 0 && !std::ferror(file_);
  const int saved_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed) errno = saved_errno;
  if (!flushed || !closed) fail("cannot finish writing");
}

void OutputFile::fail(const std::string& what) const {
  throw Error(shown_.string() + ": " + what + ": " + std::strerror(errno));
}

namespace {
template <typename T>
std::string shortest_text(T value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}
}  // namespace

std::string shortest(double value) { return shortest_text(value); }
std::string shortest(float value) { return shortest_text(value); }

}  // namespace dcsgrid::io
