#include "helpers.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include <sys/wait.h>

#ifdef DCSGRID_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "dcsgrid/engine/cutoff_form.hpp"

namespace dcsgrid::test {

std::filesystem::path source_dir() { return DCSGRID_SOURCE_DIR; }
std::filesystem::path data_file(const std::string& name) { return source_dir() / "data" / name; }

std::vector<std::string> listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

int hdf5_superblock_version(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 9> head{};
  if (!in.read(head.data(), std::streamsize(head.size()))) return -1;
  if (std::string(head.data(), 8) != "\x89HDF\r\n\x1a\n") return -1;
  return static_cast<unsigned char>(head[8]);
}

std::filesystem::path temp_dir(const std::string& tag) {
  std::random_device rd;
  auto dir = std::filesystem::temp_directory_path() /
             ("dcsgrid-test-" + tag + "-" + std::to_string(rd()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

AtomSet random_atoms(std::size_t n, const Box& box, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0), charge(-1.0, 1.0);
  AtomSet atoms;
  atoms.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double px = box.lo[0] + unit(rng) * (box.hi[0] - box.lo[0]);
    const double py = box.lo[1] + unit(rng) * (box.hi[1] - box.lo[1]);
    const double pz = box.lo[2] + unit(rng) * (box.hi[2] - box.lo[2]);
    atoms.push_back(px, py, pz, charge(rng));
  }
  return atoms;
}

// scale · Σ q·term(r²) over all atoms, in double, for every point of planes [z_begin, z_end).
template <typename Term>
static std::vector<double> reference_sum(const AtomSet& atoms, const GridSpec& grid, double scale,
                                         std::int64_t z_begin, std::int64_t z_end,
                                         const Term& term) {
  if (z_end < 0) z_end = grid.nz();
  std::vector<double> out(grid.plane_size() * (z_end - z_begin), 0.0);
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t k = z_begin; k < z_end; ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i) {
        const auto p = grid.position(i, j, k);
        double sum = 0;
        for (std::size_t a = 0; a < atoms.size(); ++a) {
          const double dx = p[0] - atoms.x[a], dy = p[1] - atoms.y[a], dz = p[2] - atoms.z[a];
          sum += atoms.q[a] * term(dx * dx + dy * dy + dz * dz);
        }
        out[((k - z_begin) * grid.ny() + j) * grid.nx() + i] = scale * sum;
      }
  return out;
}

std::vector<double> reference_direct(const AtomSet& atoms, const GridSpec& grid,
                                     const PairKernel& kernel, std::int64_t z_begin,
                                     std::int64_t z_end) {
  return reference_sum(atoms, grid, kernel.scale_d, z_begin, z_end,
                       [&](double r2) { return pair_term_double(kernel, r2); });
}

std::vector<double> reference_cutoff(const AtomSet& atoms, const GridSpec& grid,
                                     const PairKernel& kernel, const engine::CutoffOptions& cut,
                                     std::int64_t z_begin, std::int64_t z_end) {
  const engine::CutoffParams params = engine::make_cutoff_params(cut);
  return reference_sum(atoms, grid, kernel.scale_d, z_begin, z_end, [&](double r2) {
    return engine::cutoff_pair_term_double(kernel, params, r2);
  });
}

std::vector<char> points_near_cutoff(const AtomSet& atoms, const GridSpec& grid, double rc,
                                     double tolerance) {
  std::vector<char> near(grid.point_count(), 0);
#pragma omp parallel for schedule(static)
  for (std::size_t n = 0; n < near.size(); ++n) {
    const auto ijk = grid.ijk(n);
    const auto p = grid.position(ijk[0], ijk[1], ijk[2]);
    for (std::size_t a = 0; a < atoms.size() && !near[n]; ++a) {
      const double dx = p[0] - atoms.x[a], dy = p[1] - atoms.y[a], dz = p[2] - atoms.z[a];
      near[n] = std::abs(std::sqrt(dx * dx + dy * dy + dz * dz) - rc) < tolerance;
    }
  }
  return near;
}

template <typename A, typename T>
static double relative_l2_impl(const std::vector<A>& a, const std::vector<T>& ref) {
  if (a.size() != ref.size()) return INFINITY;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = double(a[i]) - double(ref[i]);
    num += d * d;
    den += double(ref[i]) * double(ref[i]);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}
double relative_l2(const std::vector<float>& a, const std::vector<double>& ref) {
  return relative_l2_impl(a, ref);
}
double relative_l2(const std::vector<float>& a, const std::vector<float>& ref) {
  return relative_l2_impl(a, ref);
}
double relative_l2(const std::vector<double>& a, const std::vector<double>& ref) {
  return relative_l2_impl(a, ref);
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) result.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string python_with(const std::string& modules) {
  for (const char* python : {"/usr/bin/python3", "python3"})
    if (run_command(std::string(python) + " -c 'import " + modules + "'").status == 0) return python;
  return {};
}

std::string dcsgrid_binary() { return DCSGRID_BINARY; }

bool have_gpu() {
#ifdef DCSGRID_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
#else
  return false;
#endif
}

std::string error_message(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace dcsgrid::test
