// A progress bar on stderr, shown only on a terminal and only once a run has lasted a second.
#pragma once
#include <chrono>
#include <string>

namespace dcsgrid::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label, bool enabled = true);
  ~ProgressBar();
  void update(double fraction);  // 0..1
  void finish();                 // clears the line

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dcsgrid::cli
