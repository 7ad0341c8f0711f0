// The one bound on CPU thread teams, whoever asks: --threads, Python's threads=, OMP_NUM_THREADS.
// Past a few threads per hardware thread a team only adds switching (a 2 s batch took 116 s with
// 4096 threads on 2 cores), and at tens of thousands libgomp cannot create it and the process
// dies. Every OpenMP region takes its size from team_size(), so the bound holds on every thread,
// including threads that start from OpenMP's process-wide default.
#pragma once
#include <cstdint>
#include <string>

namespace dcsgrid {

inline constexpr int kThreadsPerHardwareThread = 4;

// kThreadsPerHardwareThread × the hardware threads this process may run on.
int max_threads();

// `requested` threads (> 0) within max_threads(); when it clamps, warns naming `source` (the
// option or keyword that asked) and saying what is used instead.
int bounded_threads(std::int64_t requested, const std::string& source);

// Sets the calling thread's OpenMP team size to bounded_threads(requested, source); 0 keeps
// OpenMP's default (itself bounded by team_size()).
void set_openmp_threads(std::int64_t requested, const std::string& source = "--threads");

// The size of an OpenMP team started on this thread: OpenMP's current default (omp_get_max_threads,
// from OMP_NUM_THREADS or set_openmp_threads) within max_threads(); warns once per process when
// the default is above the bound.
int team_size();

}  // namespace dcsgrid
