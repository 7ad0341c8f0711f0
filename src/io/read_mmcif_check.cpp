// gemmi turns an unreadable mmCIF coordinate into NaN without saying where it was, and wraps a
// residue number beyond 32 bits around (moving atoms, and their charges, between residues); this
// pass walks the _atom_site loop's values with their line numbers to report a bad one exactly.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string>

#include "read_formats.hpp"

namespace dcsgrid::io::detail {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// CIF tokens (bare, 'quoted', "quoted", ;text fields;) with the line each starts on.
class CifTokens {
 public:
  CifTokens(std::string_view text, std::size_t pos, std::size_t line)
      : text_(text), pos_(pos), line_(line) {}

  // False at the end of the text. quoted: the token was 'quoted', "quoted" or a ;text field; (a
  // value even where it looks like a keyword, and possibly empty).
  bool next(std::string_view& token, std::size_t& line, bool& quoted) {
    for (;;) {
      while (pos_ < text_.size() && is_space(text_[pos_])) {
        if (text_[pos_] == '\n') ++line_;
        ++pos_;
      }
      if (pos_ >= text_.size()) return false;
      if (text_[pos_] != '#') break;
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    }
    line = line_;
    start_ = pos_;
    const char c = text_[pos_];
    quoted = c == '\'' || c == '"' || (c == ';' && (pos_ == 0 || text_[pos_ - 1] == '\n'));
    const bool line_start = pos_ == 0 || text_[pos_ - 1] == '\n';
    std::size_t begin = pos_, end;
    if (c == ';' && line_start) {  // text field: up to a line that starts with ';'
      auto close = text_.find("\n;", pos_);
      if (close == std::string_view::npos) close = text_.size();
      end = close;
      for (std::size_t i = pos_; i < close; ++i) line_ += text_[i] == '\n';
      pos_ = std::min(close + 2, text_.size());
      if (close < text_.size()) ++line_;
      token = text_.substr(begin + 1, end - begin - 1);
      return true;
    }
    if (c == '\'' || c == '"') {  // quoted: the quote must be followed by a blank to close
      std::size_t i = pos_ + 1;
      while (i < text_.size() && text_[i] != '\n' &&
             !(text_[i] == c && (i + 1 == text_.size() || is_space(text_[i + 1]))))
        ++i;
      token = text_.substr(pos_ + 1, i - pos_ - 1);
      pos_ = i < text_.size() && text_[i] == c ? i + 1 : i;
      return true;
    }
    while (pos_ < text_.size() && !is_space(text_[pos_])) ++pos_;
    token = text_.substr(begin, pos_ - begin);
    return true;
  }
  // Where the last token began (its quote or ';' included): a CifTokens made at this position
  // and line reads it again.
  std::size_t start() const { return start_; }

 private:
  std::string_view text_;
  std::size_t pos_, line_, start_ = 0;
};

bool starts_with_ignoring_case(std::string_view token, std::string_view lower) {
  if (token.size() < lower.size()) return false;
  for (std::size_t i = 0; i < lower.size(); ++i)
    if (std::tolower((unsigned char)token[i]) != lower[i]) return false;
  return true;
}

bool is_keyword(std::string_view token) {
  return token.starts_with('_') || starts_with_ignoring_case(token, "loop_") ||
         starts_with_ignoring_case(token, "data_") || starts_with_ignoring_case(token, "save_") ||
         starts_with_ignoring_case(token, "global_") || starts_with_ignoring_case(token, "stop_");
}

// False when the token starts with an integer (an optional sign and digits) that int cannot hold:
// gemmi's parser accumulates the leading digits whatever follows them (an insertion code, or
// junk), and overflows there; anything else is gemmi's to judge.
bool fits_int(std::string_view token) {
  const std::size_t sign = token.starts_with('-') || token.starts_with('+') ? 1 : 0;
  std::size_t end = sign;
  while (end < token.size() && std::isdigit((unsigned char)token[end])) ++end;
  if (end == sign) return true;
  const std::size_t plus = token.starts_with('+') ? 1 : 0;  // from_chars takes no '+'
  const std::string_view number = token.substr(plus, end - plus);
  int value;
  return std::from_chars(number.data(), number.data() + number.size(), value).ec == std::errc();
}

}  // namespace

namespace {

// The tags of the first loop of _atom_site. tags that has the coordinates, and where its values
// begin.
struct AtomSiteLoop {
  std::vector<std::string_view> tags;
  std::size_t pos = 0, line = 1;
};

// The loop gemmi reads the atoms from: the first whose tags include _atom_site.Cartn_x (another
// loop of _atom_site. tags, a mutated one, comes first in some files). Its header is read token
// by token, as gemmi reads it: every tag counts as a column, whatever its category and however
// many share a line, so the columns line up with gemmi's.
AtomSiteLoop find_atom_site_loop(std::string_view text) {
  AtomSiteLoop loop;
  CifTokens tokens(text, 0, 1);
  std::string_view token;
  std::size_t line = 0;
  bool quoted = false, in_header = false;
  while (tokens.next(token, line, quoted)) {
    if (!quoted && starts_with_ignoring_case(token, "loop_")) {
      in_header = true;
      loop.tags.clear();
      continue;
    }
    if (!in_header) continue;
    if (!quoted && token.starts_with('_')) {
      loop.tags.push_back(token);
      continue;
    }
    in_header = false;  // the loop's first value
    if (std::find(loop.tags.begin(), loop.tags.end(), "_atom_site.Cartn_x") != loop.tags.end()) {
      loop.pos = tokens.start();
      loop.line = line;
      return loop;
    }
    loop.tags.clear();
  }
  loop.tags.clear();  // a loop header with no values
  return loop;
}

// The columns checked: coordinates (float32 numbers) and the ones gemmi reads as int (residue
// numbers, the serial number, the formal charge, the model number), whose overflow is undefined
// in gemmi's parser.
struct Checked {
  std::string_view tag;
  const char* integer;  // what the integer is; nullptr for a coordinate
};
constexpr std::array<Checked, 8> kChecked = {{{"_atom_site.Cartn_x", nullptr},
                                              {"_atom_site.Cartn_y", nullptr},
                                              {"_atom_site.Cartn_z", nullptr},
                                              {"_atom_site.auth_seq_id", "residue numbers"},
                                              {"_atom_site.label_seq_id", "residue numbers"},
                                              {"_atom_site.id", "serial numbers"},
                                              {"_atom_site.pdbx_formal_charge", "charges"},
                                              {"_atom_site.pdbx_PDB_model_num", "model numbers"}}};

void check_integer(const TextFile& file, const Checked& c, std::string_view token, std::size_t line) {
  if (!fits_int(token))
    throw InputError(file.name, line,
                     std::string(c.tag) + " is beyond the 32-bit range of " + c.integer + ": '" +
                         std::string(token) + "'");
}

}  // namespace

std::vector<RecordPosition> check_mmcif_atom_site(const TextFile& file) {
  const AtomSiteLoop loop = find_atom_site_loop(file.data);
  const std::size_t width = loop.tags.size();
  std::array<std::size_t, kChecked.size()> column;
  for (std::size_t a = 0; a < kChecked.size(); ++a) {
    const auto it = std::find(loop.tags.begin(), loop.tags.end(), kChecked[a].tag);
    if (it == loop.tags.end() && !kChecked[a].integer) return {};  // gemmi says what
    column[a] = std::size_t(it - loop.tags.begin());  // width (never matched) when absent
  }
  std::vector<RecordPosition> positions;
  CifTokens tokens(file.data, loop.pos, loop.line);
  std::string_view token;
  std::size_t token_line = 0;
  bool quoted = false;
  RecordPosition row{};
  for (std::size_t index = 0; tokens.next(token, token_line, quoted); ++index) {
    if (!quoted && is_keyword(token)) break;  // the loop has ended
    const std::size_t col = index % width;
    for (std::size_t a = 0; a < kChecked.size(); ++a) {
      if (col != column[a]) continue;
      if (kChecked[a].integer) {
        check_integer(file, kChecked[a], token, token_line);
        continue;
      }
      double value;
      if (const auto status = parse_number(token, value); status != NumberStatus::ok)
        throw InputError(file.name, token_line,
                         describe_bad_number(std::string(kChecked[a].tag), token, status));
      (a == 0 ? row.x : a == 1 ? row.y : row.z) = float(value);
      if (a == 0) row.line = token_line;
    }
    if (col + 1 == width) positions.push_back(row);
  }
  return positions;
}

}  // namespace dcsgrid::io::detail
