// Wall-clock seconds for the timings runs report.
#pragma once
#include <chrono>

namespace dcsgrid {

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace dcsgrid
