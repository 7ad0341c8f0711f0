#!/usr/bin/env python3
"""One map over MPI ranks: `mpirun -n N dcsgrid IN -o pot.h5` against the plain run, same session.

Cases (each run plainly first, the baseline, then under `mpirun -n N` for every N of --ranks):
  write   a few atoms on a large grid (cutoff, 3 Å): the compute is negligible, so the time is the
          HDF5 write: the serial writer (plain run) against every rank writing its planes of the
          one file through parallel HDF5; GB/s = map bytes / the run's write seconds
  direct, cutoff, msm   a water box (tools/waterbox.py --atoms ATOMS), each method alone
For each run: the --json report's seconds (total, compute, write: under mpirun, rank 0's, its write
time including its waits for the slower ranks of each round) and whether /potential equals the
baseline's bit for bit (h5py). Prints a table and writes it as JSON (--json).

usage: bench_mpi_map.py --dcsgrid BUILD/dcsgrid [--ranks 2,4] [--cases write,direct,cutoff,msm]
          [--atoms 100000] [--spacing 0.5] [--device cpu|gpu] [--work DIR] [--json OUT.json]
OpenMPI refuses root unless told: the allow-run-as-root settings are set for these runs only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MPIRUN = ["mpirun", "--oversubscribe"]
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def few_atoms(path):
    """Four charges inside a 160 Å box: a grid of about 10^8 points at 0.5 Å costs little to compute."""
    with open(path, "w") as f:
        for i, (x, y, z, q) in enumerate([(0, 0, 0, 1), (50, 0, 0, -1), (0, 50, 50, 0.5), (-50, -50, 50, -0.5)]):
            f.write("ATOM  %5d  C   MOL A   1    %8.3f%8.3f%8.3f %6.3f 1.700\n" % (i + 1, x, y, z, q))


def run(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (result.returncode, " ".join(command), result.stderr[-2000:]))
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dcsgrid", required=True)
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--cases", default="write,direct,cutoff,msm")
    parser.add_argument("--atoms", type=int, default=100000)
    parser.add_argument("--spacing", type=float, default=0.5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--work", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="bench-mpi-map-")
    os.makedirs(work, exist_ok=True)
    water = os.path.join(work, "water.pqr")
    if not os.path.exists(water):
        subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "waterbox.py"), "--atoms",
                        str(args.atoms), "-o", water], check=True, stdout=subprocess.DEVNULL)
    sparse = os.path.join(work, "few.pqr")
    few_atoms(sparse)
    cases = {
        "write": [sparse, "--method", "cutoff", "--cutoff", "3", "--center", "0", "0", "0", "--size", "230", "230", "230"],
        "direct": [water, "--method", "direct"],
        "cutoff": [water, "--method", "cutoff"],
        "msm": [water, "--method", "msm"],
    }
    env = dict(os.environ, **MPI_ENV)
    rows = []
    for case in args.cases.split(","):
        job = cases[case] + ["--device", args.device, "--spacing", str(args.spacing), "--json", "-q"]
        base = os.path.join(work, case + "-plain.h5")
        launches = [("plain", [], base)] + [
            ("%s ranks" % n, MPIRUN + ["-n", n], os.path.join(work, "%s-%s.h5" % (case, n)))
            for n in args.ranks.split(",")]
        for label, launcher, out in launches:
            report = run(launcher + [args.dcsgrid] + job + ["-o", out], env)
            with h5py.File(base, "r") as a, h5py.File(out, "r") as b:
                same = bool(np.array_equal(a["potential"][:].view(np.uint32), b["potential"][:].view(np.uint32)))
                size = int(a["potential"].size) * 4
            s = report["seconds"]
            rows.append({"case": case, "run": label, "device": report["device"], "atoms": report["atoms"],
                         "points": size // 4, "total_s": s["total"], "compute_s": s["compute"],
                         "write_s": s["write"], "write_GBps": size / s["write"] / 1e9 if s["write"] > 0 else None,
                         "equal_to_plain": same})
            if out != base:
                os.remove(out)
        os.remove(base)
    print("| case | run | device | points | total s | compute s | write s | write GB/s | = plain |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print("| %s | %s | %s | %.3g | %.3f | %.3f | %.3f | %s | %s |" % (
            r["case"], r["run"], r["device"], r["points"], r["total_s"], r["compute_s"], r["write_s"],
            "%.2f" % r["write_GBps"] if r["write_GBps"] else "-", "yes" if r["equal_to_plain"] else "NO"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
