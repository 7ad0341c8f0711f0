#!/usr/bin/env python3
"""dcsgrid's CPU Poisson–Boltzmann run against APBS on the same PQR, grid and settings (issue 31's
figure for the 2-core CI machine: at least 3x APBS).

For each input the grid is centred on the atoms' box; both programs solve APBS's usual problem
(lpbe, smol, spl2, mdh, pdie 2, sdie 78.54, 0.15 M 1:1 salt of radius 2 A, srad 1.4, sdens 10,
298.15 K) on one grid (mg-manual):
  apbs IN                    (no map written: calcenergy total)
  dcsgrid PQR -o OUT.h5 --method pb --preset apbs-pb --boundary mdh --origin .. --dims .. --device cpu
(the whole command, map written) with 1 and 2 threads. Best of REPEAT runs each; prints a table and
writes the rows as JSON.

usage: bench_pb_cpu_vs_apbs.py --dcsgrid BUILD/dcsgrid --data DATA_DIR [--repeat 2] [--json OUT.json]
The 1TII input keeps its ATOM records (the protein, 10,811 atoms): APBS's reader drops the waters
pdb2pqr writes as HETATM records with 5-digit serials (docs/pb.md).
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SETTINGS = """  bcfl mdh
  pdie 2
  sdie 78.54
  ion charge 1 conc 0.15 radius 2.0
  ion charge -1 conc 0.15 radius 2.0
  lpbe
  srfm smol
  chgm spl2
  sdens 10
  srad 1.4
  swin 0.3
  temp 298.15
  calcenergy total
  calcforce no
"""


def box_centre(pqr):
    points = [[float(line[30:38]), float(line[38:46]), float(line[46:54])]
              for line in open(pqr) if line.startswith(("ATOM", "HETATM"))]
    return [(min(p[d] for p in points) + max(p[d] for p in points)) / 2 for d in range(3)]


def timed(command, cwd):
    start = time.perf_counter()
    subprocess.run(command, shell=True, check=True, cwd=cwd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def apbs_seconds(pqr, dims, spacing, centre, work):
    with open(os.path.join(work, "apbs.in"), "w") as f:
        f.write(f"read\n  mol pqr {pqr}\nend\nelec name pb\n  mg-manual\n"
                f"  dime {dims[0]} {dims[1]} {dims[2]}\n  grid {spacing} {spacing} {spacing}\n"
                f"  gcent {centre[0]} {centre[1]} {centre[2]}\n  mol 1\n{SETTINGS}end\nquit\n")
    return timed("apbs apbs.in", work)


def dcsgrid_seconds(binary, pqr, dims, spacing, centre, threads, work):
    origin = ",".join(str(centre[d] - 0.5 * spacing * (dims[d] - 1)) for d in range(3))
    return timed(f"{binary} {pqr} -o pb.h5 --method pb --preset apbs-pb --boundary mdh --origin {origin} "
                 f"--dims {dims[0]},{dims[1]},{dims[2]} --spacing {spacing} --device cpu --threads {threads} -q",
                 work)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dcsgrid", required=True)
    ap.add_argument("--data", required=True, help="the repository's data/ folder")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", default="pb_cpu_vs_apbs.json")
    args = ap.parse_args()
    if not shutil.which("apbs"):
        sys.exit("bench_pb_cpu_vs_apbs: apbs is not on PATH (Debian: apt-get install apbs)")
    binary = os.path.abspath(args.dcsgrid)
    work = tempfile.mkdtemp(prefix="bench-pb-apbs-")
    protein = os.path.join(work, "1tii_protein.pqr")
    with gzip.open(os.path.join(args.data, "1tii_pdb2pqr_amber.pqr.gz"), "rt") as f, open(protein, "w") as out:
        out.writelines(line for line in f if line.startswith("ATOM"))
    inputs = [("1D7H (1,663 atoms), 97x65x65 at 0.75 A", os.path.abspath(os.path.join(args.data, "1d7h-min.pqr")),
               (97, 65, 65), 0.75),
              ("1TII protein (10,811 atoms), 129^3 at 0.75 A", protein, (129, 129, 129), 0.75)]
    rows = []
    print(f"{'input':46s} {'threads':>7s} {'APBS, s':>8s} {'dcsgrid, s':>10s} {'APBS / dcsgrid':>14s}")
    for name, pqr, dims, spacing in inputs:
        centre = box_centre(pqr)
        apbs = min(apbs_seconds(pqr, dims, spacing, centre, work) for _ in range(args.repeat))
        for threads in (1, 2):
            ours = min(dcsgrid_seconds(binary, pqr, dims, spacing, centre, threads, work)
                       for _ in range(args.repeat))
            rows.append({"input": name, "threads": threads, "apbs_seconds": apbs, "dcsgrid_seconds": ours,
                         "ratio": apbs / ours})
            print(f"{name:46s} {threads:7d} {apbs:8.2f} {ours:10.2f} {apbs / ours:14.1f}", flush=True)
    with open(args.json, "w") as f:
        json.dump({"host_cpus": os.cpu_count(), "load_average": os.getloadavg(), "rows": rows}, f, indent=1)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
