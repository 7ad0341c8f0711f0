// Byte-level damage of a file in a loop, each read in a forked child with a time limit, so that a
// crash or a hang is reported as a test failure (naming the mutation) instead of ending the suite.
#pragma once
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <algorithm>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace dcsgrid::test {

// Runs body in a forked child (its return value is the exit status) with a time limit. Returns ""
// when the child exited 0, else what happened (a signal, a hang, a non-zero status).
inline std::string run_in_child(const std::function<int()>& body, unsigned seconds) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return std::string("fork failed: ") + std::strerror(errno);
  if (pid == 0) {
    alarm(seconds);
    int code = 1;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: unexpected exception: %s\n", e.what());
    }
    std::exit(code);  // runs the exit hooks (HDF5's among them): part of what is tested
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    return WTERMSIG(status) == SIGALRM ? "hung (killed after " + std::to_string(seconds) + " s)"
                                        : "killed by signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0) return "exit status " + std::to_string(WEXITSTATUS(status));
  return "";
}

inline std::vector<char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One damaged copy: a flipped bit, a zeroed range or a truncation, with the byte range it touched.
struct Mutation {
  std::string label;
  std::vector<char> bytes;
  std::size_t begin = 0, end = 0;  // damaged bytes [begin, end) (truncation: to the old end)
};

// count mutations of original, reproducible from seed: 70% single bit flips, 15% zeroed ranges
// of 1..64 bytes, 15% truncations.
inline std::vector<Mutation> mutations(const std::vector<char>& original, std::size_t count,
                                       std::uint64_t seed) {
  std::mt19937_64 random(seed);
  auto below = [&](std::size_t n) { return std::size_t(random() % n); };
  std::vector<Mutation> out;
  for (std::size_t i = 0; i < count; ++i) {
    Mutation m{"", original, 0, 0};
    const std::size_t at = below(original.size()), kind = below(100);
    if (kind < 70) {
      const int bit = int(below(8));
      m.bytes[at] = char(m.bytes[at] ^ (1 << bit));
      m = {"bit " + std::to_string(bit) + " of byte " + std::to_string(at) + " flipped", m.bytes, at, at + 1};
    } else if (kind < 85) {
      const std::size_t end = std::min(original.size(), at + 1 + below(64));
      std::fill(m.bytes.begin() + std::ptrdiff_t(at), m.bytes.begin() + std::ptrdiff_t(end), '\0');
      m = {"bytes " + std::to_string(at) + ".." + std::to_string(end - 1) + " zeroed", m.bytes, at, end};
    } else {
      m.bytes.resize(at);
      m = {"truncated to " + std::to_string(at) + " bytes", m.bytes, at, original.size()};
    }
    out.push_back(std::move(m));
  }
  return out;
}

// Flipped bits of the 8-byte values at `positions` of original (the chunk addresses that
// address_positions finds, and values equal to them): in byte k of each, bits k and 7 - k, so that
// the address moves by small and by large steps (16 mutations a position; all 64 bits cost too
// much where small files hold many values equal to an address).
inline std::vector<Mutation> address_flips(const std::vector<char>& original,
                                           const std::vector<std::size_t>& positions) {
  std::vector<Mutation> out;
  for (std::size_t at : positions)
    for (std::size_t k = 0; k < 8 && at + k < original.size(); ++k)
      for (int bit : {int(k), 7 - int(k)}) {
        const std::size_t byte = at + k;
        Mutation m{"bit " + std::to_string(bit) + " of byte " + std::to_string(byte) +
                       " (a chunk address) flipped",
                   original, byte, byte + 1};
        m.bytes[byte] = char(m.bytes[byte] ^ (1 << bit));
        out.push_back(std::move(m));
      }
  return out;
}

// How many mutations a loop runs: `usual`, or DCSGRID_MUTATIONS when set (long runs by hand).
inline std::size_t mutation_count(std::size_t usual) {
  const char* text = std::getenv("DCSGRID_MUTATIONS");
  return text && std::atol(text) > 0 ? std::size_t(std::atol(text)) : usual;
}

// Writes each mutation to `path` and runs check(mutation) in a child (limit: seconds each); check
// returns 0 for a correct read or a clean error. Returns one line per mutation that failed.
inline std::vector<std::string> run_mutations(const std::vector<Mutation>& list,
                                              const std::filesystem::path& path,
                                              const std::function<int(const Mutation&)>& check,
                                              unsigned seconds = 20) {
  std::vector<std::string> failures;
  for (const Mutation& m : list) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(m.bytes.data(), std::streamsize(m.bytes.size()));
    }
    const std::string failure = run_in_child([&] { return check(m); }, seconds);
    if (!failure.empty()) failures.push_back(m.label + ": " + failure);
  }
  return failures;
}

// HDF5 files: the byte ranges [offset, offset + size) of the chunks of `dataset` in an intact
// file, and where the file stores those chunks' addresses (their 8-byte little-endian encodings,
// in HDF5's chunk index). In the 1.10 format the chunk index is checksummed metadata (a damaged
// address is refused); the raw chunk data are not (a damaged value reads as another value).
inline std::vector<std::pair<std::size_t, std::size_t>> chunk_ranges(const std::filesystem::path& path,
                                                                 const char* dataset_name = "potential") {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dataset = H5Dopen2(file, dataset_name, H5P_DEFAULT);
  const hid_t space = H5Dget_space(dataset);
  hsize_t chunks = 0;
  H5Dget_num_chunks(dataset, space, &chunks);
  for (hsize_t i = 0; i < chunks; ++i) {
    haddr_t address = 0;
    hsize_t size = 0;
    H5Dget_chunk_info(dataset, space, i, nullptr, nullptr, &address, &size);
    ranges.emplace_back(std::size_t(address), std::size_t(address + size));
  }
  H5Sclose(space);
  H5Dclose(dataset);
  H5Fclose(file);
  return ranges;
}

inline std::vector<std::size_t> address_positions(const std::vector<char>& bytes,
                                           const std::vector<std::pair<std::size_t, std::size_t>>& data_ranges) {
  std::vector<std::size_t> positions;
  for (const auto& range : data_ranges) {
    char encoded[8];
    for (int i = 0; i < 8; ++i) encoded[i] = char((std::uint64_t(range.first) >> (8 * i)) & 0xff);
    for (auto at = bytes.begin(); (at = std::search(at, bytes.end(), encoded, encoded + 8)) != bytes.end(); ++at)
      positions.push_back(std::size_t(at - bytes.begin()));
  }
  return positions;
}

}  // namespace dcsgrid::test
