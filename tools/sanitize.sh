#!/usr/bin/env bash
# Builds the ASan + UBSan configuration (CMake preset `asan`: build-asan, RelWithDebInfo, CPU
# backends only, no Python module) and runs the whole ctest suite under it.
#
#   tools/sanitize.sh [ctest arguments for the first pass, e.g. -R IoRead]
#
# UBSan stops at the first report (-fno-sanitize-recover=undefined), so a test with undefined
# behaviour fails. LeakSanitizer is on (detect_leaks=1): the readers, the batch pipeline and the
# Python module's code run long in one process, where a leak per file or frame adds up; it
# reports only memory no pointer reaches at exit, so libraries' global caches (HDF5, OpenMP)
# do not count. The Python module is left out: loading an ASan library into an uninstrumented
# interpreter needs the runtime preloaded, and the module's C++ is the app layer the suite
# already runs.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset asan >/dev/null
ninja -C build-asan -j2
asan=abort_on_error=1:check_initialization_order=1:strict_init_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan.supp
# Under mpirun, OpenMPI's run-time keeps allocations to the end through frames LeakSanitizer
# cannot name: the MPI tests run with ASan and UBSan but without the leak check.
status=0
ASAN_OPTIONS=detect_leaks=1:$asan ctest --test-dir build-asan --output-on-failure --parallel 2 \
  --timeout 1800 -E '^CliMpi\.' "$@" || status=1
ASAN_OPTIONS=detect_leaks=0:$asan ctest --test-dir build-asan --output-on-failure --parallel 2 \
  --timeout 1800 -R '^CliMpi\.' || status=1
exit $status
