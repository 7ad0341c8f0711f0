// The colour bar of a rendered picture (private to the analysis layer): its strip at the right of
// the picture and its drawing with a built-in 5 × 7 bitmap font.
#pragma once
#include "dcsgrid/io/views/png.hpp"

namespace dcsgrid::analysis::detail {

// Width in pixels of the strip the colour bar and its labels take at the right of the picture.
int colour_bar_strip(int width, int height, double range);
// Draws the bar (blue +range at the top, white 0, red −range at the bottom), its ticks and the
// labels "+range", "0", "−range" and "kT/e", opaque black on whatever background.
void draw_colour_bar(io::Image& image, double range);

}  // namespace dcsgrid::analysis::detail
