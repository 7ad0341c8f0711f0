// A synthetic box of TIP3P water: a reproducible, realistic input for tests and benchmarks
// (neutral molecules, dense, with the near-field cancellation of a real solvent).
#pragma once
#include <cstddef>
#include <cstdint>

#include "dcsgrid/core/atoms.hpp"

namespace dcsgrid {

// TIP3P: O–H 0.9572 Å, H–O–H 104.52°, charges O −0.834 e, H +0.417 e; liquid water at
// 0.0334 molecules/Å³.
inline constexpr double kWaterOH = 0.9572;
inline constexpr double kWaterHOHDegrees = 104.52;
inline constexpr double kWaterChargeO = -0.834;
inline constexpr double kWaterChargeH = 0.417;
inline constexpr double kWaterDensity = 0.0334;

// Waters filling the cube [0, edge)³: oxygens on a cubic lattice of n³ sites (n = edge /
// lattice spacing at the liquid density, rounded, at least 1), each moved by up to ±0.15 of the
// site spacing along each axis and turned to a uniformly random orientation. Atoms come in the
// order O, H, H per molecule. The same seed gives the same box on every platform.
AtomSet water_box(double edge, std::uint64_t seed = 1);

// About `atoms` atoms (rounded up to whole molecules) of water at the liquid density in the
// smallest cube of lattice sites that holds them, sites taken in a seeded random order so the
// box is evenly filled. Throws Error when atoms is 0.
AtomSet water_box_atoms(std::size_t atoms, std::uint64_t seed = 1);

}  // namespace dcsgrid
