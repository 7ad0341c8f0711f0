#include "dcsgrid/core/error.hpp"

#include <algorithm>
#include <cstdio>

namespace dcsgrid {
namespace {

bool continuation(std::string_view text, std::size_t i) {
  return i < text.size() && ((unsigned char)text[i] & 0xC0) == 0x80;
}

// Bytes of the UTF-8 character at text[i] when it is a valid, printable one of two to four
// bytes (no overlong form, no surrogate, at most U+10FFFF, not a C1 control); 0 otherwise.
std::size_t printable_utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return (unsigned char)text[i + k]; };
  const unsigned char lead = byte(0);
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
    if (lead == 0xC2) low = 0xA0;  // U+0080..U+009F are the C1 controls (0x9B is a CSI)
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size() || byte(1) < low || byte(1) > high) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (!continuation(text, i + k)) return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 16);
  std::size_t i = 0;
  while (i < text.size()) {
    if (i >= max_bytes) {
      out += "... (" + std::to_string(text.size()) + " bytes in all)";
      break;
    }
    const unsigned char c = (unsigned char)text[i];
    if (c >= 0x20 && c < 0x7F) {
      out += char(c);
      ++i;
    } else if (const std::size_t n = printable_utf8_length(text, i); n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      char code[8];
      std::snprintf(code, sizeof code, "\\x%02X", unsigned(c));
      out += code;
      ++i;
    }
  }
  return out;
}

}  // namespace dcsgrid
