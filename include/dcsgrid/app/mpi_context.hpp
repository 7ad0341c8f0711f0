// The MPI job this process belongs to, if any. MPI starts only in a process that mpirun (or srun)
// launched, in a build with MPI: a plain `dcsgrid` run never calls MPI_Init and behaves as in a
// build without MPI.
#pragma once

namespace dcsgrid::app::mpi {

// True when started by mpirun/srun: OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK is set.
bool launched_by_mpirun();
// Starts MPI when this build has it and mpirun launched this process; otherwise does nothing.
void start();
// Ends MPI when start() started it (every rank calls it, at the end of main).
void finish();
// True between start() and finish() when MPI is running.
bool active();
// This process in the job: rank and ranks of the world, and of its node (0 and 1 without MPI).
int rank();
int size();
int local_rank();
int local_size();
// After an error on this rank: ends every rank of the job (MPI_Abort) with `status`, so that no
// rank waits for this one; returns at once when MPI is not running.
void abort_job(int status);

}  // namespace dcsgrid::app::mpi
