// dcsgrid's entry point: dispatches to a command and turns errors into messages and exit codes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "dcsgrid/app/mpi_context.hpp"
#include "dcsgrid/cli/commands.hpp"
#include "dcsgrid/core/error.hpp"
#include "dcsgrid/io/files/atomic_file.hpp"

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
    {"convert", dcsgrid::cli::convert_command},
    {"surface", dcsgrid::cli::surface_command},
};

// The CUDA driver opens CUDA_DEVICE_MAX_CONNECTIONS hardware work queues per context (8 unless
// set), and creating and destroying them is most of a short run's context cost. Our backend
// keeps two streams busy per device (kernels and copies), so two queues lose no overlap. A value
// the user set wins; set before MPI or CUDA start, while this process has one thread.
void prefer_two_cuda_queues() { setenv("CUDA_DEVICE_MAX_CONNECTIONS", "2", 0); }

int run(int argc, char** argv) {
  dcsgrid::io::remove_temporaries_on_signals();
  if (argc > 1)
    for (const Command& c : kCommands)
      if (std::strcmp(argv[1], c.name) == 0) {
        if (dcsgrid::app::mpi::size() > 1 && std::strcmp(c.name, "batch") != 0)
          throw dcsgrid::Error(std::string("under mpirun with more than one rank, only the main job "
                                           "and 'dcsgrid batch' share their work out; run '") +
                               c.name + "' without mpirun");  // every rank would write the same outputs
        return c.run(argc - 1, argv + 1);
      }
  return dcsgrid::cli::main_job(argc, argv);
}

// Under mpirun with several ranks, a message names its rank.
std::string rank_label() {
  namespace mpi = dcsgrid::app::mpi;
  return mpi::size() > 1 ? " (rank " + std::to_string(mpi::rank()) + ")" : "";
}

// An error message as the terminal receives it: no control bytes, whatever names or file content
// it echoes (the readers cut what they quote; this bound is the last resort).
void print_error(const char* kind, const char* message) {
  std::fprintf(stderr, "dcsgrid: %s%s: %s\n", kind, rank_label().c_str(),
               dcsgrid::printable(message, dcsgrid::kMaxMessageBytes).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  namespace mpi = dcsgrid::app::mpi;
  prefer_two_cuda_queues();
  mpi::start();  // only when mpirun launched this process
  try {
    const int status = run(argc, argv);
    mpi::finish();
    return status;
  } catch (const dcsgrid::Error& e) {
    print_error("error", e.what());
  } catch (const std::bad_alloc&) {
    print_error("error", "out of memory");
  } catch (const std::exception& e) {
    print_error("internal error", e.what());
  }
  mpi::abort_job(1);  // the other ranks may be waiting for this one
  mpi::finish();
  return 1;
}
