#!/usr/bin/env python3
"""A batch over MPI ranks: `mpirun -n N dcsgrid batch TOP TRAJ -o frames.h5` against the plain run, same session.

Cases (each run plainly first, the baseline, then under `mpirun -n N` for every N of --ranks):
  trajectory  1HPV (data/1hpv_pdb2pqr_amber.pqr.gz, 3,368 atoms) and a DCD of --frames frames of it
              jiggled by 0.3 Å (made by bench_batch_trajectory.py's writer), on batch's own 1 Å grid
  write       four charges on a --write-dims³ grid at 0.5 Å (cutoff, 3 Å, --no-stats), --write-frames
              frames: the compute is small (negligible on a GPU), so the pipeline is mostly the write
              of /potential: the serial writer (plain run) against every rank writing its frames into
              the one file through parallel HDF5; the write share says how write-bound it was, and
              write GB/s (bytes / write busy seconds) compares the writers where it was not
For each run: the process's wall seconds (mpirun's start-up included), frames/s over the wall time
and over batch's pipeline (its --json report; under mpirun the slowest rank's), the speed-up of the
wall time against the plain run, the stage split of the report (the busy share of read, compute and
write: under mpirun the mean over the ranks), GB/s = bytes of /potential / pipeline seconds (out)
and / the write busy seconds (write = write share × pipeline: under mpirun the mean rank's, whose
writes overlap the others'), and whether /potential equals the plain run's bit for bit (h5py).
Prints a table and writes it as JSON (--json).

usage: bench_mpi_batch.py --dcsgrid BUILD/dcsgrid [--ranks 1,2,4] [--cases trajectory,write]
          [--frames 2000] [--write-frames 32] [--write-dims 256] [--device cpu|gpu] [--work DIR]
          [--json OUT.json]
OpenMPI refuses root unless told: the allow-run-as-root settings are set for these runs only.
mpirun binds each rank to one core when N <= 2 (then a rank's OpenMP sees one core), so the ranks
run with --bind-to none and share the cores as dcsgrid divides them (cores / ranks per node).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_batch_trajectory import prepare_trajectory  # noqa: E402
from bench_mpi_map import MPI_ENV, MPIRUN, few_atoms  # noqa: E402

LAUNCH = MPIRUN + ["--bind-to", "none"]


def run(command, env):
    t0 = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if result.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (result.returncode, " ".join(command), result.stderr[-2000:]))
    report = json.loads(result.stdout)
    if report["computed"] != report["frames"] or report["failed"]:
        sys.exit("%s: %d of %d frames computed, %d failed" % (" ".join(command), report["computed"],
                                                             report["frames"], report["failed"]))
    return report, wall


def potential_bytes_and_equal(base, out):
    """Bytes of /potential, and whether it equals the baseline's bit for bit (read in ~256 MB blocks)."""
    with h5py.File(base, "r") as a, h5py.File(out, "r") as b:
        pa, pb = a["potential"], b["potential"]
        size = int(pa.size) * pa.dtype.itemsize
        if pa.shape != pb.shape or pa.dtype != pb.dtype:
            return size, False
        step = max(1, (256 << 20) // (size // pa.shape[0]))
        for i in range(0, pa.shape[0], step):
            if not np.array_equal(pa[i:i + step].view(np.uint8), pb[i:i + step].view(np.uint8)):
                return size, False
        return size, True


def cases_of(args, work):
    """case: (topology, trajectory, batch arguments); the inputs are made once and reused by --work."""
    made = {}
    for case in args.cases.split(","):
        folder = os.path.join(work, case)
        os.makedirs(folder, exist_ok=True)
        if case == "trajectory":
            top, dcd, _ = prepare_trajectory(folder, args.protein, args.frames)
            made[case] = (top, dcd, ["--spacing", "1"])
        elif case == "write":
            four = os.path.join(folder, "four.pqr")
            few_atoms(four)
            top, dcd, _ = prepare_trajectory(folder, four, args.write_frames)
            d, corner = args.write_dims, "%g" % (-0.25 * (args.write_dims - 1))
            made[case] = (top, dcd, ["--spacing", "0.5", "--origin", corner, corner, corner, "--dims",
                                     str(d), str(d), str(d), "--method", "cutoff", "--cutoff", "3", "--no-stats"])
        else:
            sys.exit("unknown case %s (trajectory, write)" % case)
    return made


def measure(args, work):
    env = dict(os.environ, **MPI_ENV)
    rows = []
    for case, (top, dcd, extra) in cases_of(args, work).items():
        job = ["batch", top, dcd] + extra + ["--device", args.device, "--json", "-q", "--overwrite"]
        base = os.path.join(work, case, "plain.h5")
        launches = [("plain", [], base)] + [
            ("mpirun -n %s" % n, LAUNCH + ["-n", n], os.path.join(work, case, "ranks-%s.h5" % n))
            for n in args.ranks.split(",")]
        plain_wall = None
        for label, launcher, out in launches:
            report, wall = run(launcher + [args.dcsgrid] + job + ["-o", out], env)
            plain_wall = plain_wall or wall
            size, same = potential_bytes_and_equal(base, out)
            pipeline, share = report["seconds"]["pipeline"], report["stage_busy_share"]
            write_s = share["write"] * pipeline
            rows.append({"case": case, "run": label, "device": report["device"], "frames": report["computed"],
                         "grid_dims": report["grid"]["dims"], "wall_s": wall, "scan_s": report["seconds"]["scan"],
                         "pipeline_s": pipeline, "frames_per_s_wall": report["computed"] / wall,
                         "frames_per_s_pipeline": report["frames_per_second"], "speedup_wall": plain_wall / wall,
                         "read_share": share["read"], "compute_share": share["compute"],
                         "write_share": share["write"], "potential_bytes": size,
                         "out_GBps": size / pipeline / 1e9 if pipeline > 0 else None,
                         "write_GBps": size / write_s / 1e9 if write_s > 0 else None,
                         "equal_to_plain": same if out != base else None})
            if out != base:
                os.remove(out)
        os.remove(base)
    return rows


def print_table(rows):
    print("| case | run | device | frames | wall s | pipeline s | frames/s wall | frames/s pipeline | speed-up |"
          " read/compute/write | out GB/s | write GB/s | = plain |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|")
    gbps = lambda v: "%.2f" % v if v else "-"  # noqa: E731
    for r in rows:
        print("| %s | %s | %s | %d | %.2f | %.2f | %.1f | %.1f | %.2f | %.2f/%.2f/%.2f | %s | %s | %s |" % (
            r["case"], r["run"], r["device"], r["frames"], r["wall_s"], r["pipeline_s"], r["frames_per_s_wall"],
            r["frames_per_s_pipeline"], r["speedup_wall"], r["read_share"], r["compute_share"], r["write_share"],
            gbps(r["out_GBps"]), gbps(r["write_GBps"]), {None: "baseline", True: "yes", False: "NO"}[r["equal_to_plain"]]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dcsgrid", required=True)
    parser.add_argument("--ranks", default="1,2,4")
    parser.add_argument("--cases", default="trajectory,write")
    parser.add_argument("--protein", default=os.path.join(HERE, "..", "data", "1hpv_pdb2pqr_amber.pqr.gz"))
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--write-frames", type=int, default=32)
    parser.add_argument("--write-dims", type=int, default=256, help="points along each axis of the write case")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--work", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="bench-mpi-batch-")
    os.makedirs(work, exist_ok=True)
    rows = measure(args, work)
    print_table(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "bench_mpi_batch", "ranks": args.ranks, "device": args.device, "rows": rows},
                      f, indent=1)


if __name__ == "__main__":
    main()
