// detail::concatenate_in_parallel: joining per-thread lists in parallel (the molecular surface's
// samples, faces and neighbour lists). Private to src/analysis.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dcsgrid/core/threads.hpp"

namespace dcsgrid::analysis::detail {

// Appends the parts to `out` one after another, each copied by a thread to its place and then
// freed (a 10^6-atom surface's lists per plane or per atom are gigabytes, too much for one
// thread to copy). Returns where each part starts in `out`, and out's size last.
template <class T>
std::vector<std::size_t> concatenate_in_parallel(std::vector<std::vector<T>>& parts, std::vector<T>& out) {
  std::vector<std::size_t> start(parts.size() + 1, out.size());
  for (std::size_t p = 0; p < parts.size(); ++p) start[p + 1] = start[p] + parts[p].size();
  out.resize(start.back());
#pragma omp parallel for num_threads(team_size()) schedule(dynamic, 64)
  for (std::int64_t p = 0; p < std::int64_t(parts.size()); ++p) {
    std::copy(parts[std::size_t(p)].begin(), parts[std::size_t(p)].end(), out.begin() + std::ptrdiff_t(start[std::size_t(p)]));
    std::vector<T>().swap(parts[std::size_t(p)]);
  }
  return start;
}

}  // namespace dcsgrid::analysis::detail
