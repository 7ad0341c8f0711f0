// A minimal XML reader for pdb2pqr's data files (.names, AA.xml, NA.xml, PATCHES.xml): elements,
// text and comments only, which is all those files use. Attributes are skipped.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dcsgrid::io::detail {

struct XmlNode {
  std::string tag;
  std::string text;  // character data directly inside this element, trimmed
  std::size_t line = 0;
  std::vector<XmlNode> children;

  // Text of the first child named tag, or empty.
  std::string child_text(std::string_view tag) const;
  // Texts of all children named tag, in order.
  std::vector<std::string> children_text(std::string_view tag) const;
};

// Parses a whole document and returns its root element. Throws InputError(file, line, problem).
XmlNode parse_xml(std::string_view text, const std::string& file);

}  // namespace dcsgrid::io::detail
