#!/usr/bin/env python3
"""Issue 30's averaged trajectory: `dcsgrid batch --average` of a periodic water box, frames/s and stages.

Writes a TIP3P water box of ATOMS atoms (tools/waterbox.py) as the topology and a CHARMM DCD of
FRAMES frames with a unit cell record per frame (the box's cubic cell), each frame the box with
every coordinate moved by a normal 0.3 Å (64 such displacements, cycled), then runs

  dcsgrid batch box.pqr traj.dcd -o mean.h5 --method pme [--smooth 0.25] --average --spacing 1 --json

for the smooth map (PMEpot's) and the full PME potential (with each --frame-workers asked), and
reports frames/s of the pipeline and
of the whole process with the busy share of the read, compute and write stages (batch's --json).
The write stage of --average is the float64 sums, not a file (on the GPU where the frames stayed
there: the JSON's maps_on_device). Baseline in the same run: the same
command writing every frame's map to a batch file (no --average) on the first BASELINE frames, and
the DCD's read rate alone (`dcsgrid info` is not a reader benchmark; the read share says it).
Target (issue 30, one H100): >= 500 frames/s for the whole 10,000-frame batch.

usage: bench_batch_average.py --dcsgrid BUILD/dcsgrid [--atoms 100200] [--frames 10000]
          [--baseline 500] [--frame-workers 0,2,4] [--maps smooth,full] [--work DIR]
          [--json OUT.json] [--device auto]
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SITE_DENSITY = 0.0334  # molecules/Å³, tools/waterbox.py's lattice
DISPLACEMENTS = 64


def record(payload):
    n = len(payload).to_bytes(4, "little")
    return n + payload + n


def read_pqr_xyz(path):
    xyz = []
    with open(path) as f:
        for line in f:
            if line.startswith(("ATOM", "HETATM")):
                xyz.append([float(v) for v in line.split()[-5:-2]])
    return np.asarray(xyz)


def write_dcd(path, reference, frames, edge, seed=1):
    """CHARMM DCD with a unit cell per frame (A, gamma, B, beta, alpha, C as doubles)."""
    n = len(reference)
    icntrl = [frames, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 24]  # [10] = 1: cell records
    header = (b"CORD" + np.asarray(icntrl[:9], "<i4").tobytes() + np.asarray([0.002], "<f4").tobytes()
              + np.asarray(icntrl[10:], "<i4").tobytes())
    title = np.asarray([1], "<i4").tobytes() + b"dcsgrid bench_batch_average".ljust(80)
    rng = np.random.default_rng(seed)
    cell = record(np.asarray([edge, 90, edge, 90, 90, edge], "<f8").tobytes())
    frame_bytes = []
    for _ in range(DISPLACEMENTS):
        xyz = (reference + rng.normal(scale=0.3, size=reference.shape)).astype("<f4")
        records = np.empty((3, n + 2), "<i4")
        records[:, 0] = records[:, -1] = 4 * n
        records[:, 1:-1] = xyz.T.view("<i4")
        frame_bytes.append(cell + records.tobytes())
    with open(path, "wb") as f:
        f.write(record(header) + record(title) + record(np.asarray([n], "<i4").tobytes()))
        for i in range(frames):
            f.write(frame_bytes[i % DISPLACEMENTS])


def run(command):
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (done.returncode, " ".join(command), done.stderr[-3000:]))
    return json.loads(done.stdout), wall


def row_of(name, frames, r, wall):
    share = r["stage_busy_share"]
    return {"run": name, "frames": r["computed"], "pipeline_s": r["seconds"]["pipeline"],
            "frames_per_s": r["frames_per_second"], "process_s": wall,
            "frames_per_s_whole_process": r["computed"] / wall, "read_share": share["read"],
            "compute_share": share["compute"], "write_share": share["write"],
            "engine_kernels_s": r["engine_seconds"]["kernels"], "device": r["device"],
            "maps_on_device": r.get("maps_on_device", False),
            "grid_dims": r["grid"]["dims"]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dcsgrid", required=True)
    p.add_argument("--atoms", type=int, default=100200)
    p.add_argument("--frames", type=int, default=10000)
    p.add_argument("--baseline", type=int, default=500, help="frames of the per-frame batch file run")
    p.add_argument("--device", default="auto")
    p.add_argument("--frame-workers", default="0",
                   help="comma-separated --frame-workers values to run --average with (0: batch's default)")
    p.add_argument("--maps", default="smooth,full", help="smooth (PMEpot's map), full (PME), or both")
    p.add_argument("--work", default="")
    p.add_argument("--json", default="bench_batch_average.json")
    a = p.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="bench_batch_average_")  # removed at the end unless given
    os.makedirs(work, exist_ok=True)
    pqr, dcd = os.path.join(work, "box.pqr"), os.path.join(work, "traj.dcd")
    subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "waterbox.py"), "--atoms", str(a.atoms),
                    "-o", pqr], check=True, capture_output=True)
    molecules = -(-a.atoms // 3)
    edge = math.ceil(round(molecules ** (1 / 3), 9)) * (1 / SITE_DENSITY) ** (1 / 3)
    t0 = time.perf_counter()
    write_dcd(dcd, read_pqr_xyz(pqr), a.frames, edge)
    print("wrote %s: %d frames, %.2f GB in %.1f s; cell %.3f Å" % (dcd, a.frames, os.path.getsize(dcd) / 1e9,
                                                                   time.perf_counter() - t0, edge))
    base = [a.dcsgrid, "batch", pqr, dcd, "--method", "pme", "--spacing", "1", "--device", a.device,
            "--json", "-q", "--overwrite"]
    rows = []
    maps = {"smooth": ("smooth 0.25", ["--smooth", "0.25"]), "full": ("full pme", [])}
    for name, extra in (maps[m] for m in a.maps.split(",")):
        for workers in a.frame_workers.split(","):
            out = os.path.join(work, "mean.h5")
            r, wall = run(base + extra + ["-o", out, "--average", "--frame-workers", workers])
            rows.append(row_of("%s, --average, %s workers" % (name, workers), a.frames, r, wall))
            os.remove(out)
        out = os.path.join(work, "frames.h5")
        r, wall = run(base + extra + ["-o", out, "--frames", "0:%d" % min(a.baseline, a.frames)])
        rows.append(row_of(name + ", batch file (baseline)", a.baseline, r, wall))
        os.remove(out)
    head = "%-40s %7s %10s %9s %10s %9s %6s %8s %6s  %s"
    print(head % ("run", "frames", "pipeline s", "frames/s", "process s", "proc f/s", "read", "compute", "write",
                  "device"))
    for r in rows:
        print("%-40s %7d %10.2f %9.1f %10.2f %9.1f %6.2f %8.2f %6.2f  %s" % (
            r["run"], r["frames"], r["pipeline_s"], r["frames_per_s"], r["process_s"],
            r["frames_per_s_whole_process"], r["read_share"], r["compute_share"], r["write_share"], r["device"]))
    report = {"benchmark": "bench_batch_average", "atoms": a.atoms, "frames": a.frames, "cell_edge": edge,
              "dcd_bytes": os.path.getsize(dcd), "target": "issue 30: >= 500 frames/s for the whole batch (one H100)",
              "rows": rows}
    with open(a.json, "w") as f:
        json.dump(report, f, indent=2)
    print("(written %s)" % a.json)
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)  # the DCD is gigabytes


if __name__ == "__main__":
    main()
