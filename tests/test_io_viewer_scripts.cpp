// The ChimeraX script, checked line by line against the commands and keywords it may use, as
// ChimeraX's documentation gives them (ChimeraX itself cannot be installed here); the formats and
// paths both scripts accept. PyMOL runs its script in tests/test_cli_render.cpp.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "dcsgrid/io/views/viewer_scripts.hpp"
#include "helpers.hpp"

using namespace dcsgrid;
namespace fs = std::filesystem;

namespace {

// Words of a command line; a "quoted" word is one word without its quotes, marked by a leading '\0'.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == ' ') {
      ++i;
    } else if (line[i] == '"') {
      const std::size_t end = line.find('"', i + 1);
      EXPECT_NE(end, std::string::npos) << "unclosed quote: " << line;
      out.push_back(std::string(1, '\0') + line.substr(i + 1, end - i - 1));
      i = end == std::string::npos ? line.size() : end + 1;
    } else {
      const std::size_t end = std::min(line.find(' ', i), line.size());
      out.push_back(line.substr(i, end - i));
      i = end;
    }
  }
  return out;
}

// A ChimeraX command: its name's words, what its positional arguments must look like, and its
// keywords with the pattern of their values.
struct Command {
  std::vector<std::string> positional;  // patterns
  std::map<std::string, std::string> keywords;
};
const std::string kSpec = "#[0-9]+", kNumber = "-?[0-9.]+(e[-+]?[0-9]+)?", kInteger = "[0-9]+";
const std::string kPath = "\\0/.*";  // quoted, absolute
const std::map<std::string, Command> kChimeraX = {
    {"close", {{}, {}}},
    {"open", {{kPath}, {{"format", "[a-z]+"}}}},
    {"volume", {{kSpec, "hide|show"}, {}}},
    {"surface", {{kSpec}, {}}},
    {"color electrostatic",
     {{kSpec}, {{"map", kSpec}, {"palette", "[a-z]+(:[a-z]+)+"}, {"range", kNumber + "," + kNumber}, {"offset", kNumber}}}},
    {"set", {{}, {{"bgColor", "[a-z]+"}}}},
    {"view", {{}, {}}},
    {"save", {{kPath}, {{"width", kInteger}, {"height", kInteger}, {"supersample", kInteger}}}},
};

// Empty when the line is a valid command of the table, else what is wrong.
std::string check_chimerax_line(const std::string& line) {
  std::vector<std::string> w = words(line);
  if (w.empty()) return "";
  std::string name = w[0];
  if (w.size() > 1 && kChimeraX.count(name + " " + w[1])) name += " " + w[1];
  const auto command = kChimeraX.find(name);
  if (command == kChimeraX.end()) return "unknown command '" + name + "'";
  std::size_t i = name.find(' ') == std::string::npos ? 1 : 2;
  for (const std::string& pattern : command->second.positional) {
    if (i >= w.size() || !std::regex_match(w[i], std::regex(pattern)))
      return "argument " + std::to_string(i) + " of " + name + " does not match " + pattern;
    ++i;
  }
  for (; i < w.size(); i += 2) {
    const auto keyword = command->second.keywords.find(w[i]);
    if (keyword == command->second.keywords.end()) return name + " has no keyword '" + w[i] + "'";
    if (i + 1 >= w.size() || !std::regex_match(w[i + 1], std::regex(keyword->second)))
      return "the value of " + w[i] + " does not match " + keyword->second;
  }
  return "";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

io::ViewerScript example(const fs::path& dir) {
  io::ViewerScript s;
  s.structure = dir / "protein.pqr";
  s.map = dir / "potential.dx";
  s.range = 2.5;
  s.picture = dir / "picture.png";
  return s;
}

}  // namespace

TEST(ViewerScripts, ChimeraXCommandsAndKeywords) {
  const fs::path dir = test::temp_dir("scripts_chimerax");
  io::write_chimerax_script(dir / "show.cxc", example(dir));
  EXPECT_EQ(test::listing(dir), std::vector<std::string>{"show.cxc"});
  std::istringstream text(slurp(dir / "show.cxc"));
  std::set<std::string> seen;
  std::string line;
  while (std::getline(text, line)) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_EQ(check_chimerax_line(line), "") << line;
    seen.insert(words(line)[0]);
  }
  EXPECT_EQ(seen, (std::set<std::string>{"close", "open", "volume", "surface", "color", "set", "view", "save"}));
  const std::string all = slurp(dir / "show.cxc");
  EXPECT_NE(all.find("open \"" + (dir / "protein.pqr").string() + "\"\nopen \"" + (dir / "potential.dx").string()),
            std::string::npos);
  EXPECT_NE(all.find("palette red:white:blue range -2.5,2.5"), std::string::npos) << all;
  // The checker itself refuses what ChimeraX would.
  EXPECT_NE(check_chimerax_line("color electrostatic #1 map #2 palette red:white:blue range -5"), "");
  EXPECT_NE(check_chimerax_line("color electrostatic #1 colormap #2"), "");
  EXPECT_NE(check_chimerax_line("open relative.pdb"), "");
}

TEST(ViewerScripts, PymolRampAndPaths) {
  const fs::path dir = test::temp_dir("scripts_pymol");
  io::ViewerScript s = example(dir);
  s.structure = dir / "odd, name \"x\".pdb";  // PyMOL's commands would split at the comma
  io::write_pymol_script(dir / "show.pml", s);
  const std::string all = slurp(dir / "show.pml");
  EXPECT_NE(all.find("ramp_new dcsgrid_ramp, dcsgrid_potential, [-2.5, 0, 2.5], [red, white, blue]"), std::string::npos);
  EXPECT_NE(all.find("/cmd.load(\"" + dir.string() + "/odd, name \\\"x\\\".pdb\", \"dcsgrid_molecule\")"),
            std::string::npos) << all;
  EXPECT_NE(all.find("orient dcsgrid_molecule"), std::string::npos);  // no view given: PyMOL's own
  EXPECT_NE(all.find("/cmd.png(\"" + (dir / "picture.png").string() + "\", width=1024, height=768, ray=1)"),
            std::string::npos);
  // Python reads the load line's path back as it was.
  const std::string python = test::python_with("ast");
  if (!python.empty()) {
    const auto r = test::run_command(python + " -c 'import ast,sys; line=open(sys.argv[1]).read().split(\"/cmd.load(\")[1]; "
                                     "print(ast.literal_eval(line.split(\", \\\"dcsgrid_molecule\")[0]))' '" +
                                     (dir / "show.pml").string() + "'");
    EXPECT_EQ(r.output, s.structure.string() + "\n");
  }
}

TEST(ViewerScripts, MapsTheProgramsCannotReadAreRefused) {
  const fs::path dir = test::temp_dir("scripts_refused");
  io::ViewerScript s = example(dir);
  s.map = dir / "potential.h5";
  const std::string message = test::error_message([&] { io::write_pymol_script(dir / "a.pml", s); });
  EXPECT_NE(message.find("potential.h5: PyMOL cannot read HDF5"), std::string::npos) << message;
  EXPECT_NE(message.find("-o map.dx"), std::string::npos) << message;
  s.map = dir / "potential.dx.gz";  // PyMOL opens gzipped DX, ChimeraX does not
  io::write_pymol_script(dir / "a.pml", s);
  EXPECT_NE(test::error_message([&] { io::write_chimerax_script(dir / "a.cxc", s); }).find("ChimeraX cannot read"),
            std::string::npos);
  s = example(dir);
  s.range = -1;
  EXPECT_NE(test::error_message([&] { io::write_pymol_script(dir / "b.pml", s); }).find("positive"), std::string::npos);
  s = example(dir);
  s.structure = dir / "quote\".pdb";
  EXPECT_NE(test::error_message([&] { io::write_chimerax_script(dir / "b.cxc", s); }).find("double quote"),
            std::string::npos);
  EXPECT_EQ(test::listing(dir), std::vector<std::string>{"a.pml"});
}
