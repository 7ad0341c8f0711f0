#!/usr/bin/env bash
# Copies this machine's APBS (Debian's `apbs`) and the libraries it needs that the GPU machine lacks
# into .apbs/ (ignored by git through .git/info/exclude, about 17 MB), so that bench_pb and the APBS
# tests can time APBS in the same run as the GPU. Name .apbs in the device run's carry list and, on
# the GPU machine:
#   export PATH=$PWD/.apbs/bin:$PATH LD_LIBRARY_PATH=$PWD/.apbs/lib \
#          OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The C and C++ runtimes and OpenMPI's libraries are left out: the GPU machine's own are used.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
apbs=$(command -v apbs) || { echo "carry-apbs: apbs is not installed (apt-get install apbs)" >&2; exit 1; }
grep -qx '/.apbs/' .git/info/exclude 2>/dev/null || echo '/.apbs/' >> .git/info/exclude
rm -rf .apbs && mkdir -p .apbs/bin .apbs/lib
cp "$(readlink -f "$apbs")" .apbs/bin/apbs
ldd "$apbs" | awk '/=>/ {print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so*|libm.so*|libstdc++*|libgcc_s*|libpthread*|libdl*|librt*|libmpi.so*|libopen-rte*|libopen-pal*|\
    libhwloc*|libevent*|libudev*|libz.so*) ;;
    *) cp -L "$lib" .apbs/lib/ ;;
  esac
done
du -sh .apbs
