// Trajectory reading speed, each against a baseline measured in the same run on the same file:
//   XTC decoding, frames/s: dcsgrid's decoder vs MDAnalysis' XTCFile (the C xdrfile library)
//   DCD, MB/s: dcsgrid's reader vs `dd` copying the file to /dev/null (process start included),
//   read(2) of the file in 1 MiB blocks within this process, and MDAnalysis' DCDFile
// Files (in $DCSGRID_BENCH_TMP or the system temp folder): XTCs written by MDAnalysis (water-like
// triples, precision 0.001 nm) and a CHARMM DCD with unit cell written here. All reads are from
// the page cache after a warm-up, so "disk speed" here is the cached read speed of `dd`.
//   bench_io_trajectory [--quick]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fcntl.h>
#include <unistd.h>

#include "dcsgrid/io/trajectory/trajectory.hpp"
#include "report.hpp"

namespace fs = std::filesystem;
using dcsgrid::bench::best_seconds;

namespace {

const std::string python = "/usr/bin/python3 -W ignore ";

std::string script() {
  return (fs::path(DCSGRID_SOURCE_DIR) / "benchmarks" / "bench_io_trajectory.py").string();
}

std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  if (pclose(pipe) != 0) throw std::runtime_error("failed: " + command + "\n" + out);
  return out;
}

// Reads every frame; returns the frame count.
std::int64_t read_all(const fs::path& path) {
  auto reader = dcsgrid::io::open_trajectory(path);
  std::vector<float> xyz(3 * reader->atom_count());
  dcsgrid::io::FrameInfo info;
  std::int64_t frames = 0;
  while (reader->next(xyz.data(), info)) ++frames;
  return frames;
}

void write_dcd(const fs::path& path, std::int32_t atoms, std::int32_t frames) {
  std::ofstream out(path, std::ios::binary);
  const auto record = [&](const void* p, std::int32_t n) {
    out.write(reinterpret_cast<const char*>(&n), 4);
    out.write(static_cast<const char*>(p), n);
    out.write(reinterpret_cast<const char*>(&n), 4);
  };
  std::int32_t control[21] = {};
  std::memcpy(control, "CORD", 4);
  control[1] = frames, control[3] = 1, control[11] = 1, control[20] = 24;  // cell, CHARMM 24
  record(control, 84);
  char title[84] = {};
  title[0] = 1;
  record(title, 84);
  record(&atoms, 4);
  const double cell[6] = {80, 0, 80, 0, 0, 80};
  std::vector<float> axis(std::size_t(atoms), 0);
  for (std::int32_t f = 0; f < frames; ++f) {
    record(cell, 48);
    for (int k = 0; k < 3; ++k) {
      for (std::int32_t i = 0; i < atoms; ++i) axis[std::size_t(i)] = float((i * 7 + f + k) % 800) * 0.1f;
      record(axis.data(), 4 * atoms);
    }
  }
}

// The file read in 1 MiB blocks with read(2) and discarded: the speed of getting the bytes.
std::uint64_t raw_read(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string());
  std::vector<char> block(1 << 20);
  std::uint64_t total = 0;
  for (ssize_t n; (n = ::read(fd, block.data(), block.size())) > 0;) total += std::uint64_t(n);
  ::close(fd);
  return total;
}

double mdanalysis_seconds(const std::string& format, const fs::path& path, int repeats,
                          std::int64_t expect_frames) {
  const auto out = nlohmann::json::parse(run(python + script() + " time " + format + " " +
                                             path.string() + " " + std::to_string(repeats)));
  if (out["frames"].get<std::int64_t>() != expect_frames)
    throw std::runtime_error("MDAnalysis read a different frame count from " + path.string());
  return out["seconds"].get<double>();
}

}  // namespace

int run_benchmark(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const char* tmp_env = std::getenv("DCSGRID_BENCH_TMP");
  const fs::path dir = fs::path(tmp_env ? tmp_env : fs::temp_directory_path().string()) /
                       "dcsgrid_bench_io_trajectory";
  fs::create_directories(dir);
  const int repeats = 3;
  dcsgrid::bench::Report report("bench_io_trajectory",
                                {"file", "atoms", "frames", "MB", "reader", "seconds", "frames/s",
                                 "MB/s", "vs baseline"});
  report.set_context("cpu", dcsgrid::bench::cpu_description());
  report.set_context("cache", "every read from the page cache (after a warm-up read)");

  // XTC: a protein-sized system with many frames, and a solvated system with fewer.
  struct XtcCase { std::int32_t atoms, frames; };
  const std::vector<XtcCase> xtc_cases = quick ? std::vector<XtcCase>{{3368, 200}}
                                               : std::vector<XtcCase>{{3368, 2000}, {50000, 200}};
  for (const auto& c : xtc_cases) {
    const fs::path path = dir / ("water_" + std::to_string(c.atoms) + "x" + std::to_string(c.frames) + ".xtc");
    if (!fs::exists(path))
      run(python + script() + " make-xtc " + path.string() + " " + std::to_string(c.atoms) + " " +
          std::to_string(c.frames));
    const double mb = double(fs::file_size(path)) / 1e6;
    std::int64_t frames = 0;
    const double ours = best_seconds(repeats, [&] { frames = read_all(path); });
    const double theirs = mdanalysis_seconds("xtc", path, repeats, frames);
    const std::string name = path.filename().string();
    report.add_row({name, c.atoms, frames, mb, "MDAnalysis XTCFile (xdrfile)", theirs,
                    frames / theirs, mb / theirs, 1.0});
    report.add_row({name, c.atoms, frames, mb, "dcsgrid", ours, frames / ours, mb / ours, theirs / ours});
  }

  // DCD: 3,368 atoms (the protein) with a unit cell.
  const std::int32_t dcd_atoms = 3368, dcd_frames = quick ? 500 : 6000;
  const fs::path dcd = dir / ("protein_" + std::to_string(dcd_frames) + ".dcd");
  if (!fs::exists(dcd)) write_dcd(dcd, dcd_atoms, dcd_frames);
  const double mb = double(fs::file_size(dcd)) / 1e6;
  const double dd = best_seconds(repeats, [&] {
    run("dd if=" + dcd.string() + " of=/dev/null bs=1M 2>/dev/null");
  });
  const double raw = best_seconds(repeats, [&] { raw_read(dcd); });
  std::int64_t frames = 0;
  const double ours = best_seconds(repeats, [&] { frames = read_all(dcd); });
  const double theirs = mdanalysis_seconds("dcd", dcd, repeats, frames);
  const std::string name = dcd.filename().string();
  report.add_row({name, dcd_atoms, frames, mb, "dd bs=1M (baseline)", dd, frames / dd, mb / dd, 1.0});
  report.add_row({name, dcd_atoms, frames, mb, "read(2) 1 MiB blocks, in process", raw, frames / raw,
                  mb / raw, dd / raw});
  report.add_row({name, dcd_atoms, frames, mb, "MDAnalysis DCDFile (libdcd)", theirs,
                  frames / theirs, mb / theirs, dd / theirs});
  report.add_row({name, dcd_atoms, frames, mb, "dcsgrid", ours, frames / ours, mb / ours, dd / ours});
  report.set_context("vs baseline", "XTC: MDAnalysis seconds / these seconds; DCD: dd seconds / these seconds");
  report.finish();
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run_benchmark(argc, argv);
  } catch (const std::exception& e) {
    // Most likely MDAnalysis missing for /usr/bin/python3: the baselines need it.
    std::cerr << "bench_io_trajectory: " << e.what() << "\n";
    return 1;
  }
}
