// printable(): what messages echo of user-controlled text (issue 35 group 9).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "dcsgrid/core/error.hpp"

using dcsgrid::printable;

TEST(Printable, ControlBytesAreEscapedAndTextKept) {
  EXPECT_EQ(printable("plain name.pqr"), "plain name.pqr");
  EXPECT_EQ(printable("a\x1b[31mb"), "a\\x1B[31mb");
  EXPECT_EQ(printable("line\nbreak\ttab\x7f"), "line\\x0Abreak\\x09tab\\x7F");
  EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x84\xab \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x84\xab \xf0\x9f\x98\x80");
  // C1 controls (U+009B is a CSI to some terminals), lone and overlong bytes, surrogates, cut
  // sequences.
  EXPECT_EQ(printable("\xc2\x9b" "1m"), "\\xC2\\x9B1m");
  EXPECT_EQ(printable("\x9b" "1m"), "\\x9B1m");
  EXPECT_EQ(printable("\xc0\xaf"), "\\xC0\\xAF");
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xED\\xA0\\x80");
  EXPECT_EQ(printable("\xe2\x84"), "\\xE2\\x84");
}

TEST(Printable, LongTextIsCutSayingItsLength) {
  EXPECT_EQ(printable(std::string(1000, 'a'), 10), "aaaaaaaaaa... (1000 bytes in all)");
  EXPECT_EQ(printable(std::string(256, 'a')), std::string(256, 'a'));
  EXPECT_EQ(printable(std::string(257, 'a')).size(), 256u + std::string("... (257 bytes in all)").size());
}

TEST(Printable, EscapingTwiceChangesNothingMoreAndLeavesNoControlByte) {
  std::mt19937 bits(9);
  for (int round = 0; round < 200; ++round) {
    std::string text(64, '\0');
    for (char& c : text) c = char(bits() & 0xFF);
    const std::string once = printable(text, 1 << 20);
    EXPECT_EQ(printable(once, 1 << 20), once);
    for (const char c : once) EXPECT_GE((unsigned char)c, 0x20);
    for (const char c : once) EXPECT_NE((unsigned char)c, 0x7F);
  }
}
