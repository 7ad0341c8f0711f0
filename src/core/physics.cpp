#include "dcsgrid/core/physics.hpp"

#include <cmath>

#include <spdlog/fmt/fmt.h>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid {
namespace {
constexpr double kLog2e = 1.4426950408889634;  // log2(e)
}  // namespace

void validate(const Physics& p) {
  if (!(p.dielectric > 0) || !std::isfinite(p.dielectric))
    throw Error(fmt::format("--dielectric must be positive, got {}", p.dielectric));
  if (!(p.temperature > 0) || !std::isfinite(p.temperature))
    throw Error(fmt::format("--temperature must be positive (K), got {}", p.temperature));
  if (!(p.ionic_strength >= 0) || !std::isfinite(p.ionic_strength))
    throw Error(fmt::format("--ionic-strength must be zero or positive (mol/L), got {}",
                            p.ionic_strength));
  if (!(p.min_distance > 0) || !std::isfinite(p.min_distance))
    throw Error(fmt::format("--min-distance must be positive (Å), got {}", p.min_distance));
  if (p.distance_dependent && p.ionic_strength > 0)
    throw Error("--ddd and --ionic-strength cannot be combined: Debye–Hückel screening needs a "
                "constant dielectric");
  if (p.distance_dependent && p.dielectric != 1.0)
    throw Error("--ddd replaces --dielectric with ε(r) = 4r; give only one of them");
}

std::string describe(const Physics& p) {
  std::string medium = p.distance_dependent ? "ε(r) = 4r" : fmt::format("ε = {:g}", p.dielectric);
  if (p.ionic_strength > 0)
    medium += fmt::format(", Debye–Hückel I = {:g} M (1/κ = {:.2f} Å)", p.ionic_strength,
                          1.0 / debye_kappa(p.ionic_strength, p.dielectric, p.temperature));
  return fmt::format("{}, T = {:g} K, r_min = {:g} Å, {}", medium, p.temperature, p.min_distance,
                     unit_name(p.unit));
}

PairKernel make_pair_kernel(const Physics& p) {
  validate(p);
  PairKernel k;
  const double base = kCoulomb * unit_factor(p.unit, p.temperature);
  if (p.distance_dependent) {
    k.form = PairForm::distance_dependent;
    k.scale_d = base / 4.0;
  } else {
    k.form = p.ionic_strength > 0 ? PairForm::debye_huckel : PairForm::coulomb;
    k.scale_d = base / p.dielectric;
    k.kappa_d = debye_kappa(p.ionic_strength, p.dielectric, p.temperature);
  }
  k.exp2_kappa_d = -k.kappa_d * kLog2e;
  k.min_r2_d = p.min_distance * p.min_distance;
  k.scale = float(k.scale_d);
  k.exp2_kappa = float(k.exp2_kappa_d);
  k.min_r2 = float(k.min_r2_d);
  return k;
}

}  // namespace dcsgrid
