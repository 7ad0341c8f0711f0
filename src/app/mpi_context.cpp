// MPI start and end, and the job's ranks (the only place that calls MPI_Init).
#include "dcsgrid/app/mpi_context.hpp"

#include <cstdlib>
#include <initializer_list>

#ifdef DCSGRID_HAVE_MPI
#include <mpi.h>
#endif

namespace dcsgrid::app::mpi {

namespace {

struct World {
  bool active = false;
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
};
World g_world;

}  // namespace

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

bool active() { return g_world.active; }
int rank() { return g_world.rank; }
int size() { return g_world.size; }
int local_rank() { return g_world.local_rank; }
int local_size() { return g_world.local_size; }

#ifdef DCSGRID_HAVE_MPI

void start() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized || !launched_by_mpirun()) return;
  // Serialized: the batch pipeline calls MPI from its reader and writer threads, never at once
  // (both under the HDF5 library lock).
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  g_world.active = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_world.size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_world.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &g_world.local_rank);
  MPI_Comm_size(node, &g_world.local_size);
  MPI_Comm_free(&node);
}

void finish() {
  if (!g_world.active) return;
  MPI_Finalize();
  g_world = World{};
}

void abort_job(int status) {
  if (g_world.active && g_world.size > 1) MPI_Abort(MPI_COMM_WORLD, status);
}

#else

void start() {}
void finish() {}
void abort_job(int) {}

#endif

}  // namespace dcsgrid::app::mpi
