#include <CLI/CLI.hpp>

#include "dcsgrid/cli/commands.hpp"

namespace dcsgrid::cli {

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv,
                                      const std::function<void()>& after) {
  try {
    app.parse(argc, argv);
    if (after) after();
  } catch (const CLI::ParseError& e) {
    // CLI11's own failure codes are 100 and up; every dcsgrid usage error gives 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace dcsgrid::cli
