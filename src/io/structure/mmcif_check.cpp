// gemmi turns an unreadable mmCIF coordinate into NaN without saying where it was, and wraps a
// residue number beyond 32 bits around (moving atoms, and their charges, between residues); this
// pass walks the file's values with their line numbers to report a bad one exactly.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <string>

#include "io/structure/formats.hpp"

namespace dcsgrid::io::detail {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// CIF tokens (bare, 'quoted', "quoted", ;text fields;) with the line each starts on.
class CifTokens {
 public:
  explicit CifTokens(std::string_view text) : text_(text), pos_(0), line_(1) {}

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

 private:
  std::string_view text_;
  std::size_t pos_, line_;
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

// The columns checked in the atoms' loop: coordinates (float32 numbers) and the ones gemmi reads
// as int (residue numbers, the serial number, the formal charge, the model number), named in the
// message.
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

// Where each checked tag is in the loop's columns (tags.size() when absent); empty when a
// coordinate is missing (not the atoms' loop; gemmi says what is wrong).
std::vector<std::size_t> checked_columns(const std::vector<std::string_view>& tags) {
  std::vector<std::size_t> columns;
  for (const Checked& c : kChecked) {
    const auto it = std::find(tags.begin(), tags.end(), c.tag);
    if (it == tags.end() && !c.integer) return {};
    columns.push_back(std::size_t(it - tags.begin()));
  }
  return columns;
}

}  // namespace

// One pass over every token, as gemmi reads them: a loop's header is its tags (every tag is a
// column, whatever its category and however many share a line), then its values row by row. The
// atoms' loop is the first whose tags include the three coordinates (a mutated loop of _atom_site.
// tags comes first in some files). Besides its checked columns, every unquoted value in the file
// must not start with an integer beyond int: gemmi reads integers from many categories (sequence
// numbers of _entity_poly_seq, _struct_conf, _struct_ref_seq, ...) and its parser overflows on
// the leading digits of such a token (undefined behaviour, a wrong number in practice).
std::vector<RecordPosition> check_mmcif_atom_site(const TextFile& file) {
  CifTokens tokens(file.data);
  std::string_view token, pair_tag;
  std::size_t line = 0, index = 0;
  bool quoted = false, in_header = false, in_values = false, atoms_done = false;
  std::vector<std::string_view> tags;
  std::vector<std::size_t> columns;  // of the atoms' loop while in it, else empty
  std::vector<RecordPosition> positions;
  RecordPosition row{};
  while (tokens.next(token, line, quoted)) {
    if (!quoted && is_keyword(token)) {
      const bool loop = starts_with_ignoring_case(token, "loop_");
      if (in_values && !columns.empty()) atoms_done = true;
      if (token.starts_with('_') && in_header) {
        tags.push_back(token);
        continue;
      }
      in_values = false;
      columns.clear();
      in_header = loop;
      if (loop) tags.clear();
      pair_tag = token.starts_with('_') ? token : std::string_view();
      continue;
    }
    if (in_header) {  // the loop's first value (a loop without tags is gemmi's to refuse)
      in_header = false;
      in_values = !tags.empty();
      index = 0;
      if (in_values && !atoms_done) columns = checked_columns(tags);
    }
    const std::string_view tag = in_values ? tags[index % tags.size()] : pair_tag;
    const std::size_t col = in_values ? index % tags.size() : 0;
    for (std::size_t a = 0; a < columns.size(); ++a) {
      if (col != columns[a]) continue;
      const Checked& c = kChecked[a];
      if (c.integer) {
        if (!fits_int(token))
          throw InputError(file.name, line,
                           std::string(c.tag) + " is beyond the 32-bit range of " + c.integer +
                               ": '" + std::string(token) + "'");
        continue;
      }
      double value;
      if (const auto status = parse_number(token, value); status != NumberStatus::ok)
        throw InputError(file.name, line, describe_bad_number(std::string(c.tag), token, status));
      (a == 0 ? row.x : a == 1 ? row.y : row.z) = float(value);
      if (a == 0) row.line = line;
    }
    if (!quoted && !fits_int(token))
      throw InputError(file.name, line,
                       (tag.empty() ? std::string("a value") : std::string(tag)) +
                           " starts with an integer beyond the 32-bit range: '" + std::string(token) + "'");
    if (!columns.empty() && col + 1 == tags.size()) positions.push_back(row);
    if (in_values) ++index;
  }
  return positions;
}

}  // namespace dcsgrid::io::detail
