#include "io/charges/forcefield_xml.hpp"

#include <algorithm>

#include "dcsgrid/core/error.hpp"

namespace dcsgrid::io::detail {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Replaces the five predefined entities; pdb2pqr's files use none, but a user's might.
std::string decode_entities(std::string_view s) {
  static constexpr std::pair<std::string_view, char> kEntities[] = {
      {"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&apos;", '\''}, {"&quot;", '"'}};
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    bool replaced = false;
    if (s[i] == '&')
      for (const auto& [name, c] : kEntities)
        if (s.substr(i, name.size()) == name) {
          out += c;
          i += name.size();
          replaced = true;
          break;
        }
    if (!replaced) out += s[i++];
  }
  return out;
}

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  XmlNode document() {
    XmlNode root;
    bool have_root = false;
    while (skip_misc(), pos_ < text_.size()) {
      if (have_root) fail("content after the root element");
      root = element();
      have_root = true;
    }
    if (!have_root) fail("no XML element found");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw InputError(file_, line_at(pos_), problem);
  }
  // Line of a position; positions are asked for in increasing order, so count on from the last.
  std::size_t line_at(std::size_t pos) const {
    pos = std::min(pos, text_.size());
    if (pos < counted_to_) counted_to_ = 0, lines_before_ = 0;
    lines_before_ += std::count(text_.begin() + counted_to_, text_.begin() + pos, '\n');
    counted_to_ = pos;
    return 1 + lines_before_;
  }
  bool starts_with(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }

  // Skips to just after `end`, failing if it never comes.
  void skip_past(std::string_view end, const char* what) {
    const auto found = text_.find(end, pos_);
    if (found == std::string_view::npos) fail(std::string("unterminated ") + what);
    pos_ = found + end.size();
  }

  // Whitespace, comments, <?...?> and <!DOCTYPE ...> between elements.
  void skip_misc() {
    for (;;) {
      while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
      if (starts_with("<!--"))
        skip_past("-->", "comment");
      else if (starts_with("<?"))
        skip_past("?>", "processing instruction");
      else if (starts_with("<!"))
        skip_past(">", "declaration");
      else
        return;
    }
  }

  std::string name() {
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_]) && text_[pos_] != '>' &&
           text_[pos_] != '/')
      ++pos_;
    if (pos_ == begin) fail("missing element name");
    return std::string(text_.substr(begin, pos_ - begin));
  }

  XmlNode element() {
    if (!starts_with("<")) fail("expected an element");
    XmlNode node;
    node.line = line_at(pos_);
    ++pos_;
    node.tag = name();
    const auto close = text_.find('>', pos_);  // attributes are skipped
    if (close == std::string_view::npos) fail("unterminated tag <" + node.tag + ">");
    const bool empty_element = text_[close - 1] == '/';
    pos_ = close + 1;
    if (empty_element) return node;

    std::string text;
    for (;;) {
      if (pos_ >= text_.size()) fail("element <" + node.tag + "> is not closed");
      if (starts_with("<!--")) {
        skip_past("-->", "comment");
      } else if (starts_with("</")) {
        pos_ += 2;
        const std::string closing = name();
        if (closing != node.tag)
          fail("</" + closing + "> closes <" + node.tag + "> opened on line " +
               std::to_string(node.line));
        skip_past(">", "closing tag");
        node.text = decode_entities(trim(text));
        return node;
      } else if (starts_with("<")) {
        node.children.push_back(element());
      } else {
        const auto next = text_.find('<', pos_);
        const auto end = next == std::string_view::npos ? text_.size() : next;
        text.append(text_.substr(pos_, end - pos_));
        pos_ = end;
      }
    }
  }

  std::string_view text_;
  const std::string& file_;
  std::size_t pos_ = 0;
  mutable std::size_t counted_to_ = 0, lines_before_ = 0;
};

}  // namespace

std::string XmlNode::child_text(std::string_view wanted) const {
  for (const XmlNode& c : children)
    if (c.tag == wanted) return c.text;
  return {};
}

std::vector<std::string> XmlNode::children_text(std::string_view wanted) const {
  std::vector<std::string> out;
  for (const XmlNode& c : children)
    if (c.tag == wanted) out.push_back(c.text);
  return out;
}

XmlNode parse_xml(std::string_view text, const std::string& file) {
  return Parser(text, file).document();
}

}  // namespace dcsgrid::io::detail
