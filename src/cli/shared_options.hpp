// Option groups that several commands share (the main job and batch most of them), so they read
// the same flags with the same checks, defaults and help, into the app layer's typed settings.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dcsgrid/app/settings.hpp"
#include "dcsgrid/io/structure/read.hpp"

namespace dcsgrid::cli {

// A CLI11 check that runs a parser on the option's text and reports what it throws as a usage
// error.
template <typename Parse>
CLI::Validator parses_with(Parse parse, const std::string& description) {
  return CLI::Validator(
      [parse](std::string& value) {
        try {
          parse(value);
          return std::string();
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
      },
      description);
}

// A check for a floating option: a finite number within [lo, hi]. CLI11's Range lets NaN through
// (every comparison with it is false), so `--grid-tolerance nan` had skipped the grid check; every
// floating option of every command takes this check instead.
CLI::Validator finite_number(double lo = -std::numeric_limits<double>::infinity(),
                             double hi = std::numeric_limits<double>::infinity());

// --json, -v/--verbose and -q/--quiet, which every command takes alike: --json prints the result
// as JSON on stdout; -q keeps only warnings and errors of the messages on stderr (summaries,
// "wrote" lines, progress), never the result on stdout.
struct MessageOptions {
  bool json = false;
  int verbose = 0;
  bool quiet = false;
};
inline const std::string kMessageGroup = "Output and messages";
void add_message_options(CLI::App& app, MessageOptions& o, const std::string& json_help);
// The command line parsed (then `after`, parse_command_line) and logging set from the parsed -v and
// -q. Returns the exit status when the command stops here (--help, a usage error).
std::optional<int> parse_and_set_up_logging(CLI::App& app, int argc, char** argv, const MessageOptions& messages,
                                            const std::function<void()>& after = {});
// The help's examples (its footer) and its option column, wide for the commands with many options.
void set_help_layout(CLI::App& app, const char* examples);

// A positive count up to INT_MAX (--model and the like): CLI11's PositiveNumber would print DBL_MAX,
// all 309 digits of it, as the bound in its message.
inline const CLI::Range kPositiveCount(1, std::numeric_limits<int>::max(), "POSITIVE");

// --forcefield, --forcefield-dir, --unknown (error: list them; zero: warn, charge 0).
void add_charge_options(CLI::App& app, io::ReadOptions& read, const std::string& unknown_help);

// --format: the input's format whatever its name says, checked by io::format_from_name; `help`
// ends the option's help (where standard input is read, that it needs the option).
void add_format_option(CLI::App& app, std::string& format, const std::string& help = "");

// --spacing, --padding, and an explicit box: --center with --size, or --origin with --dims.
struct GridOptions {
  double spacing = 0.5, padding = 10.0;
  std::vector<double> center, size, origin;
  std::vector<std::int64_t> dims;
  std::string layout = "box";  // --grid: box or cell
  app::GridChoice choice() const;
};
void add_grid_options(CLI::App& app, GridOptions& grid, const std::string& group,
                      const std::string& padding_help);

// Physics (--dielectric, --ddd, --ionic-strength, --temperature, --min-distance, --units), method
// (--method, --cutoff, --cutoff-form, --switch-start) and hardware (--device, --gpus, --threads)
// options, in text form until settings() parses them.
struct ComputeOptions {
  Physics physics;
  std::string units = "kT/e";
  std::string preset;  // pymol, apbs, chimerax, vmd, apbs-pb: their ε, T, salt and units where not given
  std::string method = "direct";
  std::string cutoff_form = "shifted";
  engine::CutoffOptions cutoff;
  engine::MsmOptions msm;
  engine::PeriodicOptions periodic;
  engine::PbOptions pb;
  std::string surface;     // --surface mol|smol|spl2|spl4; empty: pb's default
  std::string charge_map;  // --charge-map spl0|spl2|spl4; empty: pb's default
  std::vector<std::string> ions;  // --ion CHARGE,CONC,RADIUS
  std::string boundary;         // --boundary zero|sdh|mdh|focus; empty: focus when the grid is tight
  std::string coarse_boundary;  // --coarse-boundary zero|sdh|mdh: the coarsest grid's bcfl
  std::vector<double> coarse_size;  // --coarse-size X,Y,Z (Å)
  std::string cell;  // --cell A,B,C[,ALPHA,BETA,GAMMA]; empty: the input's own
  std::string device = "auto";
  std::string gpus = "all";
  int threads = 0;
  bool allow_non_finite = false;
  // Throws Error for a bad method list or GPU list, then validates the settings.
  app::ComputeSettings settings() const;
};
inline const std::string kMethodGroup = "Method";
inline const std::string kHardwareGroup = "Hardware";
// --method's help, from the method descriptions: one method, or (lists) a list of them and auto.
std::string method_help(bool lists);
// method_help describes --method; method lists are allowed when `lists` is true.
void add_compute_options(CLI::App& app, ComputeOptions& o, const std::string& method_help, bool lists);

// --device: auto (GPU when present), cpu or gpu.
void add_device_option(CLI::App& app, std::string& device, const std::string& group);

}  // namespace dcsgrid::cli
