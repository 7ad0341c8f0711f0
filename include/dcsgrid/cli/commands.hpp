// The dcsgrid commands. Each parses its own arguments (argv[0] is the command's name) and returns
// the process exit status; errors the user can fix are printed and give 1, usage errors 2.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dcsgrid::cli {

int main_job(int argc, char** argv);      // dcsgrid INPUT -o OUT [options]
int info_command(int argc, char** argv);  // dcsgrid info FILE.h5
int compare_command(int argc, char** argv);     // dcsgrid compare REFERENCE.h5 TEST.h5
int batch_command(int argc, char** argv);       // dcsgrid batch INPUTS... -o FRAMES.h5
int merge_command(int argc, char** argv);       // dcsgrid merge PARTS... -o FRAMES.h5
int sample_command(int argc, char** argv);      // dcsgrid sample MAP.h5 POINTS
int similarity_command(int argc, char** argv);  // dcsgrid similarity MAPS...
int convert_command(int argc, char** argv);     // dcsgrid convert STRUCTURE -o ATOMS.pqr
int surface_command(int argc, char** argv);     // dcsgrid surface STRUCTURE [MAP] -o OUT

// Parses argv into app, then runs `after` (further checks that may throw CLI::ParseError). Returns
// the exit status when the command stops here: 0 after --help/--version, 2 for a usage error
// (message and hint printed); nullopt when the command goes on.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv,
                                      const std::function<void()>& after = {});

// Sets spdlog's level from -v (count) and -q, and its pattern ("dcsgrid: warning: ...").
void setup_logging(int verbose, bool quiet);
// The command line as one shell-quoted string, for provenance.
std::string joined_command_line(int argc, char** argv);

}  // namespace dcsgrid::cli
