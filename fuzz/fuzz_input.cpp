#include "fuzz_input.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

namespace dcsgrid::fuzz {
namespace {

std::filesystem::path make_folder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "dcsgrid-fuzz-XXXXXX").string();
  if (!mkdtemp(pattern.data())) finding("cannot create a temporary folder", pattern.c_str());
  return pattern;
}

}  // namespace

const std::filesystem::path& scratch_folder() {
  static const std::filesystem::path path = make_folder();
  static const bool cleanup_registered = [] {
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_folder(), ignored);
    });
    return true;
  }();
  (void)cleanup_registered;
  return path;
}

std::filesystem::path input_file(const std::uint8_t* data, std::size_t size, const char* name) {
  const std::filesystem::path path = scratch_folder() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  out.close();
  if (!out) finding("cannot write the input file", path.c_str());
  return path;
}

void finding(const char* what, const char* detail) {
  std::fprintf(stderr, "dcsgrid fuzz finding: %s: %s\n", what, detail);
  std::abort();
}

void check_rejection(const std::filesystem::path& path, const char* message) {
  if (std::string_view(message).find(path.filename().string()) == std::string_view::npos)
    finding("error message does not name the input file", message);
}

}  // namespace dcsgrid::fuzz
