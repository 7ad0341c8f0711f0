// dcsgrid's entry point: dispatches to a command and turns errors into messages and exit codes.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/atomic_file.hpp"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
};

constexpr Command kCommands[] = {
    {"info", dcsgrid::cli::info_command},
    {"compare", dcsgrid::cli::compare_command},
    {"batch", dcsgrid::cli::batch_command},
    {"merge", dcsgrid::cli::merge_command},
    {"sample", dcsgrid::cli::sample_command},
    {"similarity", dcsgrid::cli::similarity_command},
};

}  // namespace

int main(int argc, char** argv) {
  try {
    dcsgrid::io::remove_temporaries_on_signals();
    if (argc > 1)
      for (const Command& c : kCommands)
        if (std::strcmp(argv[1], c.name) == 0) return c.run(argc - 1, argv + 1);
    return dcsgrid::cli::main_job(argc, argv);
  } catch (const dcsgrid::Error& e) {
    std::fprintf(stderr, "dcsgrid: error: %s\n", e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "dcsgrid: error: out of memory\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dcsgrid: internal error: %s\n", e.what());
  }
  return 1;
}
