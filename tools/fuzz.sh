#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan + UBSan) in build-fuzz and runs them.
#
#   tools/fuzz.sh [--smoke] [--time SECONDS] [--runs N] [--jobs J] [--workers W] [--json FILE]
#                 [--prebuilt] [TARGET...]
#   tools/fuzz.sh --seeds-only            build the targets and the seed folders, run nothing
#   tools/fuzz.sh --report [TARGET...]    the table and JSON of the last run, from its logs
#
# TARGET: pqr pdb pdb_chunks mmcif pdbqt xyz mol2 psf prmtop dcd xtc trr netcdf dx ccp4 cube hdf5_map
# hdf5_batch, and the text reader: gz bz2 xz (compressed inputs, bombs) stream (a named pipe) (default: all). Each runs for SECONDS (default 60), or until N executions when only
# --runs is given (the first of the two limits when both are), J targets at a
# time (default 1; --smoke: one a core), on its corpus build-fuzz/corpus/TARGET (kept between runs, so later runs start
# from what earlier ones found) plus the seeds (build-fuzz/seeds/TARGET: data/ files, files
# written by our own writers and by MDAnalysis). --smoke: every target for 10 s (the README's test
# command runs it; missing clang packages are installed first). Findings land in
# build-fuzz/artifacts/TARGET/ (crash-*, timeout-*, oom-*, leak-*). Prints a table (target,
# executions, seconds, crashes, timeouts) and writes it as JSON (default
# build-fuzz/fuzz-results.json). Exit status 1 when any target found something.
# --workers W: each target in libFuzzer's fork mode with W processes (for machines with more cores
# than targets). --prebuilt: use build-fuzz/fuzz/fuzz_* and build-fuzz/seeds as they are (copied to a machine
# without clang, e.g. one with more cores; its loader must find the libraries they link).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$ROOT/build-fuzz
ALL_TARGETS=(pqr pdb pdb_chunks mmcif pdbqt xyz mol2 psf prmtop dcd xtc trr netcdf dx ccp4 cube hdf5_map hdf5_batch
             gz bz2 xz stream)

seconds=60 time_given=0 runs="" jobs="" workers=0 report_only=0 prebuilt=0 seeds_only=0
json=$BUILD/fuzz-results.json targets=() smoke=0
while (($#)); do
  case $1 in
    --smoke) seconds=10 smoke=1 ;;
    --time) seconds=$2; time_given=1; shift ;;
    --runs) runs=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --workers) workers=$2; shift ;;
    --json) json=$2; shift ;;
    --report) report_only=1 ;;
    --prebuilt) prebuilt=1 ;;
    --seeds-only) seeds_only=1 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
((${#targets[@]})) || targets=("${ALL_TARGETS[@]}")
[[ -n $jobs ]] || { ((smoke)) && jobs=$(nproc) || jobs=1; }

build() {
  "$ROOT/tools/install-packages.sh" clang libclang-rt-14-dev libomp-dev
  if [[ ! -f $BUILD/build.ninja ]]; then
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DDCSGRID_FUZZ=ON >/dev/null
  fi
  if ! ninja -C "$BUILD" -j"$(nproc)" fuzz_targets >"$BUILD/build.log" 2>&1; then
    grep -E "error|FAILED" -A5 "$BUILD/build.log" | head -40 >&2
    echo "fuzz.sh: the fuzz targets did not build (whole log: $BUILD/build.log)" >&2
    return 1
  fi
}

# Copies (decompressed) data files into a seed folder.
seed_data() {
  local dir=$1; shift
  local f
  for f in "$@"; do
    case $f in
      *.gz) gzip -dc "$ROOT/data/$f" >"$dir/$(basename "${f%.gz}")" ;;
      *) cp "$ROOT/data/$f" "$dir/" ;;
    esac
  done
}

tiny_mol2() {  # two molecules (poses), the second moved 3 Å along x
  local x
  for x in 0.0000 3.0000; do
    cat <<EOF
@<TRIPOS>MOLECULE
water at x = $x
3 2 1 0 0
SMALL
USER_CHARGES

@<TRIPOS>ATOM
      1 O1      $x    0.0000    0.1173 O.3     1  WAT1   -0.8340
      2 H1      $x    0.7572   -0.4692 H       1  WAT1    0.4170
      3 H2      $x   -0.7572   -0.4692 H       1  WAT1    0.4170
@<TRIPOS>BOND
1 1 2 1
2 1 3 1
EOF
  done
}

tiny_psf() {
  cat <<'EOF'
PSF

       1 !NTITLE
 REMARKS fuzz seed: one water

       3 !NATOM
       1 WAT  1    TIP3 OH2  OT    -0.834000       15.9994           0
       2 WAT  1    TIP3 H1   HT     0.417000        1.0080           0
       3 WAT  1    TIP3 H2   HT     0.417000        1.0080           0

       2 !NBOND: bonds
       1       2       1       3
EOF
}

tiny_prmtop() {
  cat <<'EOF'
%VERSION  VERSION_STAMP = V0001.000  DATE = 01/01/26  00:00:00
%FLAG TITLE
%FORMAT(20a4)
fuzz seed: one water
%FLAG POINTERS
%FORMAT(10I8)
       3       2       2       0       0       0       0       0       0       0
       5       1       0       0       0       0       0       0       0       0
       0       0       0       0       0       0       0       0       0       0
       0
%FLAG ATOM_NAME
%FORMAT(20a4)
O   H1  H2
%FLAG CHARGE
%FORMAT(5E16.8)
 -1.51973982E+01  7.59869910E+00  7.59869910E+00
%FLAG RESIDUE_LABEL
%FORMAT(20a4)
WAT
%FLAG RESIDUE_POINTER
%FORMAT(10I8)
       1
EOF
}

# Trajectories by MDAnalysis' writers and the tests' hand-made DCD/TRR variants (small: 4 atoms).
seed_trajectories() {
  local scratch=$BUILD/seeds/scratch mda=$ROOT/tests/test_io_trajectory_mda.py
  mkdir -p "$scratch"
  if ! /usr/bin/python3 -c 'import MDAnalysis' 2>/dev/null; then
    echo "fuzz.sh: MDAnalysis missing for /usr/bin/python3: trajectory targets start without seeds" >&2
    return
  fi
  local format
  for format in dcd xtc trr ncdf; do
    /usr/bin/python3 "$mda" write "$format" "$scratch/t.$format" 4 3 1 >/dev/null 2>&1 || true
  done
  /usr/bin/python3 "$mda" dcd "$scratch/xplor.dcd" 4 2 2 xplor '>' 8 >/dev/null 2>&1 || true
  /usr/bin/python3 "$mda" trr-mixed "$scratch/mixed.trr" 4 4 3 >/dev/null 2>&1 || true
  cp "$scratch"/t.dcd "$scratch"/xplor.dcd "$BUILD/seeds/dcd/" 2>/dev/null || true
  cp "$scratch"/t.xtc "$BUILD/seeds/xtc/" 2>/dev/null || true
  cp "$scratch"/t.trr "$scratch"/mixed.trr "$BUILD/seeds/trr/" 2>/dev/null || true
  cp "$scratch"/t.ncdf "$BUILD/seeds/netcdf/t.nc" 2>/dev/null || true
  rm -rf "$scratch"
}

make_seeds() {
  local s=$BUILD/seeds t
  rm -rf "$s"
  for t in "${ALL_TARGETS[@]}"; do mkdir -p "$s/$t" "$BUILD/corpus/$t" "$BUILD/artifacts/$t"; done
  seed_data "$s/pqr" 1d7h-min.pqr 1hpv_pdb2pqr_amber.pqr.gz
  gzip -c "$ROOT/data/1d7h-min.pqr" >"$s/pqr/1d7h-min.pqr.gz"  # the decompression path
  seed_data "$s/pdb" pept.pdb pept_3models.pdb 1a1p.pdb
  seed_data "$s/pdb_chunks" pept.pdb pept_3models.pdb 1a1p.pdb
  seed_data "$s/mmcif" pept_3models.cif 1hpv.cif.gz
  seed_data "$s/pdbqt" 1pgp_lig.pdbqt
  seed_data "$s/xyz" nacl_plain.xyz water_dimer_2frames.xyz
  tiny_mol2 >"$s/mol2/water.mol2"
  tiny_psf >"$s/psf/water.psf"
  tiny_prmtop >"$s/prmtop/water.prmtop"
  "$BUILD/fuzz/make_seeds" "$s/maps"
  cp "$s/maps/map.dx" "$s/dx/"
  cp "$s/maps/map.cube" "$s/cube/"
  cp "$s/maps/map.ccp4" "$s/maps/shifted.ccp4" "$s/ccp4/"
  cp "$s/maps/map.h5" "$s/maps/compressed.h5" "$s/maps/two_maps.h5" "$s/hdf5_map/"
  cp "$s/maps/batch.h5" "$s/maps/map.h5" "$s/hdf5_batch/"
  rm -rf "$s/maps"
  seed_trajectories
  seed_compressed
}

# The text reader: compressed texts and bombs (1 MiB of blanks, beyond the targets' 64 KiB input
# limit), and for the pipe a text, a compressed text and binary bytes.
seed_compressed() {
  local s=$BUILD/seeds tool ext
  for tool in gzip:gz bzip2:bz2 xz:xz; do
    ext=${tool#*:} tool=${tool%:*}
    command -v "$tool" >/dev/null || continue
    "$tool" -c "$ROOT/data/1d7h-min.pqr" >"$s/$ext/text.$ext"
    head -c $((1 << 20)) /dev/zero | tr '\0' ' ' | "$tool" -c >"$s/$ext/bomb.$ext"
  done
  cp "$ROOT/data/1d7h-min.pqr" "$s/stream/"
  gzip -c "$ROOT/data/1d7h-min.pqr" >"$s/stream/text.gz"
  head -c 512 "$ROOT/data/1tii.pdb.gz" >"$s/stream/binary"
}

# Inputs up to 16 KiB (two parallel pieces of the text readers); HDF5 files whole.
max_len() {
  case $1 in
    hdf5_*) echo 65536 ;;
    *) echo 16384 ;;
  esac
}

run_target() {
  local t=$1 log=$BUILD/logs/$1.log
  local limit=(-max_total_time="$seconds") outer=(timeout -s KILL $((seconds + 120)))
  if [[ -n $runs ]]; then
    limit=(-runs="$runs")
    if ((time_given)); then limit+=(-max_total_time="$seconds"); else outer=(); fi
  fi
  local start=$SECONDS
  touch "$BUILD/logs/$t.start"
  # Leaks are findings too (LeakSanitizer, except inside HDF5 and libnetcdf: fuzz/lsan.supp).
  # allocator_may_return_null: an absurd malloc fails as it does outside ASan (HDF5 then reports
  # an error); one over 2 GiB is a finding (-malloc_limit_mb), except inside libnetcdf, which
  # allocates what a corrupt header says (fuzz/regressions/open/netcdf). OpenMP on one thread,
  # as one core per target is what these machines spare.
  local malloc_limit=2048 keep_going=()
  [[ $t == netcdf ]] && malloc_limit=65536
  # The HDF5 and NetCDF targets meet hangs, allocations and memory errors inside the libraries
  # (fuzz/regressions/open): fork mode records each in artifacts/ and goes on.
  [[ $t == hdf5_* || $t == netcdf ]] &&
    keep_going=(-fork=1 -ignore_timeouts=1 -ignore_ooms=1 -ignore_crashes=1)
  if ((workers > 0)); then
    if ((${#keep_going[@]})); then keep_going[0]=-fork=$workers; else keep_going=(-fork="$workers"); fi
  fi
  # The outer limit ends a run whose fork-mode parent waits on a job hung inside a library.
  ASAN_OPTIONS=allocator_may_return_null=1 LSAN_OPTIONS=suppressions=$ROOT/fuzz/lsan.supp \
  OMP_NUM_THREADS=1 "${outer[@]}" "$BUILD/fuzz/fuzz_$t" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=$malloc_limit -max_len="$(max_len "$t")" -print_final_stats=1 "${keep_going[@]}" \
    -artifact_prefix="$BUILD/artifacts/$t/" "$BUILD/corpus/$t" "$BUILD/seeds/$t" >"$log" 2>&1 || true
  echo $((SECONDS - start)) >"$BUILD/logs/$t.seconds"
}

count_artifacts() {  # target, name patterns...: the findings of this run (newer than its start)
  local t=$1 n=0 p; shift
  for p in "$@"; do
    n=$((n + $(find "$BUILD/artifacts/$t" -name "$p" -newer "$BUILD/logs/$t.start" | wc -l)))
  done
  echo $n
}

report() {
  local t execs secs crashes timeouts rows=() bad=0
  printf '%-12s %12s %8s %8s %9s\n' target executions seconds crashes timeouts
  for t in "${targets[@]}"; do
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$BUILD/logs/$t.log" | tail -1)
    # fork mode prints no final stats: its last "#RUNS: cov: ..." line counts every job's runs
    [[ -n $execs ]] || execs=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$BUILD/logs/$t.log" | tail -1)
    secs=$(cat "$BUILD/logs/$t.seconds")
    crashes=$(count_artifacts "$t" 'crash-*' 'oom-*' 'leak-*')
    timeouts=$(count_artifacts "$t" 'timeout-*' 'slow-unit-*')
    if [[ -z $execs ]]; then execs=0; crashes=$((crashes > 0 ? crashes : 1)); fi  # died early
    ((crashes + timeouts == 0)) || bad=1
    printf '%-12s %12s %8s %8s %9s\n' "$t" "$execs" "$secs" "$crashes" "$timeouts"
    rows+=("{\"target\": \"$t\", \"executions\": $execs, \"seconds\": $secs, \"crashes\": $crashes, \"timeouts\": $timeouts}")
  done
  local IFS=,
  printf '{"date": "%s", "host": "%s", "results": [%s]}\n' "$(date -u +%FT%TZ)" "$(hostname)" \
    "${rows[*]}" >"$json"
  echo "JSON: $json; findings (if any): $BUILD/artifacts/TARGET/, logs: $BUILD/logs/"
  return $bad
}

((report_only)) && { report; exit; }
if ((!prebuilt)); then
  build
  make_seeds
fi
((seeds_only)) && exit 0
for t in "${targets[@]}"; do mkdir -p "$BUILD/corpus/$t" "$BUILD/artifacts/$t"; done
mkdir -p "$BUILD/logs"
running=0
for t in "${targets[@]}"; do
  [[ -x $BUILD/fuzz/fuzz_$t ]] || { echo "fuzz.sh: no target $t" >&2; exit 2; }
  run_target "$t" &
  running=$((running + 1))
  if ((running >= jobs)); then wait -n; running=$((running - 1)); fi
done
wait
report
