// What every fuzz target shares: the input bytes as a file named as the reader expects (the
// program's readers take paths), and the rule for what may come out of a reader: it returns, or
// it throws dcsgrid::Error (InputError among them) whose message names the file. Anything else
// escaping (another exception, a crash, a sanitizer report) is a finding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace dcsgrid::fuzz {

// Writes data to <per-process temporary folder>/<name> (the same file every call) and returns
// its path. The folder is removed at exit.
std::filesystem::path input_file(const std::uint8_t* data, std::size_t size, const char* name);
// That per-process folder, for other files a target makes (removed at exit too).
const std::filesystem::path& scratch_folder();

// Reports a finding (message on stderr, then abort, which libFuzzer records as a crash).
[[noreturn]] void finding(const char* what, const char* detail);

// Runs read(); a dcsgrid::Error that does not name `path` is a finding, as is any other
// exception.
template <class Read>
void expect_clean(const std::filesystem::path& path, Read&& read);

// Checks a dcsgrid::Error's message (names the file).
void check_rejection(const std::filesystem::path& path, const char* message);

}  // namespace dcsgrid::fuzz

#include "dcsgrid/core/error.hpp"

template <class Read>
void dcsgrid::fuzz::expect_clean(const std::filesystem::path& path, Read&& read) {
  try {
    read();
  } catch (const dcsgrid::Error& e) {
    check_rejection(path, e.what());
  } catch (const std::exception& e) {
    finding("an exception other than dcsgrid::Error escaped", e.what());
  }
}
