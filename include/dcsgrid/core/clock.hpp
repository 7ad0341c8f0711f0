// Wall-clock seconds for the timings runs report.
#pragma once
#include <chrono>

namespace dcsgrid {

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// The seconds of successive stages: each lap() returns the time since the last (or since
// construction) and starts the next.
class LapTimer {
 public:
  double lap() {
    const auto now = clock_type::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  clock_type::time_point last_ = clock_type::now();
};

}  // namespace dcsgrid
