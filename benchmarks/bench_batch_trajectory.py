#!/usr/bin/env python3
"""A long MD trajectory through `dcsgrid batch`: frames/s and the stage split.

Writes a CHARMM-flavour DCD (little-endian, 4-byte record markers, from the format's published
layout) of FRAMES frames of a protein jiggled by 0.3 Å per coordinate, with a PQR of the protein as
the topology, then runs the trajectory through `dcsgrid batch --spacing 1 --json` in WINDOWS
consecutive windows of frames, one batch command each:
  dcsgrid batch PROTEIN.pqr TRAJ.dcd -o window_K.h5 --frames START:STOP --spacing 1 --json
Each window's batch file is deleted once its figures are taken, so a trajectory whose maps would
not fit on the disk at once (10^5 frames of 1HPV on a 1 Å grid: 139 GB) still runs. Prints, per
window and overall, frames/s and the busy share of the read, compute and write stages as batch's
own --json reports them, as a table and JSON.

Grid (--grid): `union` lets each window's batch make its grid around the union of its frames'
boxes (its own first pass); `first` passes --grid-from-first; `box` (the default with several
windows) passes the whole trajectory's box, known from writing it, as --origin/--dims, so that
every window computes on the same grid, as one batch over all frames would.

The DCD and its description (traj.json: frames, atoms, seed, box) stay in --work and are reused
by a later call with the same --work, --protein and --frames, so the windows can run in separate
commands (--only 0,1 then --only 2,3): rows already in the --json file from such earlier calls on
the same trajectory are kept, and the overall line covers every window measured.

usage: bench_batch_trajectory.py --dcsgrid BUILD/dcsgrid [--protein data/1hpv_pdb2pqr_amber.pqr.gz]
          [--frames 10000] [--windows 1] [--only K,...] [--grid union|first|box] [--work DIR]
          [--json OUT.json] [--delete-dcd]
"""
import argparse
import gzip
import hashlib
import json
import math
import os
import shutil
import subprocess
import tempfile
import time

import numpy as np

SPACING = 1.0   # Å
PADDING = 10.0  # Å, batch's default
CHUNK = 256     # frames generated at once


def read_pqr(path):
    opener = gzip.open if path.endswith(".gz") else open
    xyz, lines = [], []
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith(("ATOM", "HETATM")):
                fields = line.split()
                xyz.append([float(v) for v in fields[-5:-2]])
                lines.append(line)
    return np.asarray(xyz), lines


def record(payload):
    """One Fortran unformatted record: 4-byte length, payload, the length again."""
    n = len(payload).to_bytes(4, "little")
    return n + payload + n


def write_dcd(path, reference, frames, seed=1):
    """Writes the DCD; returns the lowest and highest coordinate over all frames (float32 values)."""
    n = len(reference)
    icntrl = [frames, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 24]  # 20 ints, CHARMM 24
    header = (b"CORD" + np.asarray(icntrl[:9], "<i4").tobytes() + np.asarray([0.002], "<f4").tobytes()
              + np.asarray(icntrl[10:], "<i4").tobytes())
    title = np.asarray([1], "<i4").tobytes() + b"dcsgrid benchmark trajectory".ljust(80)
    rng = np.random.default_rng(seed)
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    with open(path, "wb") as f:
        f.write(record(header) + record(title) + record(np.asarray([n], "<i4").tobytes()))
        for first in range(0, frames, CHUNK):
            count = min(CHUNK, frames - first)
            xyz = (reference + rng.normal(scale=0.3, size=(count,) + reference.shape)).astype("<f4")
            lo = np.minimum(lo, xyz.min(axis=(0, 1)))
            hi = np.maximum(hi, xyz.max(axis=(0, 1)))
            # Each frame: three records (x, y, z), each a marker, n floats, the marker again.
            records = np.empty((count, 3, n + 2), "<i4")
            records[:, :, 0] = records[:, :, -1] = 4 * n
            records[:, :, 1:-1] = xyz.transpose(0, 2, 1).view("<i4")
            f.write(records.tobytes())
    return lo.tolist(), hi.tolist()


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def prepare_trajectory(work, protein, frames):
    """The topology and the DCD in `work`, reused when traj.json says they are these."""
    reference, lines = read_pqr(protein)
    topology = os.path.join(work, "protein.pqr")
    dcd = os.path.join(work, "traj.dcd")
    meta_path = os.path.join(work, "traj.json")
    wanted = {"protein_sha256": sha256_of(protein), "frames": frames, "atoms": len(reference), "seed": 1,
              "dcd_bytes": 196 + frames * 3 * (4 * len(reference) + 8)}
    if os.path.exists(meta_path) and os.path.exists(dcd) and os.path.exists(topology):
        with open(meta_path) as f:
            meta = json.load(f)
        if all(meta.get(k) == v for k, v in wanted.items()) and os.path.getsize(dcd) == wanted["dcd_bytes"]:
            print("reusing %s (%d frames, %.2f GB)" % (dcd, frames, os.path.getsize(dcd) / 1e9))
            return topology, dcd, meta
    with open(topology, "w") as f:
        f.writelines(lines)
    t0 = time.perf_counter()
    lo, hi = write_dcd(dcd, reference, frames)
    meta = dict(wanted, box_lo=lo, box_hi=hi, written_s=time.perf_counter() - t0)
    if os.path.getsize(dcd) != wanted["dcd_bytes"]:
        raise SystemExit("%s: %d bytes written, %d expected" % (dcd, os.path.getsize(dcd), wanted["dcd_bytes"]))
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)
    print("wrote %s: %d frames of %d atoms, %.2f GB in %.1f s" % (
        dcd, frames, len(reference), os.path.getsize(dcd) / 1e9, meta["written_s"]))
    return topology, dcd, meta


def grid_arguments(mode, meta):
    if mode == "union":
        return ["--spacing", str(SPACING)]
    if mode == "first":
        return ["--spacing", str(SPACING), "--grid-from-first"]
    # The whole trajectory's box plus the padding, on the lattice through 0 (as batch's own grid).
    first = [math.floor((lo - PADDING) / SPACING) for lo in meta["box_lo"]]
    last = [math.ceil((hi + PADDING) / SPACING) for hi in meta["box_hi"]]
    origin = ",".join("%g" % (f * SPACING) for f in first)
    dims = ",".join(str(l - f + 1) for f, l in zip(first, last))
    return ["--spacing", str(SPACING), "--origin", origin, "--dims", dims]


def windows_of(frames, count):
    """[start, stop) of `count` consecutive windows covering the frames, the first ones larger."""
    size, extra = divmod(frames, count)
    bounds, start = [], 0
    for k in range(count):
        stop = start + size + (1 if k < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def run_window(a, k, start, stop, topology, dcd, grid_args, dims_hint):
    out = os.path.join(a.work, "window_%d.h5" % k)
    free = shutil.disk_usage(a.work).free
    if dims_hint and free < (stop - start) * dims_hint * 4 * 1.02:
        raise SystemExit("window %d: %d frames of %d points need %.1f GB, the disk has %.1f GB free; "
                         "use more --windows" % (k, stop - start, dims_hint, (stop - start) * dims_hint * 4e-9,
                                                 free / 1e9))
    command = [a.dcsgrid, "batch", topology, dcd, "-o", out, "--frames", "%d:%d" % (start, stop),
               "--json", "-q", "--overwrite"] + grid_args
    print("window %d: %s" % (k, " ".join(command)), flush=True)
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit("window %d: dcsgrid batch failed (status %d): %s" % (k, done.returncode, done.stderr[-2000:]))
    r = json.loads(done.stdout)
    share = r["stage_busy_share"]
    row = {"window": k, "first_frame": start, "frames": r["frames"], "computed": r["computed"],
           "grid_dims": r["grid"]["dims"], "batch_file_GB": os.path.getsize(out) / 1e9, "process_s": wall,
           "scan_s": r["seconds"]["scan"], "pipeline_s": r["seconds"]["pipeline"],
           "frames_per_s": r["frames_per_second"], "read_share": share["read"],
           "compute_share": share["compute"], "write_share": share["write"],
           "engine_kernels_s": r["engine_seconds"]["kernels"], "device": r["device"]}
    if row["computed"] != stop - start:
        raise SystemExit("window %d: %d frames computed of %d" % (k, row["computed"], stop - start))
    os.remove(out)
    return row


def overall(rows):
    pipeline = sum(r["pipeline_s"] for r in rows)
    frames = sum(r["computed"] for r in rows)
    busy = {s: sum(r[s + "_share"] * r["pipeline_s"] for r in rows) / pipeline for s in ("read", "compute", "write")}
    return {"windows": len(rows), "frames": frames, "process_s": sum(r["process_s"] for r in rows),
            "scan_s": sum(r["scan_s"] for r in rows), "pipeline_s": pipeline,
            "frames_per_s": frames / pipeline,
            "frames_per_s_whole_process": frames / sum(r["process_s"] for r in rows),
            "read_share": busy["read"], "compute_share": busy["compute"], "write_share": busy["write"],
            "batch_file_GB": sum(r["batch_file_GB"] for r in rows),
            "slowest_stage": max(busy, key=busy.get)}


def print_table(rows, total):
    head = "%7s %9s %7s %9s %8s %10s %10s %6s %8s %6s  %s"
    print(head % ("window", "first", "frames", "file GB", "scan s", "pipeline s", "frames/s", "read",
                  "compute", "write", "device"))
    line = "%7s %9s %7d %9.1f %8.1f %10.1f %10.1f %6.2f %8.2f %6.2f  %s"
    for r in rows:
        print(line % (r["window"], r["first_frame"], r["computed"], r["batch_file_GB"], r["scan_s"],
                      r["pipeline_s"], r["frames_per_s"], r["read_share"], r["compute_share"],
                      r["write_share"], r["device"]))
    print(line % ("all", "", total["frames"], total["batch_file_GB"], total["scan_s"], total["pipeline_s"],
                  total["frames_per_s"], total["read_share"], total["compute_share"], total["write_share"],
                  "slowest stage: " + total["slowest_stage"]))
    print("whole processes (scan + pipeline + start-up): %.1f s, %.1f frames/s" % (
        total["process_s"], total["frames_per_s_whole_process"]))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dcsgrid", required=True)
    p.add_argument("--protein", default="data/1hpv_pdb2pqr_amber.pqr.gz")
    p.add_argument("--frames", type=int, default=10000)
    p.add_argument("--windows", type=int, default=1, help="consecutive --frames windows, a batch command each")
    p.add_argument("--only", default="", help="comma-separated window numbers to run now (default: all)")
    p.add_argument("--grid", choices=["union", "first", "box"], default=None,
                   help="default: union for one window, box for several")
    p.add_argument("--work", default="")
    p.add_argument("--json", default="bench_batch_trajectory.json")
    p.add_argument("--delete-dcd", action="store_true", help="remove the DCD at the end (default: keep it)")
    a = p.parse_args()
    if a.windows < 1 or a.windows > a.frames:
        raise SystemExit("--windows must be between 1 and --frames")
    a.work = a.work or tempfile.mkdtemp(prefix="dcsgrid-traj-")
    os.makedirs(a.work, exist_ok=True)
    grid = a.grid or ("union" if a.windows == 1 else "box")
    topology, dcd, meta = prepare_trajectory(a.work, a.protein, a.frames)
    grid_args = grid_arguments(grid, meta)
    dims_hint = 0
    if grid == "box":
        dims = [int(v) for v in grid_args[grid_args.index("--dims") + 1].split(",")]
        dims_hint = dims[0] * dims[1] * dims[2]
    bounds = windows_of(a.frames, a.windows)
    chosen = [int(v) for v in a.only.split(",")] if a.only else list(range(a.windows))
    if any(not 0 <= k < a.windows for k in chosen):
        raise SystemExit("--only: windows are numbered 0 to %d" % (a.windows - 1))

    # Rows of earlier calls on this same trajectory and set-up are kept (windows run apart).
    setup = {"protein": os.path.basename(a.protein), "atoms": meta["atoms"], "frames": a.frames,
             "windows": a.windows, "grid": grid, "spacing": SPACING, "dcd_GB": meta["dcd_bytes"] / 1e9}
    rows = {}
    if os.path.exists(a.json):
        with open(a.json) as f:
            earlier = json.load(f)
        if earlier.get("setup") == setup:
            rows = {r["window"]: r for r in earlier.get("rows", [])}
    for k in chosen:
        start, stop = bounds[k]
        rows[k] = run_window(a, k, start, stop, topology, dcd, grid_args, dims_hint)
        with open(a.json, "w") as f:  # after every window: a later kill keeps what was measured
            json.dump({"benchmark": "bench_batch_trajectory", "setup": setup,
                       "rows": [rows[w] for w in sorted(rows)]}, f, indent=2)
    ordered = [rows[w] for w in sorted(rows)]
    total = overall(ordered)
    print_table(ordered, total)
    missing = [w for w in range(a.windows) if w not in rows]
    if missing:
        print("windows not measured yet: %s (overall covers the others)" % missing)
    with open(a.json, "w") as f:
        json.dump({"benchmark": "bench_batch_trajectory", "setup": setup, "rows": ordered, "overall": total,
                   "windows_missing": missing}, f, indent=2)
    print("(written %s)" % a.json)
    if a.delete_dcd:
        os.remove(dcd)


if __name__ == "__main__":
    main()
