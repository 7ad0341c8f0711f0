// Wall-clock timing for the app layer's reports (run_job, batch, compute).
#pragma once
#include <chrono>

namespace dcsgrid::app {

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace dcsgrid::app
