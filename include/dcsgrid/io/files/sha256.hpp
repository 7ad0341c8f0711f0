// SHA-256 (FIPS 180-4) of files and byte strings: the input_sha256 provenance attribute and the
// batch inputs' identity. Uses the CPU's SHA extensions where it has them (about ten times the
// portable code's speed, which set the pace of short runs on large inputs: docs/performance.md).
#pragma once
#include <atomic>
#include <filesystem>
#include <span>
#include <string>

namespace dcsgrid::io {

enum class Sha256Engine {
  best,     // the x86 SHA extensions when the CPU has them, else portable
  portable  // plain C++
};

// True when Sha256Engine::best uses the CPU's SHA extensions here.
bool sha256_uses_cpu_extensions();

// Hex SHA-256 of the bytes.
std::string sha256_hex(std::span<const unsigned char> bytes, Sha256Engine engine = Sha256Engine::best);

// Hex SHA-256 of a regular file's bytes. Throws InputError naming the file when it cannot be read
// or is not a regular file (a pipe or a device), and Error when *stop becomes true before the end
// (checked every MiB).
std::string sha256_file(const std::filesystem::path& path, const std::atomic<bool>* stop = nullptr);

}  // namespace dcsgrid::io
