// Internal to the map writers: a binary/text output file with every stdio call checked, whose
// errors name the file the user asked for (not the temporary it is written under).
#pragma once
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace dcsgrid::io {

class OutputFile {
 public:
  // Opens disk_path for writing; shown is the name used in error messages.
  OutputFile(const std::filesystem::path& disk_path, std::filesystem::path shown);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();  // closes without checking when close() was not reached (an error is under way)

  void write(const void* bytes, std::size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Flushes and closes; throws Error when the data did not all reach the file (a full disk).
  void close();

 private:
  [[noreturn]] void fail(const std::string& what) const;
  std::FILE* file_ = nullptr;
  std::filesystem::path shown_;
};

// Shortest text that reads back as the same number ("0.5", "-12.25", "1e-07").
std::string shortest(double value);
std::string shortest(float value);

}  // namespace dcsgrid::io
