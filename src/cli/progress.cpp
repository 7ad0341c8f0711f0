#include "dcsgrid/cli/progress.hpp"

#include <cstdio>

#include <unistd.h>

namespace dcsgrid::cli {

ProgressBar::ProgressBar(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled && ::isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(double fraction) {
  if (!enabled_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed < 1.0) return;  // short runs stay quiet
  constexpr int width = 40;
  const int filled = int(fraction * width + 0.5);
  const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
  std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%%  %.0f s left ", label_.c_str(), filled,
               "########################################", width - filled, "", fraction * 100,
               eta);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (drawn_) {
    std::fprintf(stderr, "\r%*s\r", 80 + int(label_.size()), "");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace dcsgrid::cli
