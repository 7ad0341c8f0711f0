// The potential's colour, as the field draws it: red negative, white zero, blue positive, linear in
// value over a symmetric range (±range, kT/e by default 5) and saturated beyond it.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace dcsgrid::analysis {

// sRGB bytes; NaN (no value) is grey.
inline std::array<std::uint8_t, 3> potential_colour(double value, double range) {
  if (std::isnan(value) || !(range > 0)) return {128, 128, 128};
  const double s = std::clamp(value / range, -1.0, 1.0);
  const auto fade = std::uint8_t(std::lround(255 * (1 - std::abs(s))));  // the other two channels
  return s < 0 ? std::array<std::uint8_t, 3>{255, fade, fade} : std::array<std::uint8_t, 3>{fade, fade, 255};
}

}  // namespace dcsgrid::analysis
