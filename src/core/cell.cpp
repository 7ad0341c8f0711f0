#include "dcsgrid/core/cell.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>
#include <vector>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid {
namespace {

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double radians(double degrees) { return degrees * std::numbers::pi / 180.0; }
double degrees(double radians) { return radians * 180.0 / std::numbers::pi; }

// Cosine of an angle given in degrees, exact at 90° (so orthorhombic cells have exact zeros).
double cos_degrees(double angle) { return angle == 90.0 ? 0.0 : std::cos(radians(angle)); }

}  // namespace

bool UnitCell::orthorhombic() const {
  for (double a : angles)
    if (std::abs(a - 90.0) > 1e-9) return false;
  return true;
}

Vec3 UnitCell::fractional(const Vec3& p) const {
  return {dot(p, reciprocal[0]), dot(p, reciprocal[1]), dot(p, reciprocal[2])};
}

Vec3 UnitCell::cartesian(const Vec3& f) const {
  Vec3 p{};
  for (int i = 0; i < 3; ++i)
    for (int d = 0; d < 3; ++d) p[d] += f[i] * vectors[i][d];
  return p;
}

Vec3 UnitCell::wrap(const Vec3& p) const {
  Vec3 f = fractional(p);
  for (double& v : f) {
    v -= std::floor(v);
    if (v >= 1.0) v = 0.0;  // floor of a value just below an integer
  }
  return cartesian(f);
}

std::string UnitCell::describe() const {
  std::ostringstream s;
  s.precision(6);
  s << "a " << lengths[0] << " b " << lengths[1] << " c " << lengths[2] << " Å, α " << angles[0]
    << " β " << angles[1] << " γ " << angles[2] << "°";
  return s.str();
}

UnitCell make_cell(const Vec3& lengths, const Vec3& angles) {
  static const char* const kLength[] = {"a", "b", "c"};
  static const char* const kAngle[] = {"alpha", "beta", "gamma"};
  for (int i = 0; i < 3; ++i) {
    if (!(std::isfinite(lengths[i]) && lengths[i] > 0))
      throw Error(std::string("unit cell: length ") + kLength[i] + " must be positive and finite (got " +
                  std::to_string(lengths[i]) + " Å)");
    if (!(std::isfinite(angles[i]) && angles[i] > 0 && angles[i] < 180))
      throw Error(std::string("unit cell: angle ") + kAngle[i] + " must lie strictly between 0 and 180 degrees (got " +
                  std::to_string(angles[i]) + ")");
  }
  const double ca = cos_degrees(angles[0]), cb = cos_degrees(angles[1]), cg = cos_degrees(angles[2]);
  const double sg = std::sin(radians(angles[2]));
  // Volume of the unit-length cell; zero or negative when the three angles close no volume.
  const double v2 = 1 - ca * ca - cb * cb - cg * cg + 2 * ca * cb * cg;
  if (!(v2 > 1e-12))
    throw Error("unit cell: the angles alpha " + std::to_string(angles[0]) + ", beta " +
                std::to_string(angles[1]) + ", gamma " + std::to_string(angles[2]) +
                " degrees enclose no volume (each must be less than the sum of the other two)");
  UnitCell c;
  c.lengths = lengths;
  c.angles = angles;
  const double a = lengths[0], b = lengths[1], cl = lengths[2];
  c.vectors[0] = {a, 0, 0};
  c.vectors[1] = {b * cg, b * sg, 0};
  const double cx = cl * cb, cy = cl * (ca - cb * cg) / sg;
  c.vectors[2] = {cx, cy, cl * std::sqrt(v2) / sg};
  c.volume = a * b * cl * std::sqrt(v2);
  const Vec3 bc = cross(c.vectors[1], c.vectors[2]), ca_ = cross(c.vectors[2], c.vectors[0]),
             ab = cross(c.vectors[0], c.vectors[1]);
  for (int d = 0; d < 3; ++d) {
    c.reciprocal[0][d] = bc[d] / c.volume;
    c.reciprocal[1][d] = ca_[d] / c.volume;
    c.reciprocal[2][d] = ab[d] / c.volume;
  }
  return c;
}

std::optional<UnitCell> cell_from_vectors(const Mat3& v) {
  const double la = std::sqrt(dot(v[0], v[0])), lb = std::sqrt(dot(v[1], v[1])),
               lc = std::sqrt(dot(v[2], v[2]));
  if (!(la > 0 && lb > 0 && lc > 0)) return std::nullopt;
  if (!(std::abs(dot(cross(v[0], v[1]), v[2])) > 1e-9 * la * lb * lc)) return std::nullopt;
  const auto angle = [](const Vec3& x, const Vec3& y, double nx, double ny) {
    return degrees(std::acos(std::clamp(dot(x, y) / (nx * ny), -1.0, 1.0)));
  };
  try {
    return make_cell({la, lb, lc}, {angle(v[1], v[2], lb, lc), angle(v[0], v[2], la, lc),
                                    angle(v[0], v[1], la, lb)});
  } catch (const Error&) {
    return std::nullopt;
  }
}

UnitCell parse_cell(const std::string& text) {
  std::vector<double> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string field = text.substr(start, comma - start);
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(field, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < field.size() && std::isspace(static_cast<unsigned char>(field[used]))) ++used;
    if (field.empty() || used != field.size())
      throw Error("--cell '" + text + "': '" + field + "' is not a number (expected A,B,C or A,B,C,ALPHA,BETA,GAMMA in Å and degrees)");
    values.push_back(v);
    start = comma + 1;
  }
  if (values.size() != 3 && values.size() != 6)
    throw Error("--cell '" + text + "': expected 3 lengths (A,B,C) or 3 lengths and 3 angles (A,B,C,ALPHA,BETA,GAMMA), got " +
                std::to_string(values.size()) + " values");
  const Vec3 lengths{values[0], values[1], values[2]};
  const Vec3 angles = values.size() == 6 ? Vec3{values[3], values[4], values[5]} : Vec3{90, 90, 90};
  try {
    return make_cell(lengths, angles);
  } catch (const Error& e) {
    throw Error("--cell '" + text + "': " + std::string(e.what()).substr(std::string("unit cell: ").size()));
  }
}

}  // namespace dcsgrid
