#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "dcsgrid/app/mpi_context.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/core/error.hpp"

namespace dcsgrid::cli {
namespace {

// The %* flag: a message's text through printable(), so that names and file content a warning
// quotes reach the terminal without control bytes.
class PrintableText final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string text = printable({msg.payload.data(), msg.payload.size()}, kMaxMessageBytes);
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<PrintableText>();
  }
};

}  // namespace

void setup_logging(int verbose, bool quiet) {
  // Messages go to stderr so that stdout stays clean for --json.
  auto logger = spdlog::stderr_color_mt("dcsgrid");
  spdlog::set_default_logger(logger);
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<PrintableText>('*').set_pattern("%^dcsgrid: %l:%$ %*");
  spdlog::set_formatter(std::move(formatter));
  // Under mpirun, rank 0 informs and warns for the job (every rank reads the same inputs); the
  // other ranks report errors only.
  spdlog::set_level(app::mpi::rank() > 0 ? spdlog::level::err
                  : quiet ? spdlog::level::warn
                          : verbose >= 2 ? spdlog::level::trace
                          : verbose == 1 ? spdlog::level::debug
                                         : spdlog::level::info);
}

std::string joined_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    const bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    if (i) line += ' ';
    if (plain) {
      line += arg;
    } else {
      line += '\'';
      for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
      line += '\'';
    }
  }
  return line;
}

}  // namespace dcsgrid::cli
