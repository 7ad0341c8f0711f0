#include "render_legend.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "dcsgrid/analysis/colour_ramp.hpp"

namespace dcsgrid::analysis::detail {
namespace {

// 5 × 7 glyphs, '#' lit; the characters the labels use: a number as %g writes it and the unit.
struct Glyph {
  char c;
  std::array<const char*, 7> rows;
};
constexpr Glyph kFont[] = {
    {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
    {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
    {'3', {"####.", "....#", "....#", ".###.", "....#", "....#", "####."}},
    {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
    {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
    {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
    {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
    {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
    {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
    {'-', {".....", ".....", ".....", "#####", ".....", ".....", "....."}},
    {'+', {".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."}},
    {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
    {'k', {"#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."}},
    {'T', {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."}},
    {'/', {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."}},
    {'e', {".....", ".....", ".###.", "#...#", "#####", "#....", ".###."}},
};
constexpr int kGlyphWidth = 5, kGlyphHeight = 7, kAdvance = 6;
constexpr char kUnit[] = "kT/e";

struct Layout {
  int scale;   // pixels per font dot
  int margin;  // around the strip's contents
  int bar_width, bar_top, bar_height;
  int tick;    // length of a tick mark
};

Layout layout(int width, int height) {
  Layout l;
  l.scale = std::max(1, (std::min(width, height) + 128) / 256);
  l.margin = std::max(4, height / 48);
  l.bar_width = std::max(6, height / 32);
  l.bar_height = std::max(8, height * 3 / 5);
  l.bar_top = (height - l.bar_height) / 2;
  l.tick = std::max(3, l.bar_width / 3);
  return l;
}

// The tick labels: "+5", "0", "-5" (%g with 3 significant digits; 'e' and '+' are in the font).
std::array<std::string, 3> labels(double range) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", range);
  return {std::string("+") + text, "0", std::string("-") + text};
}

int text_width(const std::string& text, int scale) {
  return text.empty() ? 0 : (int(text.size()) * kAdvance - 1) * scale;
}

void put(io::Image& image, int x, int y, Rgb colour) {
  if (x < 0 || y < 0 || x >= image.width || y >= image.height) return;
  std::uint8_t* p = &image.rgba[(std::size_t(y) * image.width + x) * 4];
  p[0] = colour[0], p[1] = colour[1], p[2] = colour[2], p[3] = 255;
}

void fill(io::Image& image, int x0, int y0, int w, int h, Rgb colour) {
  for (int y = y0; y < y0 + h; ++y)
    for (int x = x0; x < x0 + w; ++x) put(image, x, y, colour);
}

// Text whose left edge is at x and whose middle row is at y.
void draw_text(io::Image& image, const std::string& text, int x, int y, int scale) {
  constexpr Rgb kInk{0, 0, 0};
  const int top = y - kGlyphHeight * scale / 2;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const Glyph* glyph = std::find_if(std::begin(kFont), std::end(kFont),
                                      [&](const Glyph& g) { return g.c == text[i]; });
    if (glyph == std::end(kFont)) continue;  // a blank
    for (int row = 0; row < kGlyphHeight; ++row)
      for (int col = 0; col < kGlyphWidth; ++col)
        if (glyph->rows[row][col] == '#')
          fill(image, x + (int(i) * kAdvance + col) * scale, top + row * scale, scale, scale, kInk);
  }
}

}  // namespace

int colour_bar_strip(int width, int height, double range) {
  const Layout l = layout(width, height);
  int widest = text_width(kUnit, l.scale) - l.bar_width;  // the unit starts at the bar's left edge
  for (const std::string& label : labels(range))
    widest = std::max(widest, l.tick + l.margin + text_width(label, l.scale));
  return l.margin + l.bar_width + widest + l.margin;
}

void draw_colour_bar(io::Image& image, double range) {
  const Layout l = layout(image.width, image.height);
  const int strip = colour_bar_strip(image.width, image.height, range);
  const int x0 = image.width - strip + l.margin;
  for (int y = 0; y < l.bar_height; ++y) {
    const double value = range * (1.0 - 2.0 * y / std::max(1, l.bar_height - 1));
    fill(image, x0, l.bar_top + y, l.bar_width, 1, potential_colour(value, range));
  }
  constexpr Rgb kInk{0, 0, 0};
  fill(image, x0 - 1, l.bar_top - 1, l.bar_width + 2, 1, kInk);  // outline
  fill(image, x0 - 1, l.bar_top + l.bar_height, l.bar_width + 2, 1, kInk);
  fill(image, x0 - 1, l.bar_top, 1, l.bar_height, kInk);
  fill(image, x0 + l.bar_width, l.bar_top, 1, l.bar_height, kInk);
  const auto texts = labels(range);
  for (int t = 0; t < 3; ++t) {
    const int y = l.bar_top + t * (l.bar_height - 1) / 2;
    fill(image, x0 + l.bar_width, y, l.tick, std::max(1, l.scale / 2), kInk);
    draw_text(image, texts[t], x0 + l.bar_width + l.tick + l.margin, y, l.scale);
  }
  draw_text(image, kUnit, x0, l.bar_top - l.margin - kGlyphHeight * l.scale / 2, l.scale);
}

}  // namespace dcsgrid::analysis::detail
