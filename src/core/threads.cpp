#include "dcsgrid/core/threads.hpp"

#include <algorithm>
#include <mutex>

#include <omp.h>
#include <spdlog/spdlog.h>

namespace dcsgrid {

int max_threads() {
  // omp_get_num_procs counts the processors this process may run on (its affinity mask).
  static const int limit = kThreadsPerHardwareThread * std::max(1, omp_get_num_procs());
  return limit;
}

// Why a team is cut to max_threads(), for the warnings.
static std::string cut_reason() {
  return fmt::format(
      "more than {} threads per hardware thread ({} here) only slow a run down; using {}",
      kThreadsPerHardwareThread, max_threads() / kThreadsPerHardwareThread, max_threads());
}

int bounded_threads(std::int64_t requested, const std::string& source) {
  if (requested <= max_threads()) return int(requested);
  spdlog::warn("{} {}: {}", source, requested, cut_reason());
  return max_threads();
}

void set_openmp_threads(std::int64_t requested, const std::string& source) {
  if (requested > 0) omp_set_num_threads(bounded_threads(requested, source));
}

int team_size() {
  const int wanted = omp_get_max_threads();
  if (wanted <= max_threads()) return wanted;
  static std::once_flag warned;
  std::call_once(warned, [wanted] {
    spdlog::warn("OMP_NUM_THREADS {} (OpenMP's default team): {}", wanted, cut_reason());
  });
  return max_threads();
}

}  // namespace dcsgrid
