// XYZ with a charge column. Either frames of
//   atom count / comment line / count lines of "element x y z charge"
// (several frames are several models), or, without that header, plain "x y z charge" lines
// (blank lines and '#' comments allowed). Atom lines may have the element or not in both forms.
#include <charconv>
#include <exception>
#include <string>

#include "io/structure/formats.hpp"

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
  parse_fields(file, line_number, numbers, kColumns, 4, v);
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

// An atom line holds at least "x y z q" and its line end: 8 bytes.
constexpr std::size_t kMinAtomLineBytes = 8;

// The atom lines of one frame: `text` starts at line `first_line`.
struct Block {
  std::string_view text;
  std::size_t first_line = 0;
};

// Every line of `text` that is not blank or a comment is an atom (skip_blank), or every line is.
// Returns the number of lines.
std::size_t parse_atom_lines(const TextFile& file, std::string_view text, std::size_t first_line,
                             bool skip_blank, AtomSet& atoms,
                             std::vector<std::size_t>& atom_lines) {
  Lines lines(text);
  while (lines.next())
    if (!skip_blank || !is_blank_or_comment(lines.line())) {
      parse_xyz_atom(file, lines.line(), first_line + lines.number() - 1, atoms);
      atom_lines.push_back(first_line + lines.number() - 1);
    }
  return lines.number();
}

// parse_atom_lines in parallel pieces; an error sends the text through the serial pass, which
// names the first bad line.
void parse_atom_lines_parallel(const TextFile& file, const Block& block, bool skip_blank,
                               int threads, Structure& out) {
  constexpr std::size_t kBytesPerAtom = 40;
  const std::size_t count = chunk_count(block.text.size(), threads);
  if (count > 1) {
    auto pieces =
        scan_chunks(block.text, count, kBytesPerAtom, [&](std::string_view piece, ChunkAtoms& c) {
          c.line_count = parse_atom_lines(file, piece, 1, skip_blank, c.atoms, c.lines);
        });
    if (!any_failed(pieces)) return join_atoms(pieces, block.first_line, out.atoms, out.lines);
  }
  reserve_atoms(out.atoms, out.lines, block.text.size() / kBytesPerAtom + 1);
  parse_atom_lines(file, block.text, block.first_line, skip_blank, out.atoms, out.lines);
}

// The atom blocks of the frames kept (model 0: all), found by counting lines. A malformed frame
// stops the walk: its error is kept in `error` and thrown once the blocks before it are parsed,
// so that the first error in file order is the one reported.
std::vector<Block> frame_blocks(const TextFile& file, int model, int& frames,
                                std::exception_ptr& error) {
  std::vector<Block> blocks;
  Lines lines(file.data);
  auto offset = [&] { return std::size_t(lines.line().data() - file.data.data()); };
  auto next_line_start = [&] {  // just past the current line's end
    const std::size_t end = file.data.find('\n', offset() + lines.line().size());
    return end == std::string::npos ? file.data.size() : end + 1;
  };
  try {
    while (lines.next()) {
      if (is_blank_or_comment(lines.line())) continue;  // between frames or at the end
      std::size_t count = 0;
      if (!parse_count(lines.line(), count))
        throw InputError(file.name, lines.number(),
                         "expected the atom count of frame " + std::to_string(frames + 1) +
                             ", found '" + std::string(trim(lines.line())) + "'");
      ++frames;
      const std::size_t rest = file.data.size() - offset() - lines.line().size();
      if (count > rest / kMinAtomLineBytes)
        throw InputError(file.name, lines.number(),
                         "frame " + std::to_string(frames) + " declares " + std::to_string(count) +
                             " atoms, more than the remaining " + std::to_string(rest) +
                             " bytes of the file can hold");
      const bool keep = model == 0 || frames == model;
      if (!lines.next())
        throw InputError(file.name, lines.number(),
                         "file ends before the comment line of frame " + std::to_string(frames));
      const std::size_t begin = next_line_start(), first_line = lines.number() + 1;
      for (std::size_t i = 0; i < count; ++i) {
        if (!lines.next()) {
          if (keep) blocks.push_back({std::string_view(file.data).substr(begin), first_line});
          throw InputError(file.name, lines.number(),
                           "file ends after " + std::to_string(i) + " of the " +
                               std::to_string(count) + " atoms of frame " + std::to_string(frames));
        }
      }
      const std::size_t end = count == 0 ? begin : next_line_start();
      if (keep)
        blocks.push_back({std::string_view(file.data).substr(begin, end - begin), first_line});
    }
  } catch (const InputError&) {
    error = std::current_exception();
  }
  return blocks;
}

std::vector<Structure> read_frames(const TextFile& file, int model, int threads) {
  int frames = 0;
  std::exception_ptr error;
  std::vector<Block> blocks = frame_blocks(file, model, frames, error);
  std::vector<Structure> models;
  for (const Block& b : blocks)
    parse_atom_lines_parallel(file, b, false, threads, models.emplace_back());
  if (error) std::rethrow_exception(error);
  finish_models(file, model, frames, models);
  return models;
}

std::vector<Structure> read_plain(const TextFile& file, int model, int threads) {
  std::vector<Structure> models(1);
  parse_atom_lines_parallel(file, {file.data, 1}, true, threads, models[0]);
  if (models[0].atoms.empty()) models.clear();
  finish_models(file, model, 1, models);
  return models;
}

}  // namespace

std::vector<Structure> read_xyz(const TextFile& file, int model, int threads) {
  Lines lines(file.data);
  while (lines.next()) {
    if (is_blank_or_comment(lines.line())) continue;
    std::size_t count = 0;
    return parse_count(lines.line(), count) ? read_frames(file, model, threads)
                                            : read_plain(file, model, threads);
  }
  std::vector<Structure> none;  // nothing but blanks and comments
  finish_models(file, model, 0, none);
  return none;
}

}  // namespace dcsgrid::io::detail
