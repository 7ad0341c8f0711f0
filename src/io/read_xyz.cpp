// XYZ with a charge column. Either frames of
//   atom count / comment line / count lines of "element x y z charge"
// (several frames are several models), or, without that header, plain "x y z charge" lines
// (blank lines and '#' comments allowed). Atom lines may have the element or not in both forms.
#include <charconv>
#include <string>

#include "read_formats.hpp"

namespace dcsgrid::io::detail {
namespace {

constexpr const char* kColumns[4] = {"x coordinate", "y coordinate", "z coordinate", "charge"};

void parse_xyz_atom(const TextFile& file, std::string_view line, std::size_t line_number,
                    AtomSet& atoms) {
  std::string_view fields[6];
  const std::size_t n = split_fields(line, fields, 6);
  if (n != 4 && n != 5)
    throw InputError(file.name, line_number,
                     "expected 'element x y z charge' or 'x y z charge', found " +
                         std::to_string(n) + " fields");
  const std::string_view* numbers = fields + (n - 4);
  double v[4];
  for (int c = 0; c < 4; ++c) {
    const NumberStatus status = parse_number(numbers[c], v[c]);
    if (status != NumberStatus::ok)
      throw InputError(file.name, line_number,
                       describe_bad_number(kColumns[c], numbers[c], status));
  }
  atoms.push_back(v[0], v[1], v[2], v[3]);
}

// The whole line as a non-negative atom count.
bool parse_count(std::string_view line, std::size_t& count) {
  line = trim(line);
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), count);
  return !line.empty() && ec == std::errc() && end == line.data() + line.size();
}

bool is_blank_or_comment(std::string_view line) {
  line = trim(line);
  return line.empty() || line.front() == '#';
}

std::vector<Structure> read_frames(const TextFile& file, int model) {
  std::vector<Structure> models;
  int frames = 0;
  Lines lines(file.data);
  while (lines.next()) {
    if (is_blank_or_comment(lines.line())) continue;  // between frames or at the end
    std::size_t count = 0;
    if (!parse_count(lines.line(), count))
      throw InputError(file.name, lines.number(),
                       "expected the atom count of frame " + std::to_string(frames + 1) +
                           ", found '" + std::string(trim(lines.line())) + "'");
    ++frames;
    const bool keep = model == 0 || frames == model;
    if (keep) {
      models.emplace_back();
      models.back().atoms.reserve(count);
    }
    if (!lines.next())
      throw InputError(file.name, lines.number(),
                       "file ends before the comment line of frame " + std::to_string(frames));
    for (std::size_t i = 0; i < count; ++i) {
      if (!lines.next())
        throw InputError(file.name, lines.number(),
                         "file ends after " + std::to_string(i) + " of the " +
                             std::to_string(count) + " atoms of frame " + std::to_string(frames));
      if (keep) parse_xyz_atom(file, lines.line(), lines.number(), models.back().atoms);
    }
  }
  finish_models(file, model, frames, models);
  return models;
}

std::vector<Structure> read_plain(const TextFile& file, int model) {
  std::vector<Structure> models(1);
  models[0].atoms.reserve(file.data.size() / 40);
  Lines lines(file.data);
  while (lines.next())
    if (!is_blank_or_comment(lines.line()))
      parse_xyz_atom(file, lines.line(), lines.number(), models[0].atoms);
  if (models[0].atoms.empty()) models.clear();
  finish_models(file, model, 1, models);
  return models;
}

}  // namespace

std::vector<Structure> read_xyz(const TextFile& file, int model) {
  Lines lines(file.data);
  while (lines.next()) {
    if (is_blank_or_comment(lines.line())) continue;
    std::size_t count = 0;
    return parse_count(lines.line(), count) ? read_frames(file, model) : read_plain(file, model);
  }
  std::vector<Structure> none;  // nothing but blanks and comments
  finish_models(file, model, 0, none);
  return none;
}

}  // namespace dcsgrid::io::detail
