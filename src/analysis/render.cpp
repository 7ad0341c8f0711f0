// The software rasteriser behind render_png: per-vertex light and value, interpolated across each
// triangle in a supersampled z-buffer, then averaged down to pixels. One thread (not timed at
// scale yet; tiles on threads only if that shows they pay).
#include "dcsgrid/analysis/render.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <vector>

#include "dcsgrid/analysis/colour_ramp.hpp"
#include "dcsgrid/core/error.hpp"
#include "render_legend.hpp"

namespace dcsgrid::analysis {
namespace {

using Axes = std::array<Vec3, 3>;  // rows: right, up, back

constexpr const char* kViewForms =
    "--view takes auto, an axis (x, -x, y, -y, z, -z), three angles in degrees A,B,C (turning the "
    "auto view about the picture's x, y and z axes), or AXIS:A,B,C";

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec3 normalized(const Vec3& a) {
  const double n = std::sqrt(dot(a, a));
  return n > 0 ? Vec3{a[0] / n, a[1] / n, a[2] / n} : Vec3{0, 0, 0};
}
Vec3 to_vec(const std::array<float, 3>& v) { return {v[0], v[1], v[2]}; }

// Eigenvectors of a symmetric 3 × 3 matrix by cyclic Jacobi rotations, as rows, by descending
// eigenvalue; each with its largest component positive, so that the view does not flip between
// runs on nearly the same surface.
Axes eigenvectors(std::array<Vec3, 3> a) {
  Axes v{Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}};  // columns of v are the vectors
  for (int sweep = 0; sweep < 50; ++sweep) {
    const double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
    if (off <= 1e-30 * (dot(a[0], a[0]) + dot(a[1], a[1]) + dot(a[2], a[2]))) break;
    for (int p = 0; p < 2; ++p)
      for (int q = p + 1; q < 3; ++q) {
        if (a[p][q] == 0) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 3; ++k) {  // a = Jᵀ a J, v = v J
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq, a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; ++k) {
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk, a[q][k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq, v[k][q] = s * vkp + c * vkq;
        }
      }
  }
  std::array<int, 3> order{0, 1, 2};
  std::sort(order.begin(), order.end(), [&](int i, int j) { return a[i][i] > a[j][j]; });
  Axes rows;
  for (int r = 0; r < 3; ++r) {
    Vec3 e{v[0][order[r]], v[1][order[r]], v[2][order[r]]};
    const auto largest = std::max_element(e.begin(), e.end(), [](double x, double y) {
      return std::abs(x) < std::abs(y);
    });
    if (*largest < 0) e = {-e[0], -e[1], -e[2]};
    rows[r] = e;
  }
  return rows;
}

// Looking along the smallest principal axis of the vertices, the middle one up.
Axes principal_view(const TriangleMesh& mesh) {
  Vec3 mean{0, 0, 0};
  for (const auto& p : mesh.vertices)
    for (int k = 0; k < 3; ++k) mean[k] += p[k];
  for (double& m : mean) m /= double(mesh.vertices.size());
  std::array<Vec3, 3> covariance{};
  for (const auto& p : mesh.vertices) {
    const Vec3 d{p[0] - mean[0], p[1] - mean[1], p[2] - mean[2]};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) covariance[i][j] += d[i] * d[j];
  }
  const Axes principal = eigenvectors(covariance);
  const Vec3 up = principal[1], back = principal[2];
  return {cross(up, back), up, back};
}

Axes axis_view(const std::string& axis) {
  const double sign = axis.front() == '-' ? -1 : 1;
  const char name = axis.back();
  const Vec3 back = name == 'x' ? Vec3{sign, 0, 0} : name == 'y' ? Vec3{0, sign, 0} : Vec3{0, 0, sign};
  const Vec3 up = name == 'z' ? Vec3{0, 1, 0} : Vec3{0, 0, 1};
  return {cross(up, back), up, back};
}

// The molecule turned by `degrees` about picture axis `axis` (0 x, 1 y, 2 z): rows R' = Q R.
Axes turned(const Axes& r, int axis, double degrees) {
  const double a = degrees * std::numbers::pi / 180, c = std::cos(a), s = std::sin(a);
  const int i = (axis + 1) % 3, j = (axis + 2) % 3;  // the plane the turn moves
  Axes out = r;
  for (int k = 0; k < 3; ++k) {
    out[i][k] = c * r[i][k] - s * r[j][k];
    out[j][k] = s * r[i][k] + c * r[j][k];
  }
  return out;
}

Axes view_axes(const TriangleMesh& mesh, const ViewSpec& spec) {
  Axes axes = spec.axis.empty() ? principal_view(mesh) : axis_view(spec.axis);
  for (int k = 0; k < 3; ++k)
    if (spec.angles[k] != 0) axes = turned(axes, k, spec.angles[k]);
  return axes;
}

void check_options(const RenderOptions& o) {
  if (o.width < 16 || o.width > 8192 || o.height < 16 || o.height > 8192)
    throw Error("the picture's size is " + std::to_string(o.width) + " × " +
                std::to_string(o.height) + " pixels; each side must be 16 to 8192");
  if (!(o.range > 0) || !std::isfinite(o.range))
    throw Error("the colour range must be a positive number of kT/e, not " + std::to_string(o.range));
  if (o.supersample < 1 || o.supersample > 4)
    throw Error("supersampling must be 1 to 4 samples per pixel side, not " +
                std::to_string(o.supersample));
}

void check_mesh(const TriangleMesh& mesh) {
  const std::size_t n = mesh.vertices.size();
  if (n == 0) throw Error("the surface to draw has no vertices");
  if (!mesh.normals.empty() && mesh.normals.size() != n)
    throw Error("the surface has " + std::to_string(mesh.normals.size()) + " normals for " +
                std::to_string(n) + " vertices");
  if (!mesh.value.empty() && mesh.value.size() != n)
    throw Error("the surface has " + std::to_string(mesh.value.size()) + " values for " +
                std::to_string(n) + " vertices");
  for (std::size_t v = 0; v < n; ++v)
    for (float c : mesh.vertices[v])
      if (!std::isfinite(c))
        throw Error("vertex " + std::to_string(v + 1) + " of the surface has a coordinate that is not a finite number");
  for (std::size_t f = 0; f < mesh.faces.size(); ++f)
    for (std::uint32_t v : mesh.faces[f])
      if (v >= n)
        throw Error("face " + std::to_string(f + 1) + " of the surface names vertex " +
                    std::to_string(v) + " of " + std::to_string(n) + " (numbered from 0)");
}

}  // namespace

ViewSpec parse_view(const std::string& text) {
  ViewSpec spec;
  std::string rest = text;
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    spec.axis = text.substr(0, colon);
    rest = text.substr(colon + 1);
  } else if (text.find(',') == std::string::npos) {
    spec.axis = text;
    rest.clear();
  }
  if (spec.axis == "auto") spec.axis.clear();
  static const char* const kAxes[] = {"", "x", "-x", "y", "-y", "z", "-z"};
  if (std::find(std::begin(kAxes), std::end(kAxes), spec.axis) == std::end(kAxes))
    throw Error("--view '" + printable(text) + "': unknown axis '" + printable(spec.axis) + "'; " + kViewForms);
  if (rest.empty()) return spec;
  std::istringstream in(rest);
  char comma1 = 0, comma2 = 0;
  in >> spec.angles[0] >> comma1 >> spec.angles[1] >> comma2 >> spec.angles[2];
  const bool finite = std::all_of(spec.angles.begin(), spec.angles.end(), [](double a) { return std::isfinite(a); });
  if (!in || comma1 != ',' || comma2 != ',' || !(in >> std::ws).eof() || !finite)
    throw Error("--view '" + printable(text) + "': expected three angles in degrees A,B,C; " + kViewForms);
  return spec;
}

std::array<double, 3> Camera::project(const Vec3& point) const {
  const Vec3 d{point[0] - centre[0], point[1] - centre[1], point[2] - centre[2]};
  return {centre_pixel[0] + pixels_per_angstrom * dot(d, axes[0]),
          centre_pixel[1] - pixels_per_angstrom * dot(d, axes[1]), dot(d, axes[2])};
}

io::ScriptView script_view(const Camera& camera) {
  io::ScriptView view;
  view.axes = camera.axes;
  const double right = (camera.width / 2.0 - camera.centre_pixel[0]) / camera.pixels_per_angstrom;
  const double up = (camera.centre_pixel[1] - camera.height / 2.0) / camera.pixels_per_angstrom;
  for (int k = 0; k < 3; ++k) view.centre[k] = camera.centre[k] + right * camera.axes[0][k] + up * camera.axes[1][k];
  view.visible_height = camera.height / camera.pixels_per_angstrom;
  return view;
}

Camera frame_mesh(const TriangleMesh& mesh, const RenderOptions& options) {
  if (mesh.vertices.empty()) throw Error("the surface to draw has no vertices");
  Camera camera;
  camera.axes = view_axes(mesh, options.view);
  camera.width = options.width, camera.height = options.height;
  constexpr double kHuge = std::numeric_limits<double>::max();
  Vec3 lo{kHuge, kHuge, kHuge}, hi{-kHuge, -kHuge, -kHuge};
  for (const auto& v : mesh.vertices)
    for (int k = 0; k < 3; ++k) {
      const double t = dot(to_vec(v), camera.axes[k]);
      lo[k] = std::min(lo[k], t), hi[k] = std::max(hi[k], t);
    }
  for (int k = 0; k < 3; ++k)
    for (int c = 0; c < 3; ++c) camera.centre[c] += 0.5 * (lo[k] + hi[k]) * camera.axes[k][c];
  const int strip = detail::colour_bar_strip(options.width, options.height, options.range);
  const int margin = std::max(4, options.height / 24);
  const double room_x = std::max(1, options.width - strip - 2 * margin);
  const double room_y = std::max(1, options.height - 2 * margin);
  constexpr double kTiny = 1e-6;  // Å: a flat or point-like surface still gets a finite scale
  camera.pixels_per_angstrom = std::min(room_x / std::max(hi[0] - lo[0], kTiny),
                                        room_y / std::max(hi[1] - lo[1], kTiny));
  camera.centre_pixel = {margin + room_x / 2, options.height / 2.0};
  return camera;
}

namespace {

// Light per vertex: ambient plus Lambert from a light above, left of and behind the viewer,
// two-sided (a surface seen from inside is lit as well). Normals from the faces (area-weighted)
// when the mesh has none.
std::vector<float> vertex_light(const TriangleMesh& mesh, const Axes& axes) {
  constexpr double kAmbient = 0.4, kDiffuse = 0.6;
  const Vec3 light = normalized({-0.35 * axes[0][0] + 0.45 * axes[1][0] + axes[2][0],
                                 -0.35 * axes[0][1] + 0.45 * axes[1][1] + axes[2][1],
                                 -0.35 * axes[0][2] + 0.45 * axes[1][2] + axes[2][2]});
  std::vector<Vec3> normals(mesh.vertices.size(), Vec3{0, 0, 0});
  if (!mesh.normals.empty()) {
    for (std::size_t v = 0; v < normals.size(); ++v) normals[v] = to_vec(mesh.normals[v]);
  } else {
    for (const auto& f : mesh.faces) {
      const Vec3 a = to_vec(mesh.vertices[f[0]]), b = to_vec(mesh.vertices[f[1]]),
                 c = to_vec(mesh.vertices[f[2]]);
      const Vec3 n = cross({b[0] - a[0], b[1] - a[1], b[2] - a[2]}, {c[0] - a[0], c[1] - a[1], c[2] - a[2]});
      for (std::uint32_t v : f)
        for (int k = 0; k < 3; ++k) normals[v][k] += n[k];
    }
  }
  std::vector<float> light_of(normals.size());
  for (std::size_t v = 0; v < normals.size(); ++v)
    light_of[v] = float(kAmbient + kDiffuse * std::abs(dot(normalized(normals[v]), light)));
  return light_of;
}

// The supersampled z-buffer: a colour per sample, and whether a surface covers it.
struct Samples {
  int width = 0, height = 0;
  std::vector<float> depth;  // −∞ where uncovered
  std::vector<Rgb> colour;
};

struct ScreenVertex {
  double x, y, depth;
};

void draw_triangle(Samples& s, const std::array<ScreenVertex, 3>& p, const std::array<float, 3>& value,
                   const std::array<float, 3>& light, double range) {
  const auto edge = [](const ScreenVertex& a, const ScreenVertex& b, double x, double y) {
    return (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
  };
  const double area = edge(p[0], p[1], p[2].x, p[2].y);
  if (!(std::abs(area) > 1e-12)) return;  // seen edge-on, or degenerate
  const int x0 = std::max(0, int(std::floor(std::min({p[0].x, p[1].x, p[2].x}))));
  const int x1 = std::min(s.width - 1, int(std::ceil(std::max({p[0].x, p[1].x, p[2].x}))));
  const int y0 = std::max(0, int(std::floor(std::min({p[0].y, p[1].y, p[2].y}))));
  const int y1 = std::min(s.height - 1, int(std::ceil(std::max({p[0].y, p[1].y, p[2].y}))));
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      const double px = x + 0.5, py = y + 0.5;
      const double b0 = edge(p[1], p[2], px, py) / area, b1 = edge(p[2], p[0], px, py) / area;
      const double b2 = 1 - b0 - b1;
      if (b0 < 0 || b1 < 0 || b2 < 0) continue;
      const std::size_t i = std::size_t(y) * s.width + x;
      const double depth = b0 * p[0].depth + b1 * p[1].depth + b2 * p[2].depth;
      if (depth <= s.depth[i]) continue;
      s.depth[i] = float(depth);
      const Rgb c = potential_colour(b0 * value[0] + b1 * value[1] + b2 * value[2], range);
      const double shade = b0 * light[0] + b1 * light[1] + b2 * light[2];
      for (int k = 0; k < 3; ++k) s.colour[i][k] = std::uint8_t(std::lround(c[k] * shade));
    }
}

Samples rasterise(const TriangleMesh& mesh, const Camera& camera, int factor, double range) {
  Samples s;
  s.width = camera.width * factor, s.height = camera.height * factor;
  s.depth.assign(std::size_t(s.width) * s.height, -std::numeric_limits<float>::infinity());
  s.colour.resize(s.depth.size());
  std::vector<ScreenVertex> screen(mesh.vertices.size());
  for (std::size_t v = 0; v < screen.size(); ++v) {
    const auto p = camera.project(to_vec(mesh.vertices[v]));
    screen[v] = {p[0] * factor, p[1] * factor, p[2]};
  }
  const std::vector<float> light = vertex_light(mesh, camera.axes);
  const float kNoValue = 0;  // a mesh without values is drawn white
  for (const auto& f : mesh.faces) {
    const auto value_of = [&](std::uint32_t v) { return mesh.value.empty() ? kNoValue : mesh.value[v]; };
    draw_triangle(s, {screen[f[0]], screen[f[1]], screen[f[2]]},
                  {value_of(f[0]), value_of(f[1]), value_of(f[2])}, {light[f[0]], light[f[1]], light[f[2]]},
                  range);
  }
  return s;
}

// Each pixel the mean of its factor × factor samples: over white, or (transparent) the covered
// samples' colour with their share as alpha.
io::Image downsample(const Samples& s, int factor, bool transparent) {
  io::Image image;
  image.width = s.width / factor, image.height = s.height / factor;
  image.rgba.resize(std::size_t(image.width) * image.height * 4);
  const int per_pixel = factor * factor;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      int covered = 0;
      std::array<int, 3> sum{0, 0, 0};
      for (int sy = 0; sy < factor; ++sy)
        for (int sx = 0; sx < factor; ++sx) {
          const std::size_t i = std::size_t(y * factor + sy) * s.width + (x * factor + sx);
          if (s.depth[i] == -std::numeric_limits<float>::infinity()) continue;
          ++covered;
          for (int k = 0; k < 3; ++k) sum[k] += s.colour[i][k];
        }
      std::uint8_t* p = &image.rgba[(std::size_t(y) * image.width + x) * 4];
      const int background = transparent ? 0 : 255 * (per_pixel - covered);
      const int divisor = transparent ? std::max(covered, 1) : per_pixel;
      for (int k = 0; k < 3; ++k)
        p[k] = std::uint8_t(transparent && covered == 0 ? 255 : (sum[k] + background + divisor / 2) / divisor);
      p[3] = std::uint8_t(transparent ? (255 * covered + per_pixel / 2) / per_pixel : 255);
    }
  return image;
}

}  // namespace

Picture render_mesh(const TriangleMesh& mesh, const RenderOptions& options) {
  check_options(options);
  check_mesh(mesh);
  Picture picture;
  picture.camera = frame_mesh(mesh, options);
  constexpr std::int64_t kMaxSamples = std::int64_t(1) << 26;
  int factor = options.supersample;
  while (factor > 1 && std::int64_t(options.width) * options.height * factor * factor > kMaxSamples) --factor;
  const Samples samples = rasterise(mesh, picture.camera, factor, options.range);
  picture.image = downsample(samples, factor, options.transparent);
  detail::draw_colour_bar(picture.image, options.range);
  return picture;
}

Camera render_png(const std::filesystem::path& path, const TriangleMesh& mesh, const RenderOptions& options) {
  Picture picture = render_mesh(mesh, options);
  io::write_png(path, picture.image);
  return picture.camera;
}

}  // namespace dcsgrid::analysis
