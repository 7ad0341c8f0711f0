// The colour of a potential as the field draws it: red negative, white zero, blue positive, over a
// symmetric range ±range, clamped beyond it. PyMOL's `ramp_new ... [-r, 0, r], [red, white, blue]`
// and ChimeraX's `palette red:white:blue range -r,r` interpolate the same way (linearly in RGB),
// so a picture, a .ply's colours and those programs' surfaces agree.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace dcsgrid::analysis {

using Rgb = std::array<std::uint8_t, 3>;

// Grey for a value that is not a number (a vertex outside the map): neither sign.
inline constexpr Rgb kNoValueColour{128, 128, 128};

// range > 0 (kT/e, or the value's unit); a range that is not a positive number colours by sign
// alone (±1 → full red or blue).
inline Rgb potential_colour(double value, double range) {
  if (std::isnan(value)) return kNoValueColour;
  const double t = range > 0 && std::isfinite(range) ? value / range : (value > 0) - (value < 0);
  const double fade = std::clamp(1.0 - std::abs(t), 0.0, 1.0);  // 1 at zero, 0 at ±range
  const auto other = static_cast<std::uint8_t>(std::lround(255.0 * fade));
  if (t < 0) return {255, other, other};  // towards red
  return {other, other, 255};             // towards blue
}

}  // namespace dcsgrid::analysis
