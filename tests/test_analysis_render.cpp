// The rendered picture of a coloured surface (analysis/render.hpp), decoded by Pillow
// (tests/png_to_rgba.py): a sphere whose value is its x coordinate, seen along z, is blue on the
// +x side and red on the −x side over a white (or transparent) background, with a colour bar from
// blue at the top to red at the bottom and black labels.
#include <gtest/gtest.h>

#include <cmath>

#include "dcsgrid/analysis/colour_ramp.hpp"
#include "dcsgrid/analysis/render.hpp"
#include "helpers.hpp"
#include "test_png_decode.hpp"
#include "test_sphere_mesh.hpp"

using namespace dcsgrid;
using namespace dcsgrid::analysis;
namespace fs = std::filesystem;

namespace {

constexpr std::array<double, 3> kCentre{3, -2, 1};
constexpr double kRadius = 10;

// A sphere whose value at each vertex is its x offset from the centre, in kT/e (±10).
TriangleMesh x_valued_sphere() {
  TriangleMesh mesh;
  test::append_sphere(mesh, kCentre, kRadius);
  for (const auto& v : mesh.vertices) mesh.value.push_back(float(v[0] - kCentre[0]));
  return mesh;
}

// Shaded: the side away from the light is darker, but one channel still stands out.
bool is_blue(const std::array<int, 4>& p) { return p[2] > p[0] + 60 && p[2] > p[1] + 60; }
bool is_red(const std::array<int, 4>& p) { return p[0] > p[1] + 60 && p[0] > p[2] + 60; }
bool is_white(const std::array<int, 4>& p) { return p[0] == 255 && p[1] == 255 && p[2] == 255; }

// The pixel a point of the sphere's front (towards +z) lands on.
std::array<int, 4> pixel_at(const test::DecodedPng& png, const Camera& camera, double dx, double dy) {
  const double dz = std::sqrt(std::max(0.0, kRadius * kRadius - dx * dx - dy * dy));
  const auto p = camera.project({kCentre[0] + dx, kCentre[1] + dy, kCentre[2] + dz});
  return png.pixel(int(p[0]), int(p[1]));
}

}  // namespace

TEST(ColourRamp, RedWhiteBlueClamped) {
  EXPECT_EQ(potential_colour(0, 5), (Rgb{255, 255, 255}));
  EXPECT_EQ(potential_colour(-5, 5), (Rgb{255, 0, 0}));
  EXPECT_EQ(potential_colour(5, 5), (Rgb{0, 0, 255}));
  EXPECT_EQ(potential_colour(-50, 5), (Rgb{255, 0, 0}));
  EXPECT_EQ(potential_colour(2.5, 5), (Rgb{128, 128, 255}));  // halfway: 127.5 rounds up
  EXPECT_EQ(potential_colour(std::nan(""), 5), kNoValueColour);
}

TEST(Render, SphereSeenAlongZIsBlueAtPlusXRedAtMinusX) {
  const std::string python = test::python_with_pillow();
  if (python.empty()) GTEST_SKIP() << "no python3 with Pillow (Debian python3-pil): the picture is not decoded";
  const fs::path dir = test::temp_dir("render_sphere");
  RenderOptions options;
  options.width = 480, options.height = 360, options.range = 5;
  options.view = parse_view("z");
  const Camera camera = render_png(dir / "sphere.png", x_valued_sphere(), options);
  EXPECT_EQ(test::listing(dir), std::vector<std::string>{"sphere.png"});  // no temporary left
  const auto png = test::decode_png(python, dir / "sphere.png");
  ASSERT_TRUE(png);
  EXPECT_EQ(png->width, 480);
  EXPECT_EQ(png->height, 360);
  EXPECT_EQ(png->mode, "RGB");

  // Beyond +5 (x offset > 5) the ramp is full blue, beyond −5 full red; near x = 0 whitish.
  for (double dy : {-4.0, 0.0, 4.0}) {
    EXPECT_TRUE(is_blue(pixel_at(*png, camera, 8, dy))) << dy;
    EXPECT_TRUE(is_red(pixel_at(*png, camera, -8, dy))) << dy;
    const auto middle = pixel_at(*png, camera, 0, dy);
    EXPECT_LT(std::abs(middle[0] - middle[2]), 10) << dy;  // grey-white: neither sign
    EXPECT_GT(middle[1], 150) << dy;
  }
  // The sphere is centred in the room left of the colour bar: its left and right edges within a
  // pixel of the projection of ±R.
  const auto left = camera.project({kCentre[0] - kRadius, kCentre[1], kCentre[2]});
  const auto right = camera.project({kCentre[0] + kRadius, kCentre[1], kCentre[2]});
  const int row = int(left[1]);
  EXPECT_TRUE(is_white(png->pixel(int(left[0]) - 2, row)));
  EXPECT_FALSE(is_white(png->pixel(int(left[0]) + 2, row)));
  EXPECT_FALSE(is_white(png->pixel(int(right[0]) - 2, row)));
  EXPECT_TRUE(is_white(png->pixel(int(right[0]) + 2, row)));
  EXPECT_NEAR(right[0] - left[0], 2 * kRadius * camera.pixels_per_angstrom, 1e-9);
  for (auto [x, y] : {std::pair{1, 1}, {1, 358}, {int(left[0]) / 2, 180}}) EXPECT_TRUE(is_white(png->pixel(x, y)));

  // The colour bar, right of the sphere: blue at its top, red at its bottom, black labels.
  int top_row = -1, bottom_row = -1, ink = 0;
  std::array<int, 4> top{}, bottom{};
  for (int y = 0; y < png->height; ++y)
    for (int x = int(right[0]) + 4; x < png->width; ++x) {
      const auto p = png->pixel(x, y);
      if (p[0] == 0 && p[1] == 0 && p[2] == 0) ++ink;
      if (is_white(p) || (p[0] == p[1] && p[1] == p[2])) continue;
      if (top_row < 0) top_row = y, top = p;
      bottom_row = y, bottom = p;
    }
  ASSERT_GE(top_row, 0) << "no colour right of the sphere";
  EXPECT_EQ(top, (std::array<int, 4>{0, 0, 255, 255})) << "row " << top_row;
  EXPECT_EQ(bottom, (std::array<int, 4>{255, 0, 0, 255})) << "row " << bottom_row;
  EXPECT_GT(bottom_row - top_row, png->height / 2);
  EXPECT_GT(ink, 200) << "the labels' and outline's black pixels";
}

TEST(Render, TransparentBackgroundAndTurnedView) {
  const std::string python = test::python_with_pillow();
  if (python.empty()) GTEST_SKIP() << "no python3 with Pillow (Debian python3-pil): the picture is not decoded";
  const fs::path dir = test::temp_dir("render_transparent");
  RenderOptions options;
  options.width = 320, options.height = 240, options.transparent = true;
  options.view = parse_view("z:0,180,0");  // turned half a turn about the picture's up axis: seen from −z
  const Camera camera = render_png(dir / "t.png", x_valued_sphere(), options);
  const auto png = test::decode_png(python, dir / "t.png");
  ASSERT_TRUE(png);
  EXPECT_EQ(png->mode, "RGBA");
  EXPECT_EQ(png->pixel(1, 1)[3], 0);
  // From −z, +x is on the left: the left of the picture is blue.
  const auto at = [&](double dx) {
    const auto p = camera.project({kCentre[0] + dx, kCentre[1], kCentre[2] - kRadius * 0.5});
    return png->pixel(int(p[0]), int(p[1]));
  };
  EXPECT_TRUE(is_blue(at(8))) << at(8)[0] << " " << at(8)[2];
  EXPECT_TRUE(is_red(at(-8)));
  EXPECT_LT(camera.project({kCentre[0] + 8, kCentre[1], kCentre[2]})[0],
            camera.project({kCentre[0] - 8, kCentre[1], kCentre[2]})[0]);
  EXPECT_EQ(at(8)[3], 255);
}

TEST(Render, DefaultViewLooksAlongTheSmallestAxis) {
  // A flat ellipsoid: long along y, middle along x, thin along z. The default view looks along z
  // (either way) with y across the picture (the longest axis) and x up.
  TriangleMesh mesh;
  test::append_sphere(mesh, {0, 0, 0}, 1.0);
  for (auto& v : mesh.vertices) v = {v[0] * 6, v[1] * 12, v[2] * 2};
  const Camera camera = frame_mesh(mesh, RenderOptions{});
  EXPECT_NEAR(std::abs(camera.axes[2][2]), 1.0, 1e-9);
  EXPECT_NEAR(std::abs(camera.axes[1][0]), 1.0, 1e-9);
  EXPECT_NEAR(std::abs(camera.axes[0][1]), 1.0, 1e-9);
}

TEST(Render, ParseView) {
  EXPECT_EQ(parse_view("auto").axis, "");
  EXPECT_EQ(parse_view("-y").axis, "-y");
  const ViewSpec turned = parse_view("30,-45.5,90");
  EXPECT_EQ(turned.axis, "");
  EXPECT_EQ(turned.angles, (std::array<double, 3>{30, -45.5, 90}));
  EXPECT_EQ(parse_view("x:0,0,10").angles[2], 10);
  for (const char* bad : {"w", "x:1,2", "1,2,3,4", "x:a,b,c", "z:1,2,nan"}) {
    const std::string message = test::error_message([&] { parse_view(bad); });
    EXPECT_NE(message.find("--view takes auto"), std::string::npos) << bad << ": " << message;
  }
}

TEST(Render, RefusesBadMeshesAndOptions) {
  TriangleMesh mesh = x_valued_sphere();
  mesh.faces.push_back({0, 1, std::uint32_t(mesh.vertices.size())});
  EXPECT_NE(test::error_message([&] { render_mesh(mesh, {}); }).find("names vertex"), std::string::npos);
  mesh = x_valued_sphere();
  mesh.value.pop_back();
  EXPECT_NE(test::error_message([&] { render_mesh(mesh, {}); }).find("values for"), std::string::npos);
  EXPECT_NE(test::error_message([&] { render_mesh(TriangleMesh{}, {}); }).find("no vertices"), std::string::npos);
  RenderOptions tiny;
  tiny.width = 8;
  EXPECT_NE(test::error_message([&] { render_mesh(x_valued_sphere(), tiny); }).find("16 to 8192"), std::string::npos);
  RenderOptions no_range;
  no_range.range = 0;
  EXPECT_NE(test::error_message([&] { render_mesh(x_valued_sphere(), no_range); }).find("positive"), std::string::npos);
  const fs::path missing = test::temp_dir("render_missing") / "no" / "such" / "folder" / "x.png";
  EXPECT_NE(test::error_message([&] { render_png(missing, x_valued_sphere(), {}); }).find("x.png"),
            std::string::npos);
}
